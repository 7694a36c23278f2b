// mcpgen "xiaozhi" port: see mcpgen_xiaozhi_port.h.
#include "mcpgen_xiaozhi_port.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <exception>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <mbedtls/base64.h>

// The generated tables (mcp_tools.cpp) of the spec the handlers implement.
extern const mcpgen::SpecDesc kMcpSpec;

namespace mcpgen {
namespace xiaozhi {

namespace {

std::mutex& call_mutex() {
  static std::mutex m;
  return m;
}

std::function<void(const std::string&)>& notification_sink() {
  static std::function<void(const std::string&)> sink;
  return sink;
}

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(reply_safe(message.c_str())); }

// Owns a cJSON tree.
class Tree {
 public:
  explicit Tree(cJSON* p) : p_(p) {}
  ~Tree() { cJSON_Delete(p_); }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  cJSON* get() const { return p_; }
  cJSON* release() {
    cJSON* p = p_;
    p_ = nullptr;
    return p;
  }

 private:
  cJSON* p_;
};

void write_request(JsonWriter& w, const char* name, const ArgsWriter& write_args) {
  w.begin_object();
  w.key("jsonrpc");
  w.string("2.0");
  w.key("id");
  w.integer(1);
  w.key("method");
  w.string("tools/call");
  w.key("params");
  w.begin_object();
  w.key("name");
  w.string(name);
  w.key("arguments");
  w.begin_object();
  write_args(w);
  w.end_object();
  w.end_object();
  w.end_object();
}

const char* string_member(const cJSON* obj, const char* key) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : nullptr;
}

ImageContent* decode_image(const char* tool, const cJSON* item) {
  const char* data = string_member(item, "data");
  const char* mime = string_member(item, "mimeType");
  if (data == nullptr || mime == nullptr) fail(std::string("internal error: image result of ") + tool + " has no data");
  const unsigned char* src = reinterpret_cast<const unsigned char*>(data);
  size_t src_len = strlen(data);
  size_t need = 0;
  int rc = mbedtls_base64_decode(nullptr, 0, &need, src, src_len);
  if (rc != 0 && rc != MBEDTLS_ERR_BASE64_BUFFER_TOO_SMALL) {
    fail(std::string("handler of ") + tool + " returned an image that is not valid base64");
  }
  // ImageContent takes the raw bytes and base64-encodes them again itself.
  std::string raw(need, '\0');
  size_t got = 0;
  if (need > 0) {
    rc = mbedtls_base64_decode(reinterpret_cast<unsigned char*>(&raw[0]), raw.size(), &got, src, src_len);
    if (rc != 0) fail(std::string("handler of ") + tool + " returned an image that is not valid base64");
  }
  raw.resize(got);
  return new ImageContent(mime, raw);
}

// The core's tools/call reply -> the stock ReturnValue (throws on errors).
ReturnValue convert(const char* tool, ReturnKind returns, const char* reply) {
  Tree root(cJSON_Parse(reply));
  if (!cJSON_IsObject(root.get())) fail(std::string("internal error: unreadable core reply for ") + tool);
  const cJSON* error = cJSON_GetObjectItemCaseSensitive(root.get(), "error");
  if (cJSON_IsObject(error)) {
    const char* message = string_member(error, "message");
    fail(message != nullptr ? message : "tool call failed");
  }
  const cJSON* result = cJSON_GetObjectItemCaseSensitive(root.get(), "result");
  const cJSON* content = cJSON_GetObjectItemCaseSensitive(result, "content");
  if (!cJSON_IsArray(content)) fail(std::string("internal error: core reply for ") + tool + " has no content");
  const cJSON* first = cJSON_GetArrayItem(content, 0);
  const char* text = first != nullptr ? string_member(first, "text") : nullptr;
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"))) {
    fail(text != nullptr ? text : "tool failed");
  }
  if (returns == ReturnKind::kNone) return std::string();
  if (returns == ReturnKind::kImage) {
    if (first == nullptr) fail(std::string("internal error: core reply for ") + tool + " has no image");
    return decode_image(tool, first);
  }
  if (text == nullptr) fail(std::string("internal error: core reply for ") + tool + " has no text");
  switch (returns) {
    case ReturnKind::kBoolean: return strcmp(text, "true") == 0;
    case ReturnKind::kInteger: {
      // The stock ReturnValue's int is 32-bit; larger values go out as their decimal
      // text, which the stock server sends exactly like an int.
      char* end = nullptr;
      long long v = strtoll(text, &end, 10);
      if (end != text && *end == '\0' && v >= INT_MIN && v <= INT_MAX) return static_cast<int>(v);
      return std::string(text);
    }
    case ReturnKind::kObject: {
      Tree obj(cJSON_Parse(text));
      if (!cJSON_IsObject(obj.get())) fail(std::string("internal error: object result of ") + tool + " is not JSON");
      return obj.release();  // the stock McpTool::Call deletes it
    }
    case ReturnKind::kNumber:
    case ReturnKind::kString:
    case ReturnKind::kNone:
    case ReturnKind::kImage: break;
  }
  return std::string(text);
}

}  // namespace

std::string reply_safe(const char* message) {
  std::string out(message != nullptr ? message : "");
  for (char& c : out) {
    if (c == '"') {
      c = '\'';
    } else if (c == '\\') {
      c = '/';
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      c = ' ';
    }
  }
  return out;
}

Server& core() {
  static Server server(kMcpSpec);
  return server;
}

void set_notification_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> lock(call_mutex());
  notification_sink() = std::move(sink);
}

double parse_number(const char* param, const std::string& text) {
  // JSON number characters only (no "inf", "nan", hex floats, or surrounding junk).
  bool ok = !text.empty() && text.size() <= 64;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) ok = false;
  }
  double v = 0;
  if (ok) {
    char* end = nullptr;
    v = strtod(text.c_str(), &end);
    ok = end != text.c_str() && *end == '\0' && isfinite(v);
  }
  if (!ok) {
    std::string got = text.size() > 40 ? text.substr(0, 40) + "..." : text;
    fail(std::string("invalid argument `") + param + "`: must be a number (sent as a string), got '" + got + "'");
  }
  return v;
}

ReturnValue call_tool(const char* name, ReturnKind returns, const ArgsWriter& write_args) {
  JsonWriter measure(nullptr, 0);
  write_request(measure, name, write_args);
  std::vector<char> request(measure.size() + 1);  // the core NUL-terminates in place
  JsonWriter w(request.data(), request.size() - 1);
  write_request(w, name, write_args);
  if (w.overflowed() || w.size() != measure.size()) {
    fail(std::string("internal error: arguments of ") + name + " changed while being written");
  }
  std::vector<char> reply(returns == ReturnKind::kImage ? MCPGEN_XIAOZHI_IMAGE_REPLY_SIZE
                                                        : MCPGEN_RESPONSE_BUFFER_SIZE);
  std::string notification;
  std::function<void(const std::string&)> sink;
  size_t n = 0;
  {
    // The core (one Server, one Context scratch) serves one call at a time.
    std::lock_guard<std::mutex> lock(call_mutex());
    Server& server = core();
    n = server.handle(request.data(), w.size(), reply.data(), reply.size() - 1);
    static char note[2 * MCPGEN_NOTIFY_SIZE + 64];
    size_t k = server.pending_notification(note, sizeof note);
    if (k > 0) {
      notification.assign(note, k);
      sink = notification_sink();
    }
  }
  if (!notification.empty() && sink) {
    try {
      sink(notification);
    } catch (const std::exception&) {
      // A failing sink loses the notification, never the tool's result.
    }
  }
  if (n == 0) fail(std::string("internal error: no reply from the mcpgen core for ") + name);
  reply[n] = '\0';
  return convert(name, returns, reply.data());
}

ReturnValue spec_info() {
  cJSON* obj = cJSON_CreateObject();
  cJSON_AddStringToObject(obj, "fingerprint", kMcpSpec.fingerprint);
  cJSON_AddStringToObject(obj, "device", kMcpSpec.device_name);
  cJSON_AddStringToObject(obj, "version", kMcpSpec.device_version);
  return obj;
}

}  // namespace xiaozhi
}  // namespace mcpgen
