// Resource URIs: a URI matched against the table (fixed URIs and RFC 6570 level 1
// templates), and a template's variables percent-decoded and checked like tool arguments,
// one decoder per parameter type (see resource_impl.h).
#include <string.h>

#include "mcpgen/resource_impl.h"

namespace mcpgen {

namespace {

using json::Type;
using json::Value;
using Text = ResourceImpl::Text;
using Span = ResourceImpl::Span;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes a span in place and NUL-terminates it (the byte after it is a
// template literal already matched, or the string's end). False on a bad %XX.
bool percent_decode(Span& s) {
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

bool valid_utf8(const char* s, size_t n) {
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

bool parse_int(const char* p, size_t n, int64_t* out) {
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

// The start of a variable's error message, written only when there is one (a read that
// succeeds builds no message).
Text& bad(Text& m, const ParamDesc& d) {
  m.n = 0;
  return m.add("Invalid params: ").add(d.name).add(" ");
}

// ---------------------------------------------------------------- one variable
// The decoders of one variable's text (percent-decoded, NUL-terminated), one per
// ParamType: checked against the parameter and stored at base; false with the message in
// m on a violation.

bool decode_bool(const ParamDesc& d, const Span& s, char* base, Text& m) {
  bool v = strcmp(s.p, "true") == 0;
  if (!v && strcmp(s.p, "false") != 0) {
    bad(m, d).add("must be true or false, got ").quote(s.p, s.n);
    return false;
  }
  memcpy(base, &v, sizeof v);
  return true;
}

bool decode_int(const ParamDesc& d, const Span& s, char* base, Text& m) {
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

bool decode_number(const ParamDesc& d, const Span& s, char* base, Text& m) {
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

bool decode_string(const ParamDesc& d, const Span& s, char* base, Text& m) {
  // A value of the enum, byte for byte, is UTF-8 without NUL: looked up first, so the
  // common case skips the UTF-8 scan; the checks below keep their order (and so their
  // messages) for any other value.
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
  if (d.enum_values != nullptr && !listed) {
    bad(m, d).add("must be one of");
    for (uint16_t k = 0; k < d.enum_count; ++k) m.add(k == 0 ? " " : ", ").add(d.enum_values[k]);
    m.add(", got ").quote(s.p, s.n);
    return false;
  }
  const char* v = s.p;
  memcpy(base, &v, sizeof v);
  return true;
}

// One variable: percent-decoded in place, then its ParamType's decoder.
inline bool decode(const ParamDesc& d, Span& s, void* args, Text& m) {
  char* base = static_cast<char*>(args) + d.offset;
  if (!percent_decode(s)) {
    bad(m, d).add("has a bad percent-encoding");
    return false;
  }
  switch (d.type) {
    case ParamType::kBoolean: return decode_bool(d, s, base, m);
    case ParamType::kInteger: return decode_int(d, s, base, m);
    case ParamType::kNumber: return decode_number(d, s, base, m);
    case ParamType::kString: return decode_string(d, s, base, m);
    case ParamType::kObject: break;  // a URI variable is a scalar (the spec check)
  }
  return false;
}

// The parameter of the template variable named name[0, name_len), or nullptr.
inline const ParamDesc* param_of(const ResourceDesc& r, const char* name, size_t name_len) {
  for (uint8_t j = 0; j < r.param_count; ++j) {
    const char* pn = r.params[j].name;
    if (strncmp(pn, name, name_len) == 0 && pn[name_len] == '\0') return &r.params[j];
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------- matching
// Matches uri[0, n) against a level 1 template: literal bytes must be equal; a {var}
// takes the bytes up to the first occurrence of the literal byte that follows it in
// the template (or the rest of the URI when the template ends with it). Variable
// values are percent-encoded in a URI, so they hold no reserved character.
bool ResourceImpl::match(const char* tpl, char* uri, size_t n, Span* vars, uint8_t* count) {
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
const ResourceDesc* ResourceImpl::find(const ResourceTable& t, char* uri, size_t n, Span* vars, uint8_t* count) {
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
int ResourceImpl::resource_of(const ResourceTable& t, const json::Params& params, Text& m, char** uri, size_t* n,
                              Span* vars, uint8_t* count, const ResourceDesc** found) {
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

// ---------------------------------------------------------------- variables
int ResourceImpl::decode_vars(const ResourceDesc& r, Span* vars, uint8_t count, void* args, Text& m) {
  for (uint8_t k = 0; k < count; ++k) {
    const ParamDesc* d = param_of(r, vars[k].name, vars[k].name_len);
    if (d == nullptr) {
      m.add("Internal error: template variable without a parameter");
      return kInternalError;
    }
    if (!decode(*d, vars[k], args, m)) return kInvalidParams;
  }
  return 0;
}

}  // namespace mcpgen
