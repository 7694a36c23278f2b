// resources/list, resources/templates/list and resources/read (see resources.h).
#include "mcpgen/resources.h"

#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/text_format.h"

namespace mcpgen {

namespace {

using json::Type;
using json::Value;

constexpr int kInvalidParams = -32602;
constexpr int kMethodNotFound = -32601;
constexpr int kInternalError = -32603;
constexpr int kResourceNotFound = -32002;  // MCP: "Resource not found"
constexpr size_t kCursorLen = 12;  // like tools/list: 4 hex digits of index + 8 of check
constexpr size_t kQuoteLimit = 64;
constexpr uint8_t kMaxVariables = 8;  // == MAX_TEMPLATE_VARIABLES in codegen's rules

// An error message built in the caller's buffer, cut (never overrun) when it is full.
struct Text {
  char* p;
  size_t cap;
  size_t n = 0;
  Text(char* buf, size_t c) : p(buf), cap(c) {}
  Text& add(const char* s, size_t len) {
    if (len > cap - 1 - n) len = cap - 1 - n;
    memcpy(p + n, s, len);
    n += len;
    p[n] = '\0';
    return *this;
  }
  Text& add(const char* s) { return add(s, strlen(s)); }
  Text& quote(const char* s, size_t len) {
    add("\"");
    if (len > kQuoteLimit) {
      add(s, kQuoteLimit).add("...");
    } else {
      add(s, len);
    }
    return add("\"");
  }
  Text& num(int64_t v) {
    char tmp[21];
    return add(tmp, format_int64(v, tmp));
  }
};

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

// The check part of a cursor: FNV-1a over the index, the count, the kind of list and the
// spec fingerprint, so a tools/list cursor (or another spec's) is never accepted here.
void cursor_text(const SpecDesc& spec, bool templates, uint32_t index, char* out) {
  uint32_t h =
      (2166136261u ^ index) + (uint32_t{spec.resources->count} << 16) + (templates ? 0x7E000000u : 0x52000000u);
  for (const char* p = spec.fingerprint; *p != '\0'; ++p) h = (h ^ static_cast<uint8_t>(*p)) * 16777619u;
  for (int i = 11; i >= 0; --i) {
    uint32_t& v = i >= 4 ? h : index;
    out[i] = json::detail::kHexDigits[v & 15];
    v >>= 4;
  }
}

const char* text_of(const Value& v, size_t* len) {
  if (!v.esc) {
    *len = v.n - 2;
    return v.p + 1;
  }
  return json::unescape(v, len);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A template variable's value in the URI, and its name in the template (noted by the
// matcher, which passes over it anyway).
struct Span {
  char* p;
  size_t n;
  const char* name;
  size_t name_len;
};

// Which resources (by index, the first 32) a client subscribed to on this connection, and
// the table they index (set by the first resources/subscribe).
uint32_t g_subscribed = 0;
const ResourceTable* g_subscribed_table = nullptr;

}  // namespace

struct ResourceImpl {
  // Counts n more bytes of content: false (the chunk is dropped) when they exceed the
  // resource's max_size or the read already failed.
  static bool admit(ResourceWriter& out, size_t n) {
    if (out.max_size_ != 0 && n > out.max_size_ - out.size_) out.too_large_ = true;
    if (out.too_large_ || out.wrong_kind_ || out.w_.overflowed()) return false;
    out.size_ += n;
    return true;
  }

  // An escaped string between raw fragments (no comma bookkeeping, like ServerImpl::str).
  static void str(JsonWriter& w, const char* s, size_t n) {
    w.need_comma_ = false;
    w.string(s, n);
  }

  // n bytes at the end of the reply for the caller to fill (JsonWriter::put() without
  // the copy): nullptr when they do not fit (the writer overflows, as put() would) or
  // when measuring (they are only counted). Here, not in json_writer.cpp, so the writer
  // every tool reply uses compiles as before.
  static char* room(JsonWriter& w, size_t n) {
    if (w.overflow_) return nullptr;
    if (w.buf_ == nullptr) {
      w.len_ += n;
      return nullptr;
    }
    if (n > w.cap_ - w.len_) {
      w.overflow_ = true;
      return nullptr;
    }
    char* o = w.buf_ + w.len_;
    w.len_ += n;
    return o;
  }

  // A fixed piece of a read's reply: room() and a copy of a constant size, which the
  // compiler does inline (raw_fragment() pays a call of memcpy for these few bytes).
  template <size_t N>
  static void piece(JsonWriter& w, const char (&s)[N]) {
    if (char* o = room(w, N - 1)) memcpy(o, s, N - 1);
  }

  // ---------------------------------------------------------------- lists
  static int list(const SpecDesc& spec, bool templates, const json::Params& params, JsonWriter& w, Text& m) {
    const ResourceTable& t = *spec.resources;
    const Value& cursor = params.cursor;
    if (cursor.valid() && !cursor.is(Type::kString) && !cursor.is(Type::kNull)) {
      m.add("Invalid params: cursor must be a string");
      return kInvalidParams;
    }
    uint32_t start = 0;
    char text[kCursorLen];
    if (cursor.is(Type::kString) && cursor.n > 2) {
      size_t n = 0;
      const char* c = text_of(cursor, &n);
      start = n == kCursorLen ? json::detail::hex4(c) : 0x10000;
      if (start < t.count) cursor_text(spec, templates, start, text);
      if (start >= t.count || memcmp(text, c, kCursorLen) != 0) {
        m.add("Invalid params: unknown cursor ").quote(c, n);
        return kInvalidParams;
      }
    }
    auto listed = [&](uint32_t i) { return t.resources[i].is_template == templates; };
    // {"resources":[ or {"resourceTemplates":[, entries while they fit page_size, then
    // ] or ],"nextCursor":"<cursor>"} (the same budget as tools/list).
    const char* head = templates ? "{\"resourceTemplates\":[" : "{\"resources\":[";
    size_t size = strlen(head);
    constexpr size_t kMore = 15 + 1 + kCursorLen + 1 + 1;
    w.raw_fragment(head, size);
    uint32_t i = start;
    while (i < t.count && !listed(i)) ++i;
    uint32_t end_at = 0;
    bool first = true;
    while (i < t.count) {
      uint32_t nxt = i + 1;
      while (nxt < t.count && !listed(nxt)) ++nxt;
      const ResourceDesc& r = t.resources[i];
      size_t add = (first ? 0 : 1) + r.list_entry_len;
      if (size + add + (nxt < t.count ? kMore : 2) > spec.page_size) {
        if (first) {
          m.add("Internal error: resource ").add(r.name).add(" does not fit in a list page of ").num(spec.page_size);
          return kInternalError;
        }
        end_at = i;
        break;
      }
      if (!first) w.raw_fragment(",", 1);
      first = false;
      w.raw_fragment(r.list_entry, r.list_entry_len);
      size += add;
      i = nxt;
    }
    w.raw_fragment("]", 1);
    if (end_at != 0) {
      w.raw_fragment(",\"nextCursor\":\"", 15);
      cursor_text(spec, templates, end_at, text);
      w.raw_fragment(text, kCursorLen);
      w.raw_fragment("\"", 1);
    }
    w.raw_fragment("}", 1);
    return 0;
  }

  // ---------------------------------------------------------------- matching
  // Matches uri[0, n) against a level 1 template: literal bytes must be equal; a {var}
  // takes the bytes up to the first occurrence of the literal byte that follows it in
  // the template (or the rest of the URI when the template ends with it). Variable
  // values are percent-encoded in a URI, so they hold no reserved character.
  static bool match(const char* tpl, char* uri, size_t n, Span* vars, uint8_t* count) {
    size_t u = 0;
    *count = 0;
    for (;;) {
      // The literal bytes up to the next variable (or the end) compare as one block.
      const char* open = strchr(tpl, '{');
      size_t lit = open != nullptr ? static_cast<size_t>(open - tpl) : strlen(tpl);
      if (lit > n - u || memcmp(uri + u, tpl, lit) != 0) return false;
      u += lit;
      if (open == nullptr) return u == n;
      const char* name = open + 1;
      const char* close = strchr(name, '}');
      size_t name_len = close != nullptr ? static_cast<size_t>(close - name) : strlen(name);
      tpl = name + name_len + (close != nullptr ? 1 : 0);
      char stop = *tpl;  // '\0': the variable runs to the end (a NUL in the URI fails it)
      const void* at = memchr(uri + u, stop, n - u);
      size_t begin = u;
      if (at == nullptr && stop != '\0') return false;
      u = at != nullptr ? static_cast<size_t>(static_cast<const char*>(at) - uri) : n;
      if (*count >= kMaxVariables) return false;
      vars[*count] = Span{uri + begin, u - begin, name, name_len};
      ++*count;
      if (stop == '\0') return u == n;  // the template ends with this variable
    }
  }

  // The resource whose URI (or template) matches uri[0, n), or nullptr.
  static const ResourceDesc* find(const ResourceTable& t, char* uri, size_t n, Span* vars, uint8_t* count) {
    for (uint16_t i = 0; i < t.count; ++i) {
      const ResourceDesc& d = t.resources[i];
      if (!d.is_template) {
        if (strlen(d.uri) == n && memcmp(d.uri, uri, n) == 0) return &d;
      } else if (match(d.uri, uri, n, vars, count)) {
        return &d;
      }
    }
    return nullptr;
  }

  // The resource named by params.uri (its variables in vars), or an error code with its
  // message in m: the lookup resources/read and resources/(un)subscribe share.
  static int resource_of(const ResourceTable& t, const json::Params& params, Text& m, char** uri, size_t* n, Span* vars,
                         uint8_t* count, const ResourceDesc** found) {
    const Value& uri_v = params.uri;  // located by the request walk
    if (!uri_v.is(Type::kString)) {
      m.add("Invalid params: uri must be a string");
      return kInvalidParams;
    }
    *uri = const_cast<char*>(text_of(uri_v, n));
    *found = find(t, *uri, *n, vars, count);
    if (*found == nullptr) {
      m.add("Resource not found: ").quote(*uri, *n);
      return kResourceNotFound;
    }
    return 0;
  }

  // resources/subscribe and resources/unsubscribe: {} for a resource with `subscribe: true`.
  static int subscribe(const SpecDesc& spec, const json::Params& params, JsonWriter& w, Text& m, bool on) {
    const ResourceTable& t = *spec.resources;
    char* uri = nullptr;
    size_t n = 0;
    Span vars[kMaxVariables];
    uint8_t count = 0;
    const ResourceDesc* r = nullptr;
    if (int code = resource_of(t, params, m, &uri, &n, vars, &count, &r)) return code;
    if (!r->subscribe) {
      m.add("Invalid params: resource ").add(r->name).add(" does not support subscribe");
      return kInvalidParams;
    }
    size_t index = static_cast<size_t>(r - t.resources);
    if (index < 32) {
      uint32_t bit = uint32_t{1} << index;
      g_subscribed = on ? (g_subscribed | bit) : (g_subscribed & ~bit);
      g_subscribed_table = &t;
    }
    w.raw_fragment("{}", 2);
    return 0;
  }

  // Percent-decodes a span in place and NUL-terminates it (the byte after it is a
  // template literal already matched, or the string's end). False on a bad %XX.
  static bool percent_decode(Span& s) {
    if (memchr(s.p, '%', s.n) == nullptr) {  // the common case: nothing to decode
      s.p[s.n] = '\0';
      return true;
    }
    size_t o = 0;
    for (size_t i = 0; i < s.n; ++i) {
      char c = s.p[i];
      if (c == '%') {
        if (i + 2 >= s.n) return false;
        int hi = hex_value(s.p[i + 1]);
        int lo = hex_value(s.p[i + 2]);
        if (hi < 0 || lo < 0) return false;
        c = static_cast<char>(hi * 16 + lo);
        i += 2;
      }
      s.p[o++] = c;
    }
    s.p[o] = '\0';
    s.n = o;
    return true;
  }

  static bool valid_utf8(const char* s, size_t n) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
    const unsigned char* end = p + n;
    while (p < end) {
      if (*p < 0x80) {
        if (*p == 0) return false;
        ++p;
        continue;
      }
      size_t k = json::detail::utf8_seq(p, end);
      if (k == 0) return false;
      p += k;
    }
    return true;
  }

  static bool parse_int(const char* p, size_t n, int64_t* out) {
    bool neg = n > 0 && p[0] == '-';
    size_t i = neg ? 1 : 0;
    if (i >= n) return false;
    uint64_t u = 0;
    for (; i < n; ++i) {
      if (p[i] < '0' || p[i] > '9') return false;
      if (u > (UINT64_MAX - 9) / 10) return false;
      u = u * 10 + static_cast<uint64_t>(p[i] - '0');
    }
    if (u > (neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1)) return false;
    *out = neg ? static_cast<int64_t>(~u + 1) : static_cast<int64_t>(u);
    return true;
  }

  // The start of a variable's error message, written only when there is one (a read
  // that succeeds builds no message).
  static Text& bad(Text& m, const ParamDesc& d) {
    m.n = 0;
    return m.add("Invalid params: ").add(d.name).add(" ");
  }

  // Decodes one variable into the args struct, checked like a tool argument.
  // Inlined into both users of content() (resources/read and resource_embed), as it was
  // into read alone: the read path keeps its instructions; a firmware that embeds no
  // resource drops resource_embed's copy (--gc-sections).
  __attribute__((always_inline)) static inline bool decode(const ParamDesc& d, Span& s, void* args, Text& m) {
    char* base = static_cast<char*>(args) + d.offset;
    if (!percent_decode(s)) {
      bad(m, d).add("has a bad percent-encoding");
      return false;
    }
    switch (d.type) {
      case ParamType::kBoolean: {
        bool v = strcmp(s.p, "true") == 0;
        if (!v && strcmp(s.p, "false") != 0) {
          bad(m, d).add("must be true or false, got ").quote(s.p, s.n);
          return false;
        }
        memcpy(base, &v, sizeof v);
        return true;
      }
      case ParamType::kInteger: {
        int64_t v = 0;
        if (!parse_int(s.p, s.n, &v)) {
          bad(m, d).add("must be an integer, got ").quote(s.p, s.n);
          return false;
        }
        if ((d.has_min && v < d.int_min) || (d.has_max && v > d.int_max)) {
          bad(m, d).add("must be in range [").num(d.int_min).add(", ").num(d.int_max).add("], got ").num(v);
          return false;
        }
        memcpy(base, &v, sizeof v);
        return true;
      }
      case ParamType::kNumber: {
        double v = 0;
        if (!parse_double(s.p, s.n, &v) || v - v != 0.0) {
          bad(m, d).add("must be a number, got ").quote(s.p, s.n);
          return false;
        }
        if ((d.has_min && v < d.num_min) || (d.has_max && v > d.num_max)) {
          bad(m, d).add("is out of range, got ").quote(s.p, s.n);
          return false;
        }
        memcpy(base, &v, sizeof v);
        return true;
      }
      case ParamType::kString: {
        // A value of the enum, byte for byte, is UTF-8 without NUL: looked up first, so
        // the common case skips the UTF-8 scan; the checks below keep their order (and so
        // their messages) for any other value.
        bool listed = false;
        for (uint16_t k = 0; d.enum_values != nullptr && k < d.enum_count && !listed; ++k) {
          const char* e = d.enum_values[k];
          listed = e[0] == s.p[0] && strcmp(e, s.p) == 0 && strlen(e) == s.n;  // most differ at once
        }
        if (!listed && !valid_utf8(s.p, s.n)) {
          bad(m, d).add("must be UTF-8 text without NUL");
          return false;
        }
        if (d.max_length != 0 && json::utf8_length(s.p, s.n) > d.max_length) {
          bad(m, d).add("must be at most ").num(d.max_length).add(" characters, got ").quote(s.p, s.n);
          return false;
        }
        if (d.enum_values != nullptr) {
          if (!listed) {
            bad(m, d).add("must be one of");
            for (uint16_t k = 0; k < d.enum_count; ++k) m.add(k == 0 ? " " : ", ").add(d.enum_values[k]);
            m.add(", got ").quote(s.p, s.n);
            return false;
          }
        }
        const char* v = s.p;
        memcpy(base, &v, sizeof v);
        return true;
      }
      case ParamType::kObject: break;  // a URI variable is a scalar (the spec check)
    }
    return false;
  }

  // ---------------------------------------------------------------- read
  static int read(const SpecDesc& spec, const json::Params& params, JsonWriter& w, Context& ctx, Text& m) {
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

  // The content of resource r (after its opening quote): the template's variables decoded,
  // the handler called, its status checked. resources/read and embedded resources share it.
  __attribute__((always_inline)) static inline int content(const ResourceTable& t, const ResourceDesc& rd, Span* vars,
                                                           uint8_t var_count, JsonWriter& w, Context& ctx, Text& m) {
    const ResourceDesc* r = &rd;
    // Now the variables (in place: the URI was written above).
    for (uint8_t k = 0; k < var_count; ++k) {
      const char* name = vars[k].name;
      size_t name_len = vars[k].name_len;
      const ParamDesc* d = nullptr;
      for (uint8_t j = 0; j < r->param_count && d == nullptr; ++j) {
        const char* pn = r->params[j].name;
        if (strncmp(pn, name, name_len) == 0 && pn[name_len] == '\0') d = &r->params[j];
      }
      if (d == nullptr || !decode(*d, vars[k], t.args_storage, m)) {
        if (d == nullptr) m.add("Internal error: template variable without a parameter");
        return d == nullptr ? kInternalError : kInvalidParams;
      }
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
};

// ---------------------------------------------------------------- ResourceWriter

namespace {
const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";  // one copy
}  // namespace

void ResourceWriter::text(const char* s, size_t n) {
  if (binary_) wrong_kind_ = true;
  if (n == 0 || !ResourceImpl::admit(*this, n)) return;
  w_.escaped(s, n);  // straight into the reply, between the quotes read() wrote
}

void ResourceWriter::bytes(const void* data, size_t n) {
  if (!binary_) wrong_kind_ = true;
  if (n == 0 || !ResourceImpl::admit(*this, n)) return;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const uint8_t* end = p + n;
  uint8_t g[3];
  while (p < end) {
    uint8_t k = pending_n_;
    memcpy(g, pending_, k);
    while (k < 3 && p < end) g[k++] = *p++;
    if (k < 3) {  // keep the tail for the next call (or finish())
      memcpy(pending_, g, k);
      pending_n_ = k;
      return;
    }
    pending_n_ = 0;
    char q[4] = {kB64[g[0] >> 2], kB64[((g[0] & 3) << 4) | (g[1] >> 4)], kB64[((g[1] & 15) << 2) | (g[2] >> 6)],
                 kB64[g[2] & 63]};
    w_.put(q, 4);
  }
}

void ResourceWriter::finish() {
  if (pending_n_ == 0) return;
  uint8_t a = pending_[0];
  uint8_t b = pending_n_ > 1 ? pending_[1] : 0;
  char q[4] = {kB64[a >> 2], kB64[((a & 3) << 4) | (b >> 4)], pending_n_ > 1 ? kB64[(b & 15) << 2] : '=', '='};
  w_.put(q, 4);
  pending_n_ = 0;
}

// ---------------------------------------------------------------- entry points

void resource_subscriptions_reset() { g_subscribed = 0; }

namespace {
void write_uri_params(JsonWriter& w, const void* args) {
  w.begin_object();
  w.key("uri");
  w.string(static_cast<const char*>(args));
  w.end_object();
}
}  // namespace

EventStatus resource_updated(const char* uri) {
  const ResourceTable* t = g_subscribed_table;
  if (uri == nullptr) return EventStatus::kInvalidArgument;
  if (t == nullptr || g_subscribed == 0) return EventStatus::kNoPeer;
  // A copy to match in (the matcher reads spans of a writable buffer).
  char copy[256];
  size_t n = strlen(uri);
  if (n >= sizeof copy) return EventStatus::kInvalidArgument;
  memcpy(copy, uri, n + 1);
  Span vars[kMaxVariables];
  uint8_t count = 0;
  const ResourceDesc* r = ResourceImpl::find(*t, copy, n, vars, &count);
  if (r == nullptr) return EventStatus::kInvalidArgument;
  size_t index = static_cast<size_t>(r - t->resources);
  if (index >= 32 || (g_subscribed & (uint32_t{1} << index)) == 0) return EventStatus::kNoPeer;
  return emit_event("notifications/resources/updated", &write_uri_params, uri);
}

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
    const char* name = text_of(method, &n);
    m.add("Method not found: ").add(name, n > kQuoteLimit ? kQuoteLimit : n);  // as the server writes it
  }
  *msg_len = m.n;
  return code;
}

}  // namespace mcpgen
