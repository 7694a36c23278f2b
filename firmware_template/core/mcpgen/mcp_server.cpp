// The MCP server core: JSON-RPC framing, dispatch, argument decoding and validation
// against the generated ParamDesc tables, result writing and tools/list paging.
// Works entirely inside the caller's buffers and the Server object: no heap.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"
#include "mcpgen/resources.h"
#include "mcpgen/text_format.h"

namespace mcpgen {

namespace {

using json::Type;
using json::Value;

const char* const kSupportedProtocols[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
};

// Bounded text builder for error messages (lives in the Context scratch buffer).
class Msg {
 public:
  Msg(char* buf, size_t cap) : buf_(buf), cap_(cap), len_(0) { buf_[0] = '\0'; }
  Msg& add(const char* s) { return add(s, strlen(s)); }
  // Two or three pieces in one call: a message is mostly literal, name, literal, and
  // each call costs flash at every error site.
  __attribute__((noinline)) Msg& add(const char* a, const char* b, const char* c = nullptr) {
    add(a).add(b);
    return c != nullptr ? add(c) : *this;
  }
  Msg& add(const char* s, size_t n) {
    if (n > cap_ - 1 - len_) n = cap_ - 1 - len_;
    memcpy(buf_ + len_, s, n);
    len_ += n;
    buf_[len_] = '\0';
    return *this;
  }
  // A value quoted from the request, cut at `limit` bytes.
  Msg& quote(const char* s, size_t n, size_t limit) {
    if (n <= limit) return add(s, n);
    while (limit > 0 && (static_cast<unsigned char>(s[limit]) & 0xC0) == 0x80) --limit;
    return add(s, limit).add("...");
  }
  Msg& add_int(int64_t v) {
    char tmp[21];
    return add(tmp, format_int64(v, tmp));
  }
  Msg& add_num(double v) {
    char tmp[32];
    return add(tmp, format_double(v, tmp));
  }
  void clear() {
    len_ = 0;
    buf_[0] = '\0';
  }
  const char* str() const { return buf_; }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_;
};

const char* type_name(Type t) {
  switch (t) {
    case Type::kNull: return "null";
    case Type::kBool: return "boolean";
    case Type::kNumber: return "number";
    case Type::kString: return "string";
    case Type::kObject: return "object";
    case Type::kArray: return "array";
    default: return "nothing";
  }
}

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::kBoolean: return "a boolean";
    case ParamType::kInteger: return "an integer";
    case ParamType::kNumber: return "a number";
    default: return "a string";
  }
}

const char* return_kind_name(ReturnKind k) {
  switch (k) {
    case ReturnKind::kNone: return "none";
    case ReturnKind::kBoolean: return "boolean";
    case ReturnKind::kInteger: return "integer";
    case ReturnKind::kNumber: return "number";
    case ReturnKind::kString: return "string";
    case ReturnKind::kObject: return "object";
    default: return "image";
  }
}

enum class IntParse : uint8_t { kOk, kNotInteger, kTooLarge, kTooSmall };

// Parses a validated JSON number token as an exact int64 ("5", "-3", "5.0", "1e2").
IntParse parse_int(const char* p, size_t n, int64_t* out) {
  // Digits only: exact in a uint64 (no 64-bit division, a libgcc call on a 32-bit MCU:
  // u stays below 2^63 / 10 + 1 before each step, so u * 10 + 9 cannot wrap). A fraction,
  // an exponent or more digits than that go through the double below.
  bool neg = p[0] == '-';
  uint64_t u = 0;
  size_t i = neg ? 1 : 0;
  for (; i < n && p[i] >= '0' && p[i] <= '9' && u <= 922337203685477580u; ++i) {
    u = u * 10 + static_cast<uint64_t>(p[i] - '0');
  }
  if (i == n) {
    if (u > (uint64_t{1} << 63) - (neg ? 0 : 1)) return neg ? IntParse::kTooSmall : IntParse::kTooLarge;
    *out = neg ? static_cast<int64_t>(~u + 1) : static_cast<int64_t>(u);
    return IntParse::kOk;
  }
  double d = 0;
  parse_double(p, n, &d);
  // Range first (infinities included): inside it the int64 conversion is exact for every
  // integral value, so comparing back tells a fraction.
  if (d >= 9223372036854775808.0) return IntParse::kTooLarge;
  if (d < -9223372036854775808.0) return IntParse::kTooSmall;
  if (d != static_cast<double>(static_cast<int64_t>(d))) return IntParse::kNotInteger;
  *out = static_cast<int64_t>(d);
  return IntParse::kOk;
}

// Bytes of a string literal (without its NUL) as a raw fragment.
template <size_t N>
inline void lit(JsonWriter& w, const char (&s)[N]) {
  w.raw_fragment(s, N - 1);
}

// A string value equals a literal (decoded text; raw bytes when it has no escape).
template <size_t N>
inline bool eq(const Value& v, const char (&lit)[N]) {
  return json::string_equals(v, lit, N - 1);
}

// Error messages quote at most this many bytes of a value from the request (cut at a
// character boundary, then "..."): a 3 MB argument never comes back as a 3 MB error.
constexpr size_t kQuoteLimit = 64;

template <typename T>
void store(void* args, uint16_t offset, T v) {
  memcpy(static_cast<char*>(args) + offset, &v, sizeof v);
}

}  // namespace

// ---------------------------------------------------------------- Result

Result Result::None() { return Result(); }

Result Result::Bool(bool v) {
  Result r;
  r.kind_ = ReturnKind::kBoolean;
  r.v_.b = v;
  return r;
}

Result Result::Int(int64_t v) {
  Result r;
  r.kind_ = ReturnKind::kInteger;
  r.v_.i = v;
  return r;
}

Result Result::Number(double v) {
  Result r;
  r.kind_ = ReturnKind::kNumber;
  r.v_.d = v;
  return r;
}

Result Result::Text(const char* s) {
  Result r;
  r.kind_ = ReturnKind::kString;
  r.v_.s = s;
  return r;
}

Result Result::Object() {
  Result r;
  r.kind_ = ReturnKind::kObject;
  return r;
}

Result Result::Image(const char* mime_type, const char* base64_data) {
  Result r;
  r.kind_ = ReturnKind::kImage;
  r.mime_ = mime_type;
  r.v_.s = base64_data;
  return r;
}

Result Result::Error(const char* message) {
  Result r;
  r.is_error_ = true;
  r.v_.s = message;
  return r;
}

// ---------------------------------------------------------------- Context

Context::Context()
    : writer_(scratch_, sizeof scratch_),
      vision_(nullptr),
      user_data_(nullptr),
      notify_pending_(false),
      notify_has_params_(false) {
  scratch_[0] = '\0';
  notify_[0] = '\0';
}

JsonWriter& Context::object() {
  writer_.reset(scratch_, sizeof scratch_);
  return writer_;
}

char* Context::scratch() { return scratch_; }
size_t Context::scratch_size() const { return sizeof scratch_; }
const VisionConfig& Context::vision() const { return *vision_; }
void* Context::user_data() const { return user_data_; }

bool Context::notify(const char* method, const char* params_json) {
  if (notify_pending_ || method == nullptr) return false;
  size_t m = strlen(method);
  size_t p = params_json != nullptr ? strlen(params_json) : 0;
  if (m + 1 + p + 1 > sizeof notify_) return false;
  memcpy(notify_, method, m + 1);
  char* params = notify_ + m + 1;
  memcpy(params, params_json != nullptr ? params_json : "", p + 1);
  if (params_json != nullptr) {
    Value v;
    const char* err = nullptr;
    if (!json::validate(params, p, &v, &err)) return false;
  }
  notify_has_params_ = params_json != nullptr;
  notify_pending_ = true;
  return true;
}

// ---------------------------------------------------------------- Server

struct ServerImpl {
  struct Request {
    Value id;  // string or number token; invalid: reply with null
    Value session;  // the envelope's session_id token, if any
    bool enveloped = false;
    // Where the reply goes: carried here so the many reply and error helpers take few
    // arguments (all in registers on a 32-bit MCU).
    char* out = nullptr;
    size_t cap = 0;
  };

  // Replies are written as raw fragments of fixed JSON text with the variable parts
  // escaped in between (str) or copied as they came (ids, session tokens): no comma
  // bookkeeping on the hot path.
  static void str(JsonWriter& w, const char* s, size_t n) {
    w.need_comma_ = false;
    w.string(s, n);
  }
  static void str(JsonWriter& w, const char* s) { str(w, s, strlen(s)); }
  static void integer(JsonWriter& w, int64_t v) {
    char tmp[21];
    w.raw_fragment(tmp, format_int64(v, tmp));
  }

  // The start of the xiaozhi envelope up to its "type": {"session_id":<the request's
  // token, else the connection's id>, (or just { without a session id).
  static void envelope_head(const Server& s, JsonWriter& w, const Request& rq) {
    if (rq.session.is(Type::kString)) {
      lit(w, "{\"session_id\":");
      w.raw_fragment(rq.session.p, rq.session.n);
      lit(w, ",");
    } else if (s.session_id_[0] != '\0') {
      lit(w, "{\"session_id\":");
      str(w, s.session_id_);
      lit(w, ",");
    } else {
      lit(w, "{");
    }
  }

  // Opens any outgoing JSON-RPC message: the xiaozhi envelope when rq.enveloped, then
  // {"jsonrpc":"2.0".
  __attribute__((noinline)) static void open(const Server& s, JsonWriter& w, const Request& rq) {
    if (rq.enveloped) {
      envelope_head(s, w, rq);
      lit(w, "\"type\":\"mcp\",\"payload\":{\"jsonrpc\":\"2.0\"");
    } else {
      lit(w, "{\"jsonrpc\":\"2.0\"");
    }
  }

  // Opens a reply to rq (up to its "id"; the fixed text in as few pieces as possible).
  static void begin(const Server& s, JsonWriter& w, const Request& rq) {
    open(s, w, rq);
    lit(w, ",\"id\":");
    if (rq.id.valid()) {
      w.raw_fragment(rq.id.p, rq.id.n);
    } else {
      lit(w, "null");
    }
  }

  // Closes the JSON-RPC object and the envelope.
  static void end(JsonWriter& w, const Request& rq) { w.raw_fragment("}}", rq.enveloped ? 2 : 1); }

  static size_t error(const Server& s, const Request& rq, int code, const char* msg, size_t msg_len) {
    JsonWriter w(rq.out, rq.cap);
    begin(s, w, rq);
    lit(w, ",\"error\":{\"code\":");
    integer(w, code);
    lit(w, ",\"message\":");
    str(w, msg, msg_len);
    lit(w, "}");
    end(w, rq);
    if (!w.overflowed()) return w.size();
    // It did not fit the output buffer: a short -32603 with the request's id instead, so
    // the caller never waits out a timeout for a reply dropped silently.
    static const char kTooSmall[] = "Internal error: response buffer too small";
    if (msg == kTooSmall) return 0;
    return error(s, rq, kInternalError, kTooSmall, sizeof kTooSmall - 1);
  }

  static size_t error(const Server& s, const Request& rq, int code, const Msg& m) {
    return error(s, rq, code, m.str(), m.size());
  }

  // "<the code's prefix><msg>" (built in the scratch buffer, so msg must not point there).
  static size_t error(Server& s, const Request& rq, int code, const char* msg) {
    Msg m = head(s, code);
    m.add(msg);
    return error(s, rq, code, m);
  }

  // Completes a reply: the writer's text, or -32603 when it did not fit.
  static size_t finish(Server& s, const Request& rq, JsonWriter& w) {
    end(w, rq);
    return done(s, rq, w);
  }

  // A reply written to its end: its length, or -32603 when it did not fit.
  static size_t done(Server& s, const Request& rq, JsonWriter& w) {
    if (!w.overflowed()) return w.size();
    Msg m = head(s, kInternalError);
    m.add("response buffer too small for the reply (")
        .add_int(static_cast<int64_t>(rq.cap))
        .add(" bytes; raise MCPGEN_RESPONSE_BUFFER_SIZE)");
    return error(s, rq, kInternalError, m);
  }

  // Out of line (like head): error paths are many and cold, so each costs one call.
  __attribute__((noinline)) static Msg scratch_msg(Server& s) { return Msg(s.ctx_.scratch_, sizeof s.ctx_.scratch_); }

  // An error message in the scratch buffer, started with the JSON-RPC name of its code
  // (one of ErrorCode: "Invalid params: ", ...): one copy of each prefix for every message.
  __attribute__((noinline)) static Msg head(Server& s, int code) {
    static const char* const kPrefix[] = {"Invalid Request: ", "Method not found: ", "Invalid params: ",
                                          "Internal error: ", "Parse error: "};
    unsigned i = static_cast<unsigned>(kInvalidRequest - code);  // -32600..-32603 -> 0..3
    Msg m = scratch_msg(s);
    m.add(kPrefix[i < 4 ? i : 4]);
    return m;
  }

  // The decoded text of a string value: its raw bytes when it has no escape, else
  // unescaped in place (so: only for values that are not walked again).
  static const char* text_of(const Value& v, size_t* len) {
    if (!v.esc) {
      *len = v.n - 2;
      return v.p + 1;
    }
    return json::unescape(v, len);
  }

  // "<prefix>"<the value's text, cut at kQuoteLimit>""; used for -32600/-32602 errors.
  static size_t quoted_error(Server& s, const Request& rq, int code, const char* prefix, const Value& v) {
    size_t n = 0;
    const char* t = text_of(v, &n);
    Msg m = head(s, code);
    m.add(prefix, "\"").quote(t, n, kQuoteLimit).add("\"");
    return error(s, rq, code, m);
  }

  // Index of the tool named text[0, n), or -1: binary search of the generated by-name
  // order (names compare as UTF-8 bytes, as codegen sorted them).
  static int find_tool(const SpecDesc& spec, const char* text, size_t n) {
    if (memchr(text, '\0', n) != nullptr) return -1;  // from \u0000: no tool has it
    int lo = 0;
    int hi = static_cast<int>(spec.tool_count) - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >> 1;
      uint16_t i = spec.by_name[mid];
      const char* name = spec.tools[i].name;
      int c = strncmp(name, text, n);
      if (c == 0) {
        if (name[n] == '\0') return i;
        c = 1;  // the table's name is longer
      }
      if (c < 0) {
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return -1;
  }

  static void set_session(Server& s, const Value& v) {
    size_t n = v.n - 2;
    if (!v.esc) {  // the common case: the raw bytes are the id
      if (n < sizeof s.session_id_) {
        memcpy(s.session_id_, v.p + 1, n);
        s.session_id_[n] = '\0';
      }
      return;
    }
    char tmp[MCPGEN_SESSION_ID_SIZE];
    if (json::copy_string(v, tmp, sizeof tmp)) memcpy(s.session_id_, tmp, sizeof tmp);
  }

  // ------------------------------------------------------------ initialize
  static size_t initialize(Server& s, Request& rq, const json::Params& p) {
    const char* version = s.spec_.protocol_version;
    for (const char* v : kSupportedProtocols) {
      if (json::string_equals(p.protocol_version, v)) {
        version = v;
        break;
      }
    }
    // capabilities.vision {url, token}; find() gives nothing for what is not an object.
    Value vision = json::find(p.capabilities, "vision");
    // find() reads the first of a repeated key, Python readers the last: refuse them.
    Value dup = json::first_duplicate(p.capabilities);
    if (!dup.valid()) dup = json::first_duplicate(vision);
    if (dup.valid()) return quoted_error(s, rq, kInvalidParams, "duplicate key ", dup);
    Value url = json::find(vision, "url");
    if (url.is(Type::kString)) {
      VisionConfig& vc = s.vision_;
      Value token = json::find(vision, "token");
      // copy_string leaves "" when it fails, and for a token that is not a string.
      bool ok = json::copy_string(url, vc.url, sizeof vc.url);
      ok = (json::copy_string(token, vc.token, sizeof vc.token) || !token.is(Type::kString)) && ok;
      vc.present = ok;
      if (!ok) {
        vc.url[0] = '\0';
        vc.token[0] = '\0';
      }
    }
    JsonWriter w(rq.out, rq.cap);
    begin(s, w, rq);
    lit(w, ",\"result\":{\"protocolVersion\":");
    str(w, version);
    lit(w, ",\"capabilities\":{\"tools\":{}");
    if (s.spec_.resources != nullptr) {
      if (s.spec_.resources->any_subscribe) {
        lit(w, ",\"resources\":{\"subscribe\":true}");
      } else {
        lit(w, ",\"resources\":{}");
      }
    }
    lit(w, "},\"serverInfo\":{\"name\":");
    str(w, s.spec_.device_name);
    lit(w, ",\"version\":");
    str(w, s.spec_.device_version);
    lit(w, "},\"_meta\":{\"mcpgen/fingerprint\":");
    str(w, s.spec_.fingerprint);
    lit(w, "}}");
    return finish(s, rq, w);
  }

  // ------------------------------------------------------------ tools/list
  // The cursor is kCursorLen lowercase hex digits: the index of the next page's first
  // tool (4 digits), then a check (8) derived from that index, the tool count and the spec
  // fingerprint. The page is found by indexing (a page costs the same wherever it
  // starts); clients treat the text as opaque. A cursor this device did not give out
  // for this tool set -- stale (another firmware or spec), forged, out of range -- fails
  // the comparison with the text the device would have written and gets -32602.
  static constexpr size_t kCursorLen = 12;  // == CURSOR_LEN in codegen/spec/mcp_json.py

  static void cursor_text(const SpecDesc& spec, uint32_t index, char* out) {
    // FNV-1a started from the index and count: for one spec, distinct indices give
    // distinct checks (each step is a bijection of the 32-bit state).
    uint32_t h = (2166136261u ^ index) + (uint32_t{spec.tool_count} << 16);
    for (const char* p = spec.fingerprint; *p != '\0'; ++p) h = (h ^ static_cast<uint8_t>(*p)) * 16777619u;
    for (int i = 11; i >= 0; --i) {
      uint32_t& v = i >= 4 ? h : index;
      out[i] = json::detail::kHexDigits[v & 15];
      v >>= 4;
    }
  }

  static size_t tools_list(Server& s, Request& rq, const json::Params& p) {
    const SpecDesc& spec = s.spec_;
    const Value& cursor = p.cursor;
    const Value& with_user = p.with_user_tools;
    if (cursor.valid() && !cursor.is(Type::kString) && !cursor.is(Type::kNull)) {
      return error(s, rq, kInvalidParams, "cursor must be a string");
    }
    if (with_user.valid() && !with_user.is(Type::kBool) && !with_user.is(Type::kNull)) {
      return error(s, rq, kInvalidParams, "withUserTools must be a boolean");
    }
    bool user = with_user.is_true();
    uint32_t start = 0;
    char text[kCursorLen];
    if (cursor.is(Type::kString) && cursor.n > 2) {
      size_t n = 0;
      const char* c = text_of(cursor, &n);
      // The index from the first 4 digits (0x10000, out of range, when one is not hex);
      // then the whole text must be the one the device writes for that index.
      if (n == kCursorLen) start = json::detail::hex4(c);
      if (start < spec.tool_count) cursor_text(spec, start, text);
      if (n != kCursorLen || start >= spec.tool_count || memcmp(text, c, kCursorLen) != 0) {
        Msg m = head(s, kInvalidParams);
        m.add("unknown cursor \"").quote(c, n, kQuoteLimit).add("\"");
        return error(s, rq, kInvalidParams, m);
      }
    }
    auto visible = [&](uint32_t i) { return user || !spec.tools[i].user_only; };
    // The page: `{"tools":[` + entries + `]}`, or `],"nextCursor":"<cursor>"}` when another
    // visible tool follows; entries are written as long as that still fits page_size.
    constexpr size_t kMore = 15 + 1 + kCursorLen + 1 + 1;  // ],"nextCursor": "..." }
    JsonWriter w(rq.out, rq.cap);
    begin(s, w, rq);
    lit(w, ",\"result\":{\"tools\":[");
    size_t size = 10;  // {"tools":[
    uint32_t end_at = 0;  // first tool not on this page (the next cursor), 0: last page
    uint32_t i = start;
    while (i < spec.tool_count && !visible(i)) ++i;
    bool first = true;
    while (i < spec.tool_count) {
      uint32_t nxt = i + 1;
      while (nxt < spec.tool_count && !visible(nxt)) ++nxt;
      size_t add = (first ? 0 : 1) + spec.tools[i].list_entry_len;
      if (size + add + (nxt < spec.tool_count ? kMore : 2) > spec.page_size) {
        if (first) {
          Msg m = head(s, kInternalError);
          m.add("tool ", spec.tools[i].name, " does not fit in a tools/list page of ")
              .add_int(spec.page_size)
              .add(" bytes");
          return error(s, rq, kInternalError, m);
        }
        end_at = i;
        break;
      }
      if (!first) lit(w, ",");
      first = false;
      w.raw_fragment(spec.tools[i].list_entry, spec.tools[i].list_entry_len);
      size += add;
      i = nxt;
    }
    lit(w, "]");
    if (end_at != 0) {
      lit(w, ",\"nextCursor\":\"");
      cursor_text(spec, end_at, text);
      w.raw_fragment(text, kCursorLen);
      lit(w, "\"");
    }
    lit(w, "}");
    return finish(s, rq, w);
  }

  // ------------------------------------------------------------ tools/call
  enum class ArgsStatus : uint8_t { kOk, kInvalid, kDuplicate };

  // Ends an argument's message with ", got <its text>" (cut at 40 bytes).
  __attribute__((noinline)) static ArgsStatus got(Msg& head, const Value& v) {
    head.add(", got ").quote(v.p, v.n, 40);
    return ArgsStatus::kInvalid;
  }

  // A numeric argument beyond a bound of its parameter (high: the maximum): "must be <=
  // max"; an integer beyond int64 where that side has no bound: "must fit a 64-bit integer".
  __attribute__((noinline)) static ArgsStatus out_of_range(Msg& head, const ParamDesc& p, bool high, const Value& v) {
    if (!(high ? p.has_max : p.has_min)) {
      head.add("must fit a 64-bit integer");
    } else {
      head.add(high ? "must be <= " : "must be >= ");
      if (p.type == ParamType::kInteger) {
        head.add_int(high ? p.int_max : p.int_min);
      } else {
        head.add_num(high ? p.num_max : p.num_min);
      }
    }
    return got(head, v);
  }

  // Decodes and checks the arguments into args; on a violation writes the message into m:
  // kInvalid for a rule of the spec (a tool error result), kDuplicate for an argument given
  // twice (-32602: the sender and the device could read different values).
  static ArgsStatus decode_args(const ToolDesc& tool, const Value& args, void* storage, Msg& m) {
    memset(storage, 0, tool.args_size);
    for (uint8_t i = 0; i < tool.param_count; ++i) {
      const ParamDesc& p = tool.params[i];
      if (p.required) continue;
      // The default field of the parameter's type, copied like a decoded value.
      static const uint8_t kSize[] = {sizeof(bool), sizeof(int64_t), sizeof(double), sizeof(const char*)};
      const void* def = p.type == ParamType::kBoolean   ? static_cast<const void*>(&p.default_bool)
                        : p.type == ParamType::kInteger ? static_cast<const void*>(&p.default_int)
                        : p.type == ParamType::kNumber  ? static_cast<const void*>(&p.default_num)
                                                        : static_cast<const void*>(&p.default_str);
      memcpy(static_cast<char*>(storage) + p.offset, def, kSize[static_cast<uint8_t>(p.type)]);
    }
    uint32_t seen[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // one bit per parameter (<= 255)
    Value k, v;
    json::ObjectIter it(args);
    while (it.next(&k, &v)) {
      // Keys without escapes are compared as raw bytes (strncmp stops at the name's end).
      const char* kt = k.p + 1;
      size_t kn = k.n - 2;
      if (k.esc) kt = json::unescape(k, &kn);  // the key is not walked again
      const ParamDesc* p = nullptr;
      uint8_t index = 0;
      for (uint8_t i = 0; i < tool.param_count; ++i) {
        const char* name = tool.params[i].name;
        // An escaped key may hold "\u0000": refuse it before strncmp, which would stop at
        // that NUL and let name[kn] read past a shorter name.
        if (name[0] == kt[0] && (!k.esc || memchr(kt, '\0', kn) == nullptr) &&
            strncmp(name, kt, kn) == 0 && name[kn] == '\0') {
          p = &tool.params[i];
          index = i;
          break;
        }
      }
      if (p == nullptr) {
        m.add("unknown argument `").quote(kt, kn, kQuoteLimit).add("`");
        return ArgsStatus::kInvalid;
      }
      uint32_t bit = uint32_t{1} << (index & 31);
      if (seen[index >> 5] & bit) {
        m.add("Invalid params: duplicate argument `", p->name, "`");
        return ArgsStatus::kDuplicate;
      }
      seen[index >> 5] |= bit;
      Msg& head = m.add("invalid argument `", p->name, "`: ");
      // The JSON type each ParamType takes, in ParamType order.
      static const Type kJsonType[] = {Type::kBool, Type::kNumber, Type::kNumber, Type::kString};
      if (v.type != kJsonType[static_cast<uint8_t>(p->type)]) {
        head.add("must be ", param_type_name(p->type), ", got ").add(type_name(v.type));
        return ArgsStatus::kInvalid;
      }
      switch (p->type) {
        case ParamType::kBoolean:
          store(storage, p->offset, v.is_true());
          break;
        case ParamType::kInteger: {
          int64_t x = 0;
          IntParse r = parse_int(v.p, v.n, &x);
          if (r == IntParse::kNotInteger) return got(head.add("must be an integer"), v);
          if (r == IntParse::kTooLarge || (r == IntParse::kOk && p->has_max && x > p->int_max)) {
            return out_of_range(head, *p, true, v);
          }
          if (r == IntParse::kTooSmall || (p->has_min && x < p->int_min)) return out_of_range(head, *p, false, v);
          store(storage, p->offset, x);
          break;
        }
        case ParamType::kNumber: {
          double x = 0;
          parse_double(v.p, v.n, &x);
          if (!isfinite(x)) return got(head.add("must be a finite number"), v);
          if (p->has_max && x > p->num_max) return out_of_range(head, *p, true, v);
          if (p->has_min && x < p->num_min) return out_of_range(head, *p, false, v);
          store(storage, p->offset, x);
          break;
        }
        case ParamType::kString: {
          size_t n = 0;
          const char* str = json::unescape(v, &n);
          if (strlen(str) != n) {
            head.add("must not contain NUL characters");
            return ArgsStatus::kInvalid;
          }
          if (p->enum_values != nullptr) {
            bool ok = false;
            for (uint16_t e = 0; e < p->enum_count && !ok; ++e) ok = strcmp(str, p->enum_values[e]) == 0;
            if (!ok) {
              head.add("must be one of ");
              for (uint16_t e = 0; e < p->enum_count; ++e) head.add(e ? ", " : "", p->enum_values[e]);
              head.add("; got \"").quote(str, n, kQuoteLimit).add("\"");
              return ArgsStatus::kInvalid;
            }
          }
          if (p->max_length != 0) {
            size_t cps = json::utf8_length(str, n);
            if (cps > p->max_length) {
              head.add("must be at most ")
                  .add_int(p->max_length)
                  .add(" characters, got ")
                  .add_int(static_cast<int64_t>(cps));
              return ArgsStatus::kInvalid;
            }
          }
          store(storage, p->offset, str);
          break;
        }
      }
      m.clear();  // this argument is fine: drop the "invalid argument" prefix
    }
    for (uint8_t i = 0; i < tool.param_count; ++i) {
      if (tool.params[i].required && !(seen[i >> 5] & (uint32_t{1} << (i & 31)))) {
        m.add("missing required argument `", tool.params[i].name, "`");
        return ArgsStatus::kInvalid;
      }
    }
    return ArgsStatus::kOk;
  }

  static void text_content(JsonWriter& w, const char* s, size_t n) {
    lit(w, "{\"type\":\"text\",\"text\":");
    str(w, s, n);
    lit(w, "}");
  }

  // A tool error: {"content":[{"type":"text","text":msg}],"isError":true}.
  static size_t tool_error_result(Server& s, const Request& rq, const char* msg, size_t n) {
    JsonWriter w(rq.out, rq.cap);
    begin(s, w, rq);
    lit(w, ",\"result\":{\"content\":[");
    text_content(w, msg, n);
    lit(w, "],\"isError\":true}");
    return finish(s, rq, w);
  }

  static size_t tools_call(Server& s, Request& rq, const json::Params& p, const Value& params) {
    const SpecDesc& spec = s.spec_;
    if (!params.is(Type::kObject)) {
      return error(s, rq, kInvalidParams, "tools/call needs params {name, arguments}");
    }
    const Value& name = p.name;
    const Value& args = p.arguments;
    if (!name.is(Type::kString)) {
      return error(s, rq, kInvalidParams, "params.name must be a string");
    }
    if (args.valid() && !args.is(Type::kObject) && !args.is(Type::kNull)) {
      return error(s, rq, kInvalidParams, "params.arguments must be an object");
    }
    size_t nlen = 0;
    const char* nm = text_of(name, &nlen);
    int index = find_tool(spec, nm, nlen);
    if (index < 0) {
      Msg m = scratch_msg(s);
      m.add("Unknown tool: ").quote(nm, nlen, kQuoteLimit);
      return error(s, rq, kMethodNotFound, m);
    }
    const ToolDesc* tool = &spec.tools[index];
    if (tool->args_size > spec.args_storage_size) {
      return error(s, rq, kInternalError, "args storage too small");
    }
    {
      Msg m = scratch_msg(s);
      ArgsStatus st = decode_args(*tool, args, spec.args_storage, m);
      if (st == ArgsStatus::kDuplicate) return error(s, rq, kInvalidParams, m);
      if (st != ArgsStatus::kOk) {
        if (spec.jsonrpc_argument_errors) return error(s, rq, kInvalidParams, m);
        return tool_error_result(s, rq, m.str(), m.size());
      }
    }
    Context& ctx = s.ctx_;
    ctx.writer_.reset(nullptr, 0);  // "no object written" until the handler calls object()
    ctx.scratch_[0] = '\0';
    ctx.vision_ = &s.vision_;
    Result r = tool->invoke(spec.args_storage, ctx);

    ReturnKind kind = r.kind_;
    if (r.is_error_) {
      const char* msg = r.v_.s != nullptr ? r.v_.s : "tool failed";
      return tool_error_result(s, rq, msg, strlen(msg));
    }
    if (kind != tool->returns && !(kind == ReturnKind::kInteger && tool->returns == ReturnKind::kNumber)) {
      Msg m = head(s, kInternalError);
      m.add("handler of ", tool->name, " returned ")
          .add(return_kind_name(kind), ", the spec declares ", return_kind_name(tool->returns));
      return error(s, rq, kInternalError, m);
    }
    const char* obj = nullptr;
    size_t obj_len = 0;
    if (kind == ReturnKind::kObject) {
      JsonWriter& ow = ctx.writer_;
      Value v;
      const char* err = nullptr;
      if (ow.data() == nullptr || ow.overflowed() || ow.size() == 0 ||
          !json::validate(ctx.scratch_, ow.size(), &v, &err) || !v.is(Type::kObject)) {
        Msg m = head(s, kInternalError);
        m.add("handler of ", tool->name,
              ow.overflowed() ? " wrote an object larger than MCPGEN_SCRATCH_SIZE"
                              : " did not write a valid JSON object with Context::object()");
        return error(s, rq, kInternalError, m);
      }
      obj = ctx.scratch_;
      obj_len = ow.size();
    }
    JsonWriter w(rq.out, rq.cap);
    begin(s, w, rq);
    if (kind == ReturnKind::kBoolean) {  // the common case, in three pieces
      lit(w, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
      w.raw_fragment(r.v_.b ? "\"true\"" : "\"false\"", r.v_.b ? 6 : 7);
      w.raw_fragment("}],\"isError\":false}}}", rq.enveloped ? 21 : 20);
      return done(s, rq, w);
    }
    lit(w, ",\"result\":{\"content\":[");
    char num[32];
    switch (kind) {
      case ReturnKind::kNone: break;
      case ReturnKind::kBoolean: break;
      case ReturnKind::kInteger:
        if (tool->returns == ReturnKind::kNumber) {
          text_content(w, num, format_double(static_cast<double>(r.v_.i), num));
        } else {
          text_content(w, num, format_int64(r.v_.i, num));
        }
        break;
      case ReturnKind::kNumber: text_content(w, num, format_double(r.v_.d, num)); break;
      case ReturnKind::kString: {
        const char* t = r.v_.s != nullptr ? r.v_.s : "";
        text_content(w, t, strlen(t));
        break;
      }
      case ReturnKind::kObject: text_content(w, obj, obj_len); break;
      case ReturnKind::kImage:
        lit(w, "{\"type\":\"image\",\"data\":");
        str(w, r.v_.s != nullptr ? r.v_.s : "");
        lit(w, ",\"mimeType\":");
        str(w, r.mime_ != nullptr ? r.mime_ : "application/octet-stream");
        lit(w, "}");
        break;
    }
    lit(w, "]");
    if (kind == ReturnKind::kObject) {
      lit(w, ",\"structuredContent\":");
      w.raw_fragment(obj, obj_len);
    }
    lit(w, ",\"isError\":false}");
    return finish(s, rq, w);
  }

  // ------------------------------------------------------------ resources/* (resources.cpp)
  static size_t resources(Server& s, Request& rq, const Value& method, const Value& params) {
    JsonWriter w(rq.out, rq.cap);
    begin(s, w, rq);
    lit(w, ",\"result\":");
    size_t mlen = 0;
    char* msg = s.ctx_.scratch_;
    int code = s.spec_.resources->request(s.spec_, method, params, w, s.ctx_, msg, sizeof s.ctx_.scratch_, &mlen);
    if (code != 0) return error(s, rq, code, msg, mlen);
    return finish(s, rq, w);
  }

  // ------------------------------------------------------------ one message
  static size_t handle(Server& s, char* in, size_t len, char* out, size_t cap) {
    in[len] = '\0';
    Request rq;
    rq.out = out;
    rq.cap = cap;
    rq.enveloped = s.enveloped_;  // for replies before the framing is known
    json::Message m;
    const char* perr = nullptr;
    if (!json::read_message(in, len, &m, &perr)) {
      Msg msg = head(s, kParseError);
      msg.add(perr);
      return error(s, rq, kParseError, msg);
    }
    if (!m.root.is(Type::kObject)) {
      return error(s, rq, kInvalidRequest, "expected a JSON object");
    }
    rq.enveloped = false;
    json::Rpc* rpc = &m.top;
    if (m.top.type.is(Type::kString) && !m.top.jsonrpc.valid()) {
      if (m.top.type_duplicated) {  // a hello or an mcp message? Neither: change nothing.
        rq.enveloped = s.enveloped_;
        return error(s, rq, kInvalidRequest, "duplicate key \"type\"");
      }
      if (eq(m.top.type, "hello")) {
        if (!m.top.duplicate.valid()) {
          s.session_id_[0] = '\0';
          if (m.top.session_id.is(Type::kString)) set_session(s, m.top.session_id);
        }
        s.peer_hello_ = true;
        return 0;
      }
      if (!eq(m.top.type, "mcp")) return 0;  // other xiaozhi messages
      rq.enveloped = true;
      s.enveloped_ = true;
      // A duplicate envelope key is refused below: its session_id is not taken either.
      if (m.top.session_id.is(Type::kString) && !m.top.duplicate.valid()) {
        rq.session = m.top.session_id;
        set_session(s, m.top.session_id);
      }
      if (!m.top.payload.is(Type::kObject)) {
        return error(s, rq, kInvalidRequest, "the envelope's payload must be an object");
      }
      rpc = &m.inner;
    }
    // Everything below reads the members located by the walk; strings get decoded.
    Value id = rpc->id;
    bool notification = !id.valid();
    if (rpc->id_duplicated) {
      id = Value();  // which one? neither: reply with null
      notification = false;
    } else if (id.valid() && !id.is(Type::kString) && !id.is(Type::kNumber)) {
      bool was_null = id.is(Type::kNull);
      id = Value();
      rq.id = id;
      if (!was_null) {
        return error(s, rq, kInvalidRequest, "id must be a string or a number");
      }
      notification = false;
    } else if (json::has_lone_surrogate(id)) {  // echoed raw, strict parsers would refuse the reply
      rq.id = Value();
      return error(s, rq, kInvalidRequest, "id must be valid Unicode (it has a lone surrogate escape)");
    }
    rq.id = id;
    if (!rpc->method.valid() && rpc->response()) return 0;  // a response to the device: nothing to do
    // A key given twice could be read differently by the sender's JSON library: refuse.
    const Value& dup = m.top.duplicate.valid() ? m.top.duplicate : rpc->duplicate;
    if (dup.valid()) return quoted_error(s, rq, kInvalidRequest, "duplicate key ", dup);
    if (!eq(rpc->jsonrpc, "2.0")) {
      return error(s, rq, kInvalidRequest, "\"jsonrpc\" must be \"2.0\"");
    }
    const Value& method = rpc->method;
    const Value& params = rpc->params;
    if (!method.valid()) {
      return error(s, rq, kInvalidRequest, "missing method");
    }
    if (!method.is(Type::kString)) {
      return error(s, rq, kInvalidRequest, "method must be a string");
    }
    if (params.valid() && !params.is(Type::kObject) && !params.is(Type::kArray) &&
        !params.is(Type::kNull)) {
      return error(s, rq, kInvalidRequest, "params must be an object");
    }
    if (params.is(Type::kArray)) {
      return error(s, rq, kInvalidParams, "params must be an object");
    }
    if (rpc->p.duplicate.valid()) {
      if (notification) return 0;
      return quoted_error(s, rq, kInvalidParams, "duplicate key ", rpc->p.duplicate);
    }
    size_t n = 0;
    if (eq(method, "tools/call")) {
      n = tools_call(s, rq, rpc->p, params);
    } else if (eq(method, "tools/list")) {
      n = tools_list(s, rq, rpc->p);
    } else if (eq(method, "initialize")) {
      n = initialize(s, rq, rpc->p);
    } else if (s.spec_.resources != nullptr && method.n > 12 && memcmp(method.p, "\"resources/", 11) == 0) {
      n = resources(s, rq, method, params);
    } else if (eq(method, "ping")) {
      JsonWriter w(rq.out, rq.cap);
      begin(s, w, rq);
      lit(w, ",\"result\":{}");
      n = finish(s, rq, w);
    } else {
      if (notification) return 0;  // notifications/initialized, notifications/cancelled, ...
      size_t mlen = 0;
      const char* name = text_of(method, &mlen);
      Msg msg = head(s, kMethodNotFound);
      msg.quote(name, mlen, kQuoteLimit);
      return error(s, rq, kMethodNotFound, msg);
    }
    return notification ? 0 : n;
  }

  // ------------------------------------------------------------ oversized requests
  // The first part of a message that did not fit the request buffer: the framing, id and
  // session token when they were read whole before the cut.
  static size_t oversized(Server& s, const char* prefix, size_t n, char* out, size_t cap) {
    Request rq;
    rq.out = out;
    rq.cap = cap;
    rq.enveloped = s.enveloped_;
    json::Message m;
    if (prefix != nullptr && n > 0) {
      const char* err = nullptr;
      json::read_message(const_cast<char*>(prefix), n, &m, &err);  // read-only; fails at the cut
      const char* end = prefix + n;
      auto whole = [end](const Value& v) { return v.valid() && v.p + v.n < end; };
      const json::Rpc* rpc = nullptr;
      if (whole(m.top.type) && eq(m.top.type, "mcp")) {
        rq.enveloped = true;
        if (whole(m.top.session_id) && m.top.session_id.is(Type::kString)) rq.session = m.top.session_id;
        rpc = &m.inner;
      } else if (!m.top.type.valid()) {
        rpc = m.inner.id.valid() ? &m.inner : &m.top;
        rq.enveloped = rpc == &m.inner || (rq.enveloped && !m.top.jsonrpc.valid());
      }
      if (rpc != nullptr && whole(rpc->id) && !rpc->id_duplicated && !json::has_lone_surrogate(rpc->id) &&
          (rpc->id.is(Type::kString) || rpc->id.is(Type::kNumber))) {
        rq.id = rpc->id;
      }
    }
    Msg msg = head(s, kInvalidRequest);
    msg.add("message larger than the request buffer (")
        .add_int(MCPGEN_REQUEST_BUFFER_SIZE)
        .add(" bytes)");
    return error(s, rq, kInvalidRequest, msg);
  }
};

Server::Server(const SpecDesc& spec) : spec_(spec) {
  ctx_.vision_ = &vision_;
  reset_connection();  // the per-connection state starts empty
}

size_t Server::handle(char* in, size_t len, char* out, size_t out_cap) {
  return ServerImpl::handle(*this, in, len, out, out_cap);
}

size_t Server::oversized_reply(char* out, size_t out_cap) {
  return ServerImpl::oversized(*this, nullptr, 0, out, out_cap);
}

size_t Server::oversized_reply(const char* prefix, size_t prefix_len, char* out, size_t out_cap) {
  return ServerImpl::oversized(*this, prefix, prefix_len, out, out_cap);
}

size_t Server::notification(const char* method, const char* params_json, char* out, size_t out_cap) {
  if (method == nullptr) return 0;
  size_t plen = 0;
  if (params_json != nullptr) {
    plen = strlen(params_json);
    Value v;
    const char* err = nullptr;
    // validate() only reads the text (the char* is for in-place decoding elsewhere).
    if (!json::validate(const_cast<char*>(params_json), plen, &v, &err)) return 0;
  }
  ServerImpl::Request rq;  // no id, no session token: the connection's session_id
  rq.enveloped = enveloped_;
  JsonWriter w(out, out_cap);
  ServerImpl::open(*this, w, rq);
  lit(w, ",\"method\":");
  ServerImpl::str(w, method);
  if (params_json != nullptr) {
    lit(w, ",\"params\":");
    w.raw_fragment(params_json, plen);
  }
  ServerImpl::end(w, rq);
  return w.overflowed() ? 0 : w.size();
}

size_t Server::pending_notification(char* out, size_t out_cap) {
  if (!ctx_.notify_pending_) return 0;
  ctx_.notify_pending_ = false;
  const char* method = ctx_.notify_;
  const char* params = ctx_.notify_has_params_ ? method + strlen(method) + 1 : nullptr;
  return notification(method, params, out, out_cap);
}

size_t Server::hello(const char* transport, char* out, size_t out_cap) const {
  // Fixed text around the one variable part: smaller than a key-by-key build.
#define MCPGEN_STR2(x) #x
#define MCPGEN_STR(x) MCPGEN_STR2(x)
  JsonWriter w(out, out_cap);
  lit(w, "{\"type\":\"hello\",\"version\":" MCPGEN_STR(MCPGEN_XIAOZHI_PROTOCOL_VERSION)
         ",\"features\":{\"mcp\":true},\"transport\":");
  ServerImpl::str(w, transport != nullptr ? transport : "");
  lit(w, ",\"audio_params\":{\"format\":\"opus\",\"sample_rate\":16000,\"channels\":1,"
         "\"frame_duration\":60}}");
#undef MCPGEN_STR
#undef MCPGEN_STR2
  return w.overflowed() ? 0 : w.size();
}

void Server::set_session_id(const char* session_id) {
  size_t n = session_id != nullptr ? strlen(session_id) : 0;
  if (n >= sizeof session_id_) n = 0;
  memcpy(session_id_, session_id != nullptr ? session_id : "", n);
  session_id_[n] = '\0';
}

const char* Server::session_id() const { return session_id_; }
bool Server::peer_hello_received() const { return peer_hello_; }

void Server::reset_connection() {
  session_id_[0] = '\0';
  enveloped_ = false;
  peer_hello_ = false;
  vision_.present = false;
  vision_.url[0] = '\0';
  vision_.token[0] = '\0';
  ctx_.notify_pending_ = false;
  if (spec_.resources != nullptr) spec_.resources->reset();
}

void Server::set_user_data(void* p) { ctx_.user_data_ = p; }
const VisionConfig& Server::vision() const { return vision_; }
const SpecDesc& Server::spec() const { return spec_; }

}  // namespace mcpgen
