// The MCP server core: JSON-RPC framing, dispatch, argument decoding and validation
// against the generated ParamDesc tables, result writing and tools/list paging.
// Works entirely inside the caller's buffers and the Server object: no heap.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"
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
  bool plain = true;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] == '.' || p[i] == 'e' || p[i] == 'E') plain = false;
  }
  bool neg = p[0] == '-';
  if (plain) {
    uint64_t limit = neg ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    uint64_t u = 0;
    for (size_t i = neg ? 1 : 0; i < n; ++i) {
      uint64_t d = static_cast<uint64_t>(p[i] - '0');
      if (u > (limit - d) / 10) return neg ? IntParse::kTooSmall : IntParse::kTooLarge;
      u = u * 10 + d;
    }
    *out = neg ? static_cast<int64_t>(~u + 1) : static_cast<int64_t>(u);
    return IntParse::kOk;
  }
  double d = 0;
  parse_double(p, n, &d);
  if (!isfinite(d) || d != floor(d)) {
    if (isfinite(d)) return IntParse::kNotInteger;
    return d > 0 ? IntParse::kTooLarge : IntParse::kTooSmall;
  }
  if (d >= 9223372036854775808.0) return IntParse::kTooLarge;
  if (d < -9223372036854775808.0) return IntParse::kTooSmall;
  *out = static_cast<int64_t>(d);
  return IntParse::kOk;
}

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
  r.b_ = v;
  return r;
}

Result Result::Int(int64_t v) {
  Result r;
  r.kind_ = ReturnKind::kInteger;
  r.i_ = v;
  return r;
}

Result Result::Number(double v) {
  Result r;
  r.kind_ = ReturnKind::kNumber;
  r.d_ = v;
  return r;
}

Result Result::Text(const char* s) {
  Result r;
  r.kind_ = ReturnKind::kString;
  r.s_ = s;
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
  r.s_ = base64_data;
  return r;
}

Result Result::Error(const char* message) {
  Result r;
  r.is_error_ = true;
  r.s_ = message;
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
  };

  // Opens any outgoing JSON-RPC message: the xiaozhi envelope when rq.enveloped (its
  // session_id: the request's, else the connection's), then {"jsonrpc":"2.0".
  static void open(const Server& s, JsonWriter& w, const Request& rq) {
    if (rq.enveloped) {
      w.begin_object();
      if (rq.session.is(Type::kString)) {
        w.key("session_id");
        w.raw(rq.session.p, rq.session.n);
      } else if (s.session_id_[0] != '\0') {
        w.key("session_id");
        w.string(s.session_id_);
      }
      w.key("type");
      w.string("mcp");
      w.key("payload");
    }
    w.begin_object();
    w.key("jsonrpc");
    w.string("2.0");
  }

  // Opens a reply to rq (up to its "id").
  static void begin(const Server& s, JsonWriter& w, const Request& rq) {
    open(s, w, rq);
    w.key("id");
    if (rq.id.valid()) {
      w.raw(rq.id.p, rq.id.n);
    } else {
      w.null();
    }
  }

  static void end(JsonWriter& w, const Request& rq) {
    w.end_object();
    if (rq.enveloped) w.end_object();
  }

  static size_t error(const Server& s, const Request& rq, int code, const char* msg, size_t msg_len,
                      char* out, size_t cap) {
    JsonWriter w(out, cap);
    begin(s, w, rq);
    w.key("error");
    w.begin_object();
    w.key("code");
    w.integer(code);
    w.key("message");
    w.string(msg, msg_len);
    w.end_object();
    end(w, rq);
    return w.overflowed() ? 0 : w.size();
  }

  static size_t error(const Server& s, const Request& rq, int code, const Msg& m, char* out, size_t cap) {
    return error(s, rq, code, m.str(), m.size(), out, cap);
  }

  static size_t error(const Server& s, const Request& rq, int code, const char* msg, char* out,
                      size_t cap) {
    return error(s, rq, code, msg, strlen(msg), out, cap);
  }

  // Completes a reply: the writer's text, or -32603 when it did not fit.
  static size_t finish(Server& s, const Request& rq, JsonWriter& w, char* out, size_t cap) {
    end(w, rq);
    if (!w.overflowed()) return w.size();
    Msg m(s.ctx_.scratch_, sizeof s.ctx_.scratch_);
    m.add("Internal error: response buffer too small for the reply (")
        .add_int(static_cast<int64_t>(cap))
        .add(" bytes; raise MCPGEN_RESPONSE_BUFFER_SIZE)");
    return error(s, rq, kInternalError, m, out, cap);
  }

  static Msg scratch_msg(Server& s) { return Msg(s.ctx_.scratch_, sizeof s.ctx_.scratch_); }

  // ------------------------------------------------------------ initialize
  static size_t initialize(Server& s, Request& rq, const Value& params, char* out, size_t cap) {
    const char* version = s.spec_.protocol_version;
    if (params.is(Type::kObject)) {
      Value pv = json::find(params, "protocolVersion");
      for (const char* v : kSupportedProtocols) {
        if (json::string_equals(pv, v)) version = v;
      }
      Value caps = json::find(params, "capabilities");
      Value vision = json::find(caps, "vision");
      Value url = json::find(vision, "url");
      if (url.is(Type::kString)) {
        VisionConfig& vc = s.vision_;
        bool ok = json::copy_string(url, vc.url, sizeof vc.url);
        Value token = json::find(vision, "token");
        vc.token[0] = '\0';
        if (ok && token.is(Type::kString)) ok = json::copy_string(token, vc.token, sizeof vc.token);
        vc.present = ok;
        if (!ok) {
          vc.url[0] = '\0';
          vc.token[0] = '\0';
        }
      }
    }
    JsonWriter w(out, cap);
    begin(s, w, rq);
    w.key("result");
    w.begin_object();
    w.key("protocolVersion");
    w.string(version);
    w.key("capabilities");
    w.begin_object();
    w.key("tools");
    w.begin_object();
    w.end_object();
    w.end_object();
    w.key("serverInfo");
    w.begin_object();
    w.key("name");
    w.string(s.spec_.device_name);
    w.key("version");
    w.string(s.spec_.device_version);
    w.end_object();
    w.key("_meta");
    w.begin_object();
    w.key("mcpgen/fingerprint");
    w.string(s.spec_.fingerprint);
    w.end_object();
    w.end_object();
    return finish(s, rq, w, out, cap);
  }

  // ------------------------------------------------------------ tools/list
  static size_t tools_list(Server& s, Request& rq, const Value& params, char* out, size_t cap) {
    const SpecDesc& spec = s.spec_;
    Value cursor, with_user;
    if (params.is(Type::kObject)) {
      cursor = json::find(params, "cursor");
      with_user = json::find(params, "withUserTools");
    }
    if (cursor.valid() && !cursor.is(Type::kString) && !cursor.is(Type::kNull)) {
      return error(s, rq, kInvalidParams, "Invalid params: cursor must be a string", out, cap);
    }
    if (with_user.valid() && !with_user.is(Type::kBool) && !with_user.is(Type::kNull)) {
      return error(s, rq, kInvalidParams, "Invalid params: withUserTools must be a boolean", out, cap);
    }
    bool user = with_user.is_true();
    uint16_t start = 0;
    if (cursor.is(Type::kString) && cursor.n > 2) {
      start = spec.tool_count;
      for (uint16_t i = 0; i < spec.tool_count; ++i) {
        if (json::string_equals(cursor, spec.tools[i].name)) {
          start = i;
          break;
        }
      }
      if (start == spec.tool_count) {
        size_t n = 0;
        char* c = json::unescape(cursor, &n);
        Msg m = scratch_msg(s);
        m.add("Invalid params: unknown cursor \"").quote(c, n, 64).add("\"");
        return error(s, rq, kInvalidParams, m, out, cap);
      }
    }
    auto visible = [&](uint16_t i) { return user || !spec.tools[i].user_only; };
    auto next_visible = [&](uint16_t i) -> int {
      for (uint16_t j = static_cast<uint16_t>(i + 1); j < spec.tool_count; ++j) {
        if (visible(j)) return j;
      }
      return -1;
    };
    // Choose the page: `{"tools":[` + entries + `]}` or `],"nextCursor":"<name>"}`.
    size_t size = 10;  // {"tools":[
    uint16_t count = 0;
    int end_at = -1;  // first tool not on this page (the cursor), -1: last page
    for (uint16_t i = start; i < spec.tool_count; ++i) {
      if (!visible(i)) continue;
      int nxt = next_visible(i);
      size_t closing = 2;  // ]}
      if (nxt >= 0) {
        JsonWriter measure(nullptr, 0);
        measure.string(spec.tools[nxt].name);
        closing = 15 + measure.size() + 1;  // ],"nextCursor": + "name" + }
      }
      size_t add = (count > 0 ? 1 : 0) + spec.tools[i].list_entry_len;
      if (size + add + closing > spec.page_size) {
        if (count == 0) {
          Msg m = scratch_msg(s);
          m.add("Internal error: tool ")
              .add(spec.tools[i].name)
              .add(" does not fit in a tools/list page of ")
              .add_int(spec.page_size)
              .add(" bytes");
          return error(s, rq, kInternalError, m, out, cap);
        }
        end_at = i;
        break;
      }
      size += add;
      ++count;
    }
    JsonWriter w(out, cap);
    begin(s, w, rq);
    w.key("result");
    w.begin_object();
    w.key("tools");
    w.begin_array();
    uint16_t stop = end_at >= 0 ? static_cast<uint16_t>(end_at) : spec.tool_count;
    for (uint16_t i = start; i < stop; ++i) {
      if (visible(i)) w.raw(spec.tools[i].list_entry, spec.tools[i].list_entry_len);
    }
    w.end_array();
    if (end_at >= 0) {
      w.key("nextCursor");
      w.string(spec.tools[end_at].name);
    }
    w.end_object();
    return finish(s, rq, w, out, cap);
  }

  // ------------------------------------------------------------ tools/call
  // An integer argument beyond a bound: "must be <= max" (op and bound; without a bound,
  // beyond int64: "must fit a 64-bit integer"), then ", got <its text>".
  static void int_out_of_range(Msg& head, bool has_bound, const char* op, int64_t bound, const Value& v) {
    if (has_bound) {
      head.add(op).add_int(bound);
    } else {
      head.add("must fit a 64-bit integer");
    }
    head.add(", got ").quote(v.p, v.n, 40);
  }

  // Decodes and checks the arguments into args; on a violation writes the message into m.
  static bool decode_args(const ToolDesc& tool, const Value& args, void* storage, Msg& m) {
    memset(storage, 0, tool.args_size);
    for (uint8_t i = 0; i < tool.param_count; ++i) {
      const ParamDesc& p = tool.params[i];
      if (p.required) continue;
      switch (p.type) {
        case ParamType::kBoolean: store(storage, p.offset, p.default_bool); break;
        case ParamType::kInteger: store(storage, p.offset, p.default_int); break;
        case ParamType::kNumber: store(storage, p.offset, p.default_num); break;
        case ParamType::kString: store(storage, p.offset, p.default_str); break;
      }
    }
    uint32_t seen[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // one bit per parameter (<= 255)
    Value k, v;
    json::ObjectIter it(args);
    while (it.next(&k, &v)) {
      const ParamDesc* p = nullptr;
      uint8_t index = 0;
      for (uint8_t i = 0; i < tool.param_count; ++i) {
        if (json::string_equals(k, tool.params[i].name)) {
          p = &tool.params[i];
          index = i;
          break;
        }
      }
      if (p == nullptr) {
        size_t n = 0;
        char* name = json::unescape(k, &n);
        m.add("unknown argument `").quote(name, n, 64).add("`");
        return false;
      }
      seen[index >> 5] |= uint32_t{1} << (index & 31);
      Msg& head = m.add("invalid argument `").add(p->name).add("`: ");
      if ((p->type == ParamType::kBoolean && !v.is(Type::kBool)) ||
          ((p->type == ParamType::kInteger || p->type == ParamType::kNumber) && !v.is(Type::kNumber)) ||
          (p->type == ParamType::kString && !v.is(Type::kString))) {
        head.add("must be ").add(param_type_name(p->type)).add(", got ").add(type_name(v.type));
        return false;
      }
      switch (p->type) {
        case ParamType::kBoolean:
          store(storage, p->offset, v.is_true());
          break;
        case ParamType::kInteger: {
          int64_t x = 0;
          IntParse r = parse_int(v.p, v.n, &x);
          if (r == IntParse::kNotInteger) {
            head.add("must be an integer, got ").quote(v.p, v.n, 40);
            return false;
          }
          if (r == IntParse::kTooLarge || (r == IntParse::kOk && p->has_max && x > p->int_max)) {
            int_out_of_range(head, p->has_max, "must be <= ", p->int_max, v);
            return false;
          }
          if (r == IntParse::kTooSmall || (p->has_min && x < p->int_min)) {
            int_out_of_range(head, p->has_min, "must be >= ", p->int_min, v);
            return false;
          }
          store(storage, p->offset, x);
          break;
        }
        case ParamType::kNumber: {
          double x = 0;
          parse_double(v.p, v.n, &x);
          if (!isfinite(x)) {
            head.add("must be a finite number, got ").quote(v.p, v.n, 40);
            return false;
          }
          if (p->has_max && x > p->num_max) {
            head.add("must be <= ").add_num(p->num_max).add(", got ").quote(v.p, v.n, 40);
            return false;
          }
          if (p->has_min && x < p->num_min) {
            head.add("must be >= ").add_num(p->num_min).add(", got ").quote(v.p, v.n, 40);
            return false;
          }
          store(storage, p->offset, x);
          break;
        }
        case ParamType::kString: {
          size_t n = 0;
          const char* str = json::unescape(v, &n);
          if (strlen(str) != n) {
            head.add("must not contain NUL characters");
            return false;
          }
          if (p->enum_values != nullptr) {
            bool ok = false;
            for (uint16_t e = 0; e < p->enum_count && !ok; ++e) ok = strcmp(str, p->enum_values[e]) == 0;
            if (!ok) {
              head.add("must be one of ");
              for (uint16_t e = 0; e < p->enum_count; ++e) head.add(e ? ", " : "").add(p->enum_values[e]);
              head.add("; got \"").quote(str, n, 64).add("\"");
              return false;
            }
          }
          if (p->max_length != 0) {
            size_t cps = json::utf8_length(str, n);
            if (cps > p->max_length) {
              head.add("must be at most ")
                  .add_int(p->max_length)
                  .add(" characters, got ")
                  .add_int(static_cast<int64_t>(cps));
              return false;
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
        m.add("missing required argument `").add(tool.params[i].name).add("`");
        return false;
      }
    }
    return true;
  }

  static void text_content(JsonWriter& w, const char* s, size_t n) {
    w.begin_object();
    w.key("type");
    w.string("text");
    w.key("text");
    w.string(s, n);
    w.end_object();
  }

  static size_t tool_result_error(Server& s, const Request& rq, const Msg& m, char* out, size_t cap) {
    JsonWriter w(out, cap);
    begin(s, w, rq);
    w.key("result");
    w.begin_object();
    w.key("content");
    w.begin_array();
    text_content(w, m.str(), m.size());
    w.end_array();
    w.key("isError");
    w.boolean(true);
    w.end_object();
    return finish(s, rq, w, out, cap);
  }

  static size_t tools_call(Server& s, Request& rq, const Value& params, char* out, size_t cap) {
    const SpecDesc& spec = s.spec_;
    if (!params.is(Type::kObject)) {
      return error(s, rq, kInvalidParams, "Invalid params: tools/call needs params {name, arguments}", out,
                   cap);
    }
    Value name = json::find(params, "name");
    Value args = json::find(params, "arguments");
    if (!name.is(Type::kString)) {
      return error(s, rq, kInvalidParams, "Invalid params: params.name must be a string", out, cap);
    }
    if (args.valid() && !args.is(Type::kObject) && !args.is(Type::kNull)) {
      return error(s, rq, kInvalidParams, "Invalid params: params.arguments must be an object", out, cap);
    }
    const ToolDesc* tool = nullptr;
    for (uint16_t i = 0; i < spec.tool_count && tool == nullptr; ++i) {
      if (json::string_equals(name, spec.tools[i].name)) tool = &spec.tools[i];
    }
    if (tool == nullptr) {
      size_t n = 0;
      char* nm = json::unescape(name, &n);
      Msg m = scratch_msg(s);
      m.add("Unknown tool: ").quote(nm, n, 128);
      return error(s, rq, kMethodNotFound, m, out, cap);
    }
    if (tool->args_size > spec.args_storage_size) {
      return error(s, rq, kInternalError, "Internal error: args storage too small", out, cap);
    }
    {
      Msg m = scratch_msg(s);
      if (!decode_args(*tool, args, spec.args_storage, m)) return tool_result_error(s, rq, m, out, cap);
    }
    Context& ctx = s.ctx_;
    ctx.writer_.reset(nullptr, 0);  // "no object written" until the handler calls object()
    ctx.scratch_[0] = '\0';
    ctx.vision_ = &s.vision_;
    Result r = tool->invoke(spec.args_storage, ctx);

    ReturnKind kind = r.kind_;
    if (r.is_error_) {
      const char* msg = r.s_ != nullptr ? r.s_ : "tool failed";
      JsonWriter w(out, cap);
      begin(s, w, rq);
      w.key("result");
      w.begin_object();
      w.key("content");
      w.begin_array();
      text_content(w, msg, strlen(msg));
      w.end_array();
      w.key("isError");
      w.boolean(true);
      w.end_object();
      return finish(s, rq, w, out, cap);
    }
    if (kind != tool->returns && !(kind == ReturnKind::kInteger && tool->returns == ReturnKind::kNumber)) {
      Msg m = scratch_msg(s);
      m.add("Internal error: handler of ")
          .add(tool->name)
          .add(" returned ")
          .add(return_kind_name(kind))
          .add(", the spec declares ")
          .add(return_kind_name(tool->returns));
      return error(s, rq, kInternalError, m, out, cap);
    }
    const char* obj = nullptr;
    size_t obj_len = 0;
    if (kind == ReturnKind::kObject) {
      JsonWriter& ow = ctx.writer_;
      Value v;
      const char* err = nullptr;
      if (ow.data() == nullptr || ow.overflowed() || ow.size() == 0 ||
          !json::validate(ctx.scratch_, ow.size(), &v, &err) || !v.is(Type::kObject)) {
        Msg m = scratch_msg(s);
        m.add("Internal error: handler of ").add(tool->name);
        m.add(ow.overflowed() ? " wrote an object larger than MCPGEN_SCRATCH_SIZE"
                              : " did not write a valid JSON object with Context::object()");
        return error(s, rq, kInternalError, m, out, cap);
      }
      obj = ctx.scratch_;
      obj_len = ow.size();
    }
    JsonWriter w(out, cap);
    begin(s, w, rq);
    w.key("result");
    w.begin_object();
    w.key("content");
    w.begin_array();
    char num[32];
    switch (kind) {
      case ReturnKind::kNone: break;
      case ReturnKind::kBoolean: text_content(w, r.b_ ? "true" : "false", r.b_ ? 4 : 5); break;
      case ReturnKind::kInteger:
        if (tool->returns == ReturnKind::kNumber) {
          text_content(w, num, format_double(static_cast<double>(r.i_), num));
        } else {
          text_content(w, num, format_int64(r.i_, num));
        }
        break;
      case ReturnKind::kNumber: text_content(w, num, format_double(r.d_, num)); break;
      case ReturnKind::kString: {
        const char* t = r.s_ != nullptr ? r.s_ : "";
        text_content(w, t, strlen(t));
        break;
      }
      case ReturnKind::kObject: text_content(w, obj, obj_len); break;
      case ReturnKind::kImage:
        w.begin_object();
        w.key("type");
        w.string("image");
        w.key("data");
        w.string(r.s_ != nullptr ? r.s_ : "");
        w.key("mimeType");
        w.string(r.mime_ != nullptr ? r.mime_ : "application/octet-stream");
        w.end_object();
        break;
    }
    w.end_array();
    if (kind == ReturnKind::kObject) {
      w.key("structuredContent");
      w.raw(obj, obj_len);
    }
    w.key("isError");
    w.boolean(false);
    w.end_object();
    return finish(s, rq, w, out, cap);
  }

  // ------------------------------------------------------------ one message
  static size_t handle(Server& s, char* in, size_t len, char* out, size_t cap) {
    in[len] = '\0';
    Request rq;
    rq.enveloped = s.enveloped_;  // for replies before the framing is known
    Value root;
    const char* perr = nullptr;
    if (!json::validate(in, len, &root, &perr)) {
      Msg m = scratch_msg(s);
      m.add("Parse error: ").add(perr);
      return error(s, rq, kParseError, m, out, cap);
    }
    if (!root.is(Type::kObject)) {
      return error(s, rq, kInvalidRequest, "Invalid Request: expected a JSON object", out, cap);
    }
    rq.enveloped = false;
    Value payload = root;
    Value type = json::find(root, "type");
    if (type.is(Type::kString) && !json::find(root, "jsonrpc").valid()) {
      Value session = json::find(root, "session_id");
      if (json::string_equals(type, "hello")) {
        if (session.is(Type::kString)) json::copy_string(session, s.session_id_, sizeof s.session_id_);
        s.peer_hello_ = true;
        return 0;
      }
      if (!json::string_equals(type, "mcp")) return 0;  // other xiaozhi messages
      rq.enveloped = true;
      s.enveloped_ = true;
      if (session.is(Type::kString)) {
        rq.session = session;
        char tmp[MCPGEN_SESSION_ID_SIZE];
        if (json::copy_string(session, tmp, sizeof tmp)) memcpy(s.session_id_, tmp, sizeof tmp);
      }
      payload = json::find(root, "payload");
      if (!payload.is(Type::kObject)) {
        return error(s, rq, kInvalidRequest, "Invalid Request: the envelope's payload must be an object",
                     out, cap);
      }
    }
    // Walk the payload once; nothing below walks it again (strings get decoded).
    Value id, method, params, version;
    bool response = false;
    {
      Value k, v;
      json::ObjectIter it(payload);
      while (it.next(&k, &v)) {
        if (json::string_equals(k, "id")) {
          id = v;
        } else if (json::string_equals(k, "method")) {
          method = v;
        } else if (json::string_equals(k, "params")) {
          params = v;
        } else if (json::string_equals(k, "jsonrpc")) {
          version = v;
        } else if (json::string_equals(k, "result") || json::string_equals(k, "error")) {
          response = true;
        }
      }
    }
    bool notification = !id.valid();
    if (id.valid() && !id.is(Type::kString) && !id.is(Type::kNumber)) {
      bool was_null = id.is(Type::kNull);
      id = Value();
      rq.id = id;
      if (!was_null) {
        return error(s, rq, kInvalidRequest, "Invalid Request: id must be a string or a number", out, cap);
      }
      notification = false;
    }
    rq.id = id;
    if (!method.valid() && response) return 0;  // a response to the device: nothing to do
    if (!json::string_equals(version, "2.0")) {
      return error(s, rq, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"", out, cap);
    }
    if (!method.valid()) {
      return error(s, rq, kInvalidRequest, "Invalid Request: missing method", out, cap);
    }
    if (!method.is(Type::kString)) {
      return error(s, rq, kInvalidRequest, "Invalid Request: method must be a string", out, cap);
    }
    if (params.valid() && !params.is(Type::kObject) && !params.is(Type::kArray) &&
        !params.is(Type::kNull)) {
      return error(s, rq, kInvalidRequest, "Invalid Request: params must be an object", out, cap);
    }
    if (params.is(Type::kArray)) {
      return error(s, rq, kInvalidParams, "Invalid params: params must be an object", out, cap);
    }
    size_t n = 0;
    if (json::string_equals(method, "initialize")) {
      n = initialize(s, rq, params, out, cap);
    } else if (json::string_equals(method, "tools/list")) {
      n = tools_list(s, rq, params, out, cap);
    } else if (json::string_equals(method, "tools/call")) {
      n = tools_call(s, rq, params, out, cap);
    } else if (json::string_equals(method, "ping")) {
      JsonWriter w(out, cap);
      begin(s, w, rq);
      w.key("result");
      w.begin_object();
      w.end_object();
      n = finish(s, rq, w, out, cap);
    } else {
      if (notification) return 0;  // notifications/initialized, notifications/cancelled, ...
      size_t mlen = 0;
      char* name = json::unescape(method, &mlen);
      Msg m = scratch_msg(s);
      m.add("Method not found: ").quote(name, mlen, 128);
      return error(s, rq, kMethodNotFound, m, out, cap);
    }
    return notification ? 0 : n;
  }
};

Server::Server(const SpecDesc& spec) : spec_(spec), enveloped_(false), peer_hello_(false) {
  vision_.present = false;
  vision_.url[0] = '\0';
  vision_.token[0] = '\0';
  session_id_[0] = '\0';
  ctx_.vision_ = &vision_;
}

size_t Server::handle(char* in, size_t len, char* out, size_t out_cap) {
  return ServerImpl::handle(*this, in, len, out, out_cap);
}

size_t Server::oversized_reply(char* out, size_t out_cap) {
  ServerImpl::Request rq;
  rq.enveloped = enveloped_;
  Msg m(ctx_.scratch_, sizeof ctx_.scratch_);
  m.add("Invalid Request: message larger than the request buffer (")
      .add_int(MCPGEN_REQUEST_BUFFER_SIZE)
      .add(" bytes)");
  return ServerImpl::error(*this, rq, kInvalidRequest, m, out, out_cap);
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
  w.key("method");
  w.string(method);
  if (params_json != nullptr) {
    w.key("params");
    w.raw(params_json, plen);
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
  JsonWriter w(out, out_cap);
  w.begin_object();
  w.key("type");
  w.string("hello");
  w.key("version");
  w.integer(MCPGEN_XIAOZHI_PROTOCOL_VERSION);
  w.key("features");
  w.begin_object();
  w.key("mcp");
  w.boolean(true);
  w.end_object();
  w.key("transport");
  w.string(transport);
  w.key("audio_params");
  w.begin_object();
  w.key("format");
  w.string("opus");
  w.key("sample_rate");
  w.integer(16000);
  w.key("channels");
  w.integer(1);
  w.key("frame_duration");
  w.integer(60);
  w.end_object();
  w.end_object();
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
}

void Server::set_user_data(void* p) { ctx_.user_data_ = p; }
const VisionConfig& Server::vision() const { return vision_; }
const SpecDesc& Server::spec() const { return spec_; }

}  // namespace mcpgen
