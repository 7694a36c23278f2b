// Stand-in for the stock xiaozhi-esp32 main/mcp_server.h, written for these tests from
// the interface the firmware documents (docs/mcp-usage.md upstream: McpServer::AddTool
// with a PropertyList of boolean / integer (optional range) / string properties, a
// callback returning bool, int, std::string, cJSON* or ImageContent*, user-only tools
// with an audience annotation). It is not upstream code: it lets the glue's behaviour be
// compiled and run on any machine. When MCPGEN_XIAOZHI_SRC points at a checkout, the
// tests build the same harness against the real header and compare the two.
//
// Like the real header it throws (argument checks) and so needs C++ exceptions.
#ifndef MCP_SERVER_H
#define MCP_SERVER_H

#include <cJSON.h>
#include <mbedtls/base64.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace mcp_standin {

// cJSON text of `node` (unformatted); deletes the node.
inline std::string print_and_delete(cJSON* node) {
  char* text = cJSON_PrintUnformatted(node);
  std::string out = text != nullptr ? text : "";
  cJSON_free(text);
  cJSON_Delete(node);
  return out;
}

}  // namespace mcp_standin

// An image result: raw bytes in, base64 out.
class ImageContent {
 public:
  ImageContent(const std::string& mime_type, const std::string& data) : mime_type_(mime_type) {
    size_t needed = 0;
    const auto* src = reinterpret_cast<const unsigned char*>(data.data());
    mbedtls_base64_encode(nullptr, 0, &needed, src, data.size());
    std::string encoded(needed, '\0');
    size_t written = 0;
    mbedtls_base64_encode(reinterpret_cast<unsigned char*>(&encoded[0]), encoded.size(), &written, src, data.size());
    encoded.resize(written);
    base64_ = encoded;
  }

  std::string to_json() const {
    cJSON* node = cJSON_CreateObject();
    cJSON_AddStringToObject(node, "type", "image");
    cJSON_AddStringToObject(node, "mimeType", mime_type_.c_str());
    cJSON_AddStringToObject(node, "data", base64_.c_str());
    return mcp_standin::print_and_delete(node);
  }

 private:
  std::string mime_type_;
  std::string base64_;
};

using ReturnValue = std::variant<bool, int, std::string, cJSON*, ImageContent*>;

enum PropertyType { kPropertyTypeBoolean, kPropertyTypeInteger, kPropertyTypeString };

class Property {
 public:
  Property(const std::string& name, PropertyType type) : name_(name), type_(type) {}

  template <typename T>
  Property(const std::string& name, PropertyType type, const T& default_value)
      : name_(name), type_(type), value_(default_value), has_default_(true) {}

  Property(const std::string& name, PropertyType type, int min_value, int max_value)
      : name_(name), type_(type), min_(min_value), max_(max_value) {
    require_integer();
  }

  Property(const std::string& name, PropertyType type, int default_value, int min_value, int max_value)
      : name_(name), type_(type), value_(default_value), has_default_(true), min_(min_value), max_(max_value) {
    require_integer();
    if (default_value < min_value || default_value > max_value) {
      throw std::invalid_argument("Default value must be within the specified range");
    }
  }

  const std::string& name() const { return name_; }
  PropertyType type() const { return type_; }
  bool has_default_value() const { return has_default_; }
  bool has_range() const { return min_.has_value() && max_.has_value(); }
  int min_value() const { return min_ ? *min_ : 0; }
  int max_value() const { return max_ ? *max_ : 0; }

  template <typename T>
  T value() const {
    return std::get<T>(value_);
  }

  template <typename T>
  void set_value(const T& v) {
    if constexpr (std::is_same_v<T, int>) {
      if (min_ && v < *min_) throw std::invalid_argument("Value is below minimum allowed: " + std::to_string(*min_));
      if (max_ && v > *max_) throw std::invalid_argument("Value exceeds maximum allowed: " + std::to_string(*max_));
    }
    value_ = v;
  }

  std::string to_json() const {
    cJSON* node = cJSON_CreateObject();
    switch (type_) {
      case kPropertyTypeBoolean:
        cJSON_AddStringToObject(node, "type", "boolean");
        if (has_default_) cJSON_AddBoolToObject(node, "default", value<bool>());
        break;
      case kPropertyTypeInteger:
        cJSON_AddStringToObject(node, "type", "integer");
        if (has_default_) cJSON_AddNumberToObject(node, "default", value<int>());
        if (min_) cJSON_AddNumberToObject(node, "minimum", *min_);
        if (max_) cJSON_AddNumberToObject(node, "maximum", *max_);
        break;
      case kPropertyTypeString:
        cJSON_AddStringToObject(node, "type", "string");
        if (has_default_) cJSON_AddStringToObject(node, "default", value<std::string>().c_str());
        break;
    }
    return mcp_standin::print_and_delete(node);
  }

 private:
  void require_integer() const {
    if (type_ != kPropertyTypeInteger) throw std::invalid_argument("Range limits only apply to integer properties");
  }

  std::string name_;
  PropertyType type_;
  std::variant<bool, int, std::string> value_;
  bool has_default_ = false;
  std::optional<int> min_;
  std::optional<int> max_;
};

class PropertyList {
 public:
  PropertyList() = default;
  PropertyList(const std::vector<Property>& properties) : items_(properties) {}  // NOLINT: implicit, as upstream

  void AddProperty(const Property& property) { items_.push_back(property); }

  const Property& operator[](const std::string& name) const {
    for (const Property& p : items_) {
      if (p.name() == name) return p;
    }
    throw std::runtime_error("Property not found: " + name);
  }

  std::vector<Property>::iterator begin() { return items_.begin(); }
  std::vector<Property>::iterator end() { return items_.end(); }

  std::vector<std::string> GetRequired() const {
    std::vector<std::string> names;
    for (const Property& p : items_) {
      if (!p.has_default_value()) names.push_back(p.name());
    }
    return names;
  }

  std::string to_json() const {
    cJSON* node = cJSON_CreateObject();
    for (const Property& p : items_) cJSON_AddItemToObject(node, p.name().c_str(), cJSON_Parse(p.to_json().c_str()));
    return mcp_standin::print_and_delete(node);
  }

 private:
  std::vector<Property> items_;
};

class McpTool {
 public:
  McpTool(const std::string& name, const std::string& description, const PropertyList& properties,
          std::function<ReturnValue(const PropertyList&)> callback)
      : name_(name), description_(description), properties_(properties), callback_(std::move(callback)) {}

  void set_user_only(bool user_only) { user_only_ = user_only; }
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const PropertyList& properties() const { return properties_; }
  bool user_only() const { return user_only_; }

  // The tools/list entry: name, description, inputSchema, and for user-only tools the
  // annotation {"audience":["user"]}.
  std::string to_json() const {
    cJSON* node = cJSON_CreateObject();
    cJSON_AddStringToObject(node, "name", name_.c_str());
    cJSON_AddStringToObject(node, "description", description_.c_str());
    cJSON* schema = cJSON_AddObjectToObject(node, "inputSchema");
    cJSON_AddStringToObject(schema, "type", "object");
    cJSON_AddItemToObject(schema, "properties", cJSON_Parse(properties_.to_json().c_str()));
    std::vector<std::string> required = properties_.GetRequired();
    if (!required.empty()) {
      cJSON* list = cJSON_AddArrayToObject(schema, "required");
      for (const std::string& r : required) cJSON_AddItemToArray(list, cJSON_CreateString(r.c_str()));
    }
    if (user_only_) {
      cJSON* audience = cJSON_AddArrayToObject(cJSON_AddObjectToObject(node, "annotations"), "audience");
      cJSON_AddItemToArray(audience, cJSON_CreateString("user"));
    }
    return mcp_standin::print_and_delete(node);
  }

  // Runs the callback; the tools/call result: one content item (text, or an image whose
  // ImageContent JSON is nested as a string under "image") and "isError": false. cJSON*
  // and ImageContent* results are deleted here.
  std::string Call(const PropertyList& properties) {
    ReturnValue value = callback_(properties);
    cJSON* item = cJSON_CreateObject();
    if (std::holds_alternative<ImageContent*>(value)) {
      ImageContent* image = std::get<ImageContent*>(value);
      cJSON_AddStringToObject(item, "type", "image");
      cJSON_AddStringToObject(item, "image", image->to_json().c_str());
      delete image;
    } else {
      std::string text;
      if (std::holds_alternative<bool>(value)) {
        text = std::get<bool>(value) ? "true" : "false";
      } else if (std::holds_alternative<int>(value)) {
        text = std::to_string(std::get<int>(value));
      } else if (std::holds_alternative<std::string>(value)) {
        text = std::get<std::string>(value);
      } else {
        text = mcp_standin::print_and_delete(std::get<cJSON*>(value));
      }
      cJSON_AddStringToObject(item, "type", "text");
      cJSON_AddStringToObject(item, "text", text.c_str());
    }
    cJSON* result = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(result, "content"), item);
    cJSON_AddBoolToObject(result, "isError", false);
    return mcp_standin::print_and_delete(result);
  }

 private:
  std::string name_;
  std::string description_;
  PropertyList properties_;
  std::function<ReturnValue(const PropertyList&)> callback_;
  bool user_only_ = false;
};

// The members are defined by the test harness (xiaozhi_harness.cc), as they are by the
// firmware's main/mcp_server.cc.
class McpServer {
 public:
  static McpServer& GetInstance() {
    static McpServer server;
    return server;
  }

  void AddCommonTools();
  void AddUserOnlyTools();
  void AddTool(McpTool* tool);
  void AddTool(const std::string& name, const std::string& description, const PropertyList& properties,
               std::function<ReturnValue(const PropertyList&)> callback);
  void AddUserOnlyTool(const std::string& name, const std::string& description, const PropertyList& properties,
                       std::function<ReturnValue(const PropertyList&)> callback);
  void ParseMessage(const cJSON* json);
  void ParseMessage(const std::string& message);

 private:
  McpServer();
  ~McpServer();

  std::vector<McpTool*> tools_;
};

#endif  // MCP_SERVER_H
