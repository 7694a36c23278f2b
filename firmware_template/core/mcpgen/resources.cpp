// resources/*: the dispatch of its methods, and resources/read with the embedded read
// (the content of one resource written straight into a reply). The other parts are in
// resource_*.cpp (see resource_impl.h).
#include <string.h>

#include "mcpgen/resource_impl.h"

namespace mcpgen {

namespace {

using json::Type;
using json::Value;
using Text = ResourceImpl::Text;
using Span = ResourceImpl::Span;
constexpr int kMethodNotFound = ResourceImpl::kMethodNotFound;
constexpr int kInternalError = ResourceImpl::kInternalError;
constexpr size_t kQuoteLimit = ResourceImpl::kQuoteLimit;
constexpr uint8_t kMaxVariables = ResourceImpl::kMaxVariables;

// An unescaped method (the common case) compares as raw bytes. Out of line: one copy for
// the five methods.
__attribute__((noinline)) bool method_is(const Value& v, const char* lit, size_t n) {
  if (!v.esc) return v.n - 2 == n && memcmp(v.p + 1, lit, n) == 0;
  return json::string_equals(v, lit, n);
}

template <size_t N>
inline bool method_is(const Value& v, const char (&lit)[N]) {
  return method_is(v, lit, N - 1);
}

}  // namespace

// ---------------------------------------------------------------- read
// The content of resource rd (after its opening quote): its variables decoded (in place:
// the URI was written before), the handler called, its status checked.
int ResourceImpl::content(const ResourceTable& t, const ResourceDesc& rd, Span* vars, uint8_t var_count, JsonWriter& w,
                          Context& ctx, Text& m) {
  const ResourceDesc* r = &rd;
  if (var_count != 0) {
    if (int code = decode_vars(*r, vars, var_count, t.args_storage, m)) return code;
  }
  ResourceWriter out(w, r->binary, r->max_size);
  ReadStatus st = r->read(t.args_storage, out, ctx);
  if (r->binary) out.finish();  // the last base64 group
  if (st == ReadStatus::kNotFound) {
    m.add("Resource not found: ").add(r->name).add(" has nothing at this URI");
    return kResourceNotFound;
  }
  if (st != ReadStatus::kOk) {
    m.add("Internal error: reading resource ").add(r->name).add(" failed");
    return kInternalError;
  }
  if (out.wrong_kind_) {
    m.add("Internal error: resource ")
        .add(r->name)
        .add(r->binary ? " is binary: write it with bytes()" : " is text: write it with text()");
    return kInternalError;
  }
  if (out.too_large_) {
    m.add("Internal error: resource ")
        .add(r->name)
        .add(" is larger than its max_size (")
        .num(r->max_size)
        .add(" bytes)");
    return kInternalError;
  }
  return 0;
}

int ResourceImpl::read(const SpecDesc& spec, const json::Params& params, JsonWriter& w, Context& ctx, Text& m) {
  const ResourceTable& t = *spec.resources;
  // Find the resource before decoding: the reply echoes the URI as it came.
  char* uri = nullptr;
  size_t n = 0;
  Span vars[kMaxVariables];
  uint8_t var_count = 0;
  const ResourceDesc* r = nullptr;
  if (int code = resource_of(t, params, m, &uri, &n, vars, &var_count, &r)) return code;
  static const char kHead[] = ",\"result\":{\"contents\":[{\"uri\":";
  static const char kMime[] = ",\"mimeType\":";
  const Value& u = params.uri;
  if (!u.esc) {
    // The token as it came (exactly what str() would write for it) between the two
    // fixed pieces: one bounds check and three copies instead of three raw_fragment()
    // calls (each ~35 instructions; the small read's largest fixed cost after the walk).
    if (char* o = room(w, sizeof kHead - 1 + u.n + sizeof kMime - 1)) {
      memcpy(o, kHead, sizeof kHead - 1);
      memcpy(o + sizeof kHead - 1, u.p, u.n);
      memcpy(o + sizeof kHead - 1 + u.n, kMime, sizeof kMime - 1);
    }
  } else {
    w.raw_fragment(kHead, sizeof kHead - 1);
    str(w, uri, n);
    w.raw_fragment(kMime, sizeof kMime - 1);
  }
  str(w, r->mime_type, strlen(r->mime_type));
  w.raw_fragment(r->binary ? ",\"blob\":\"" : ",\"text\":\"", 9);
  if (int code = content(t, *r, vars, var_count, w, ctx, m)) return code;
  piece(w, "\"}]}");
  return 0;  // an overflowed writer is reported by the server (buffer too small)
}

// ---------------------------------------------------------------- entry points

int resource_embed(const SpecDesc& spec, const char* uri, JsonWriter& w, Context& ctx, char* msg, size_t msg_cap,
                   size_t* msg_len) {
  Text m(msg, msg_cap);
  const ResourceTable& t = *spec.resources;
  // A copy to match in: the matcher percent-decodes the variables in place.
  char copy[256];
  size_t n = uri != nullptr ? strlen(uri) : 0;
  Span vars[kMaxVariables];
  uint8_t count = 0;
  const ResourceDesc* r = nullptr;
  if (uri != nullptr && n < sizeof copy) {
    memcpy(copy, uri, n + 1);
    r = ResourceImpl::find(t, copy, n, vars, &count);
  }
  if (r == nullptr) {
    m.add("Internal error: the embedded resource ").quote(uri != nullptr ? uri : "", n);
    m.add(n < sizeof copy ? " is no resource of the spec" : " is longer than 255 bytes");
    *msg_len = m.n;
    return kInternalError;
  }
  static const char kHead[] = "{\"type\":\"resource\",\"resource\":{\"uri\":";
  w.raw_fragment(kHead, sizeof kHead - 1);
  ResourceImpl::str(w, uri, n);
  w.raw_fragment(",\"mimeType\":", 12);
  ResourceImpl::str(w, r->mime_type, strlen(r->mime_type));
  w.raw_fragment(r->binary ? ",\"blob\":\"" : ",\"text\":\"", 9);
  int code = ResourceImpl::content(t, *r, vars, count, w, ctx, m);
  if (code == 0) w.raw_fragment("\"}}", 3);
  *msg_len = m.n;
  return code;
}

int resource_request(const SpecDesc& spec, const json::Value& method, const json::Params& params, JsonWriter& w,
                     Context& ctx, char* msg, size_t msg_cap, size_t* msg_len) {
  Text m(msg, msg_cap);
  int code = kMethodNotFound;
  // resources/read, the common request, unescaped: the server routes here only methods
  // that start with the raw bytes "resources/ (mcp_server.cpp), so its length and its
  // last four bytes tell it, in one load and compare (method_is() costs a call and a
  // memcmp); method_is() still decides any escaped spelling.
  bool read = false;
  if (!method.esc) {
    uint32_t tail = 0, want;
    if (method.n == sizeof "\"resources/read\"" - 1) memcpy(&tail, method.p + sizeof "\"resources/" - 1, 4);
    memcpy(&want, "read", 4);
    read = tail == want;
  } else {
    read = method_is(method, "resources/read");
  }
  if (read) {  // writes its "result" key with the first bytes
    code = ResourceImpl::read(spec, params, w, ctx, m);
    *msg_len = m.n;
    return code;
  }
  w.raw_fragment(",\"result\":", 10);
  if (method_is(method, "resources/list")) {
    code = ResourceImpl::list(spec, false, params, w, m);
  } else if (method_is(method, "resources/templates/list")) {
    code = ResourceImpl::list(spec, true, params, w, m);
  } else if (method_is(method, "resources/subscribe")) {
    code = ResourceImpl::subscribe(spec, params, w, m, true);
  } else if (method_is(method, "resources/unsubscribe")) {
    code = ResourceImpl::subscribe(spec, params, w, m, false);
  } else {
    size_t n = 0;
    const char* name = ResourceImpl::text_of(method, &n);
    m.add("Method not found: ").add(name, n > kQuoteLimit ? kQuoteLimit : n);  // as the server writes it
  }
  *msg_len = m.n;
  return code;
}

}  // namespace mcpgen
