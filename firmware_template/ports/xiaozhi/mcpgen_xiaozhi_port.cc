// mcpgen "xiaozhi" port: see mcpgen_xiaozhi_port.h. Builds with -fno-exceptions and
// -fno-rtti: every failure is an Outcome of kind kError, and the large per-call buffers are
// malloc'd so that running out of memory is one too.
#include "mcpgen_xiaozhi_port.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <utility>

#include <mbedtls/base64.h>

// The generated tables (mcp_tools.cpp) of the spec the handlers implement.
extern const mcpgen::SpecDesc kMcpSpec;

namespace mcpgen {
namespace xiaozhi {

namespace {

// Recursive: a handler running under it may emit a spec event, which takes it again.
std::recursive_mutex& call_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::function<void(const std::string&)>& sink_slot() {
  static std::function<void(const std::string&)> sink;
  return sink;
}

// A malloc'd byte buffer (nullptr when the allocation failed).
class Buffer {
 public:
  explicit Buffer(size_t size) : p_(static_cast<char*>(malloc(size > 0 ? size : 1))), size_(size) {}
  ~Buffer() { free(p_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* get() const { return p_; }
  size_t size() const { return size_; }

 private:
  char* p_;
  size_t size_;
};

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

Outcome decode_image(const char* tool, const cJSON* item) {
  const char* data = string_member(item, "data");
  const char* mime = string_member(item, "mimeType");
  if (data == nullptr || mime == nullptr)
    return Outcome::Error(std::string("internal error: image result of ") + tool + " has no data");
  const unsigned char* src = reinterpret_cast<const unsigned char*>(data);
  size_t src_len = strlen(data);
  size_t need = 0;
  int rc = mbedtls_base64_decode(nullptr, 0, &need, src, src_len);
  if (rc != 0 && rc != MBEDTLS_ERR_BASE64_BUFFER_TOO_SMALL) {
    return Outcome::Error(std::string("handler of ") + tool + " returned an image that is not valid base64");
  }
  // The stock ImageContent takes the raw bytes and base64-encodes them again itself.
  unsigned char* raw = static_cast<unsigned char*>(malloc(need > 0 ? need : 1));
  if (raw == nullptr) return Outcome::Error(std::string("out of memory for the image result of ") + tool);
  size_t got = 0;
  if (need > 0) {
    rc = mbedtls_base64_decode(raw, need, &got, src, src_len);
    if (rc != 0) {
      free(raw);
      return Outcome::Error(std::string("handler of ") + tool + " returned an image that is not valid base64");
    }
  }
  return Outcome::Image(mime, raw, got);
}

// The core's tools/call reply -> an Outcome.
Outcome convert(const char* tool, ReturnKind returns, const char* reply) {
  Tree root(cJSON_Parse(reply));
  if (!cJSON_IsObject(root.get()))
    return Outcome::Error(std::string("internal error: unreadable core reply for ") + tool);
  const cJSON* error = cJSON_GetObjectItemCaseSensitive(root.get(), "error");
  if (cJSON_IsObject(error)) {
    const char* message = string_member(error, "message");
    return Outcome::Error(message != nullptr ? message : "tool call failed");
  }
  const cJSON* result = cJSON_GetObjectItemCaseSensitive(root.get(), "result");
  const cJSON* content = cJSON_GetObjectItemCaseSensitive(result, "content");
  if (!cJSON_IsArray(content))
    return Outcome::Error(std::string("internal error: core reply for ") + tool + " has no content");
  const cJSON* first = cJSON_GetArrayItem(content, 0);
  const char* text = first != nullptr ? string_member(first, "text") : nullptr;
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "isError"))) {
    return Outcome::Error(text != nullptr ? text : "tool failed");
  }
  if (returns == ReturnKind::kNone) return Outcome::Text(std::string());
  if (returns == ReturnKind::kAudio || returns == ReturnKind::kResource || returns == ReturnKind::kContent) {
    // The stock ReturnValue holds one boolean, integer, string, object or image.
    return Outcome::Error(std::string(tool) +
                          " returns audio, an embedded resource or several content items, which the stock "
                          "McpServer cannot send; build the device with the mcpgen core (--target esp32)");
  }
  if (returns == ReturnKind::kImage) {
    if (first == nullptr)
      return Outcome::Error(std::string("internal error: core reply for ") + tool + " has no image");
    return decode_image(tool, first);
  }
  if (text == nullptr) return Outcome::Error(std::string("internal error: core reply for ") + tool + " has no text");
  switch (returns) {
    case ReturnKind::kBoolean: return Outcome::Boolean(strcmp(text, "true") == 0);
    case ReturnKind::kInteger: {
      // The stock ReturnValue's int is 32-bit; larger values go out as their decimal
      // text, which the stock server sends exactly like an int.
      char* end = nullptr;
      long long v = strtoll(text, &end, 10);
      if (end != text && *end == '\0' && v >= INT_MIN && v <= INT_MAX) return Outcome::Integer(static_cast<int>(v));
      return Outcome::Text(text);
    }
    case ReturnKind::kObject: {
      Tree obj(cJSON_Parse(text));
      if (!cJSON_IsObject(obj.get()))
        return Outcome::Error(std::string("internal error: object result of ") + tool + " is not JSON");
      return Outcome::Object(obj.release());
    }
    case ReturnKind::kNumber:
    case ReturnKind::kString:
    case ReturnKind::kNone:
    case ReturnKind::kImage:
    case ReturnKind::kAudio:
    case ReturnKind::kResource:
    case ReturnKind::kContent: break;
  }
  return Outcome::Text(text);
}

}  // namespace

// -- Outcome ---------------------------------------------------------------------------------

Outcome::~Outcome() { reset(); }

Outcome::Outcome(Outcome&& other) noexcept { *this = std::move(other); }

Outcome& Outcome::operator=(Outcome&& other) noexcept {
  if (this != &other) {
    reset();
    kind_ = other.kind_;
    boolean_ = other.boolean_;
    integer_ = other.integer_;
    text_ = std::move(other.text_);
    object_ = other.object_;
    image_ = other.image_;
    image_size_ = other.image_size_;
    notification_ = std::move(other.notification_);
    other.object_ = nullptr;
    other.image_ = nullptr;
    other.image_size_ = 0;
  }
  return *this;
}

void Outcome::reset() {
  cJSON_Delete(object_);
  object_ = nullptr;
  free(image_);
  image_ = nullptr;
  image_size_ = 0;
}

Outcome Outcome::Error(std::string message) {
  Outcome o;
  o.kind_ = Kind::kError;
  o.text_ = reply_safe(message.c_str());
  return o;
}

Outcome Outcome::Boolean(bool v) {
  Outcome o;
  o.kind_ = Kind::kBoolean;
  o.boolean_ = v;
  return o;
}

Outcome Outcome::Integer(int v) {
  Outcome o;
  o.kind_ = Kind::kInteger;
  o.integer_ = v;
  return o;
}

Outcome Outcome::Text(std::string text) {
  Outcome o;
  o.kind_ = Kind::kText;
  o.text_ = std::move(text);
  return o;
}

Outcome Outcome::Object(cJSON* object) {
  Outcome o;
  o.kind_ = Kind::kObject;
  o.object_ = object;
  return o;
}

Outcome Outcome::Image(std::string mime_type, unsigned char* bytes, size_t size) {
  Outcome o;
  o.kind_ = Kind::kImage;
  o.text_ = std::move(mime_type);
  o.image_ = bytes;
  o.image_size_ = size;
  return o;
}

cJSON* Outcome::release_object() {
  cJSON* p = object_;
  object_ = nullptr;
  return p;
}

// -- the port --------------------------------------------------------------------------------

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
  std::lock_guard<std::recursive_mutex> lock(call_mutex());
  sink_slot() = std::move(sink);
}

std::function<void(const std::string&)> notification_sink() {
  std::lock_guard<std::recursive_mutex> lock(call_mutex());
  return sink_slot();
}

void lock_core() { call_mutex().lock(); }

void unlock_core() { call_mutex().unlock(); }

bool parse_number(const char* param, const std::string& text, double* out, std::string* error) {
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
    *error = reply_safe(
        (std::string("invalid argument `") + param + "`: must be a number (sent as a string), got '" + got + "'")
            .c_str());
    return false;
  }
  *out = v;
  return true;
}

Outcome run_tool(const char* name, ReturnKind returns, const ArgsWriter& write_args) {
  JsonWriter measure(nullptr, 0);
  write_request(measure, name, write_args);
  Buffer request(measure.size() + 1);  // the core NUL-terminates in place
  Buffer reply(returns == ReturnKind::kImage ? MCPGEN_XIAOZHI_IMAGE_REPLY_SIZE : MCPGEN_RESPONSE_BUFFER_SIZE);
  if (request.get() == nullptr || reply.get() == nullptr)
    return Outcome::Error(std::string("out of memory calling ") + name);
  JsonWriter w(request.get(), request.size() - 1);
  write_request(w, name, write_args);
  if (w.overflowed() || w.size() != measure.size()) {
    return Outcome::Error(std::string("internal error: arguments of ") + name + " changed while being written");
  }
  std::string notification;
  size_t n = 0;
  {
    // The core (one Server, one Context scratch) serves one call at a time.
    std::lock_guard<std::recursive_mutex> lock(call_mutex());
    Server& server = core();
    n = server.handle(request.get(), w.size(), reply.get(), reply.size() - 1);
    static char note[2 * MCPGEN_NOTIFY_SIZE + 64];
    size_t k = server.pending_notification(note, sizeof note);
    if (k > 0) notification.assign(note, k);
  }
  if (n == 0) return Outcome::Error(std::string("internal error: no reply from the mcpgen core for ") + name);
  reply.get()[n] = '\0';
  Outcome out = convert(name, returns, reply.get());
  out.set_notification(std::move(notification));
  return out;
}

cJSON* spec_info_json() {
  cJSON* obj = cJSON_CreateObject();
  cJSON_AddStringToObject(obj, "fingerprint", kMcpSpec.fingerprint);
  cJSON_AddStringToObject(obj, "device", kMcpSpec.device_name);
  cJSON_AddStringToObject(obj, "version", kMcpSpec.device_version);
  return obj;
}

bool stock_registers(const StockBoard& board, const char* name) {
  if (!board.known) return true;  // not told: the stock tool keeps the name
  // The tools the stock firmware registers only when the board has the hardware.
  if (strcmp(name, "self.screen.set_brightness") == 0) return board.backlight;
  if (strcmp(name, "self.camera.take_photo") == 0) return board.camera;
  if (strncmp(name, "self.screen.", 12) == 0) return board.lvgl_display;  // set_theme, get_info, ...
  static const char* const kEveryBoard[] = {
      "self.get_device_status", "self.audio_speaker.set_volume", "self.get_system_info", "self.reboot",
      "self.upgrade_firmware",  "self.assets.set_download_url",
  };
  for (const char* stock : kEveryBoard) {
    if (strcmp(name, stock) == 0) return true;
  }
  return false;
}

}  // namespace xiaozhi
}  // namespace mcpgen
