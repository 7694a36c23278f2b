#include "mcpgen/json_reader.h"

#include <string.h>

#include "mcpgen/mcp_core.h"

static_assert(MCPGEN_JSON_MAX_DEPTH >= 1 && MCPGEN_JSON_MAX_DEPTH <= 64,
              "MCPGEN_JSON_MAX_DEPTH must be 1..64 (one bit per level)");

namespace mcpgen {
namespace json {
namespace {

inline bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline const char* skip_ws(const char* p, const char* end) {
  while (p < end && is_ws(*p)) ++p;
  return p;
}

inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), 0 if malformed.
size_t utf8_seq(const unsigned char* p, const unsigned char* end) {
  unsigned char c = p[0];
  size_t avail = static_cast<size_t>(end - p);
  if (c >= 0xC2 && c <= 0xDF) return (avail >= 2 && is_cont(p[1])) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || !is_cont(p[1]) || !is_cont(p[2])) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong
    if (c == 0xED && p[1] > 0x9F) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || !is_cont(p[1]) || !is_cont(p[2]) || !is_cont(p[3])) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && p[1] > 0x8F) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

// p at the opening quote; returns the position after the closing quote, or nullptr.
const char* scan_string(const char* p, const char* end, const char** error) {
  ++p;
  while (p < end) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') return p + 1;
    if (c == '\\') {
      if (p + 1 >= end) break;
      char e = p[1];
      if (e == 'u') {
        if (end - p < 6 || hex_digit(p[2]) < 0 || hex_digit(p[3]) < 0 || hex_digit(p[4]) < 0 ||
            hex_digit(p[5]) < 0) {
          *error = "invalid \\u escape";
          return nullptr;
        }
        p += 6;
        continue;
      }
      if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' &&
          e != 't') {
        *error = "invalid escape in string";
        return nullptr;
      }
      p += 2;
      continue;
    }
    if (c < 0x20) {
      *error = "control character in string";
      return nullptr;
    }
    if (c >= 0x80) {
      size_t n = utf8_seq(reinterpret_cast<const unsigned char*>(p),
                          reinterpret_cast<const unsigned char*>(end));
      if (n == 0) {
        *error = "invalid UTF-8 in string";
        return nullptr;
      }
      p += n;
      continue;
    }
    ++p;
  }
  *error = "unterminated string";
  return nullptr;
}

const char* scan_digits(const char* p, const char* end) {
  while (p < end && *p >= '0' && *p <= '9') ++p;
  return p;
}

const char* scan_number(const char* p, const char* end) {
  if (p < end && *p == '-') ++p;
  if (p >= end) return nullptr;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    p = scan_digits(p, end);
  } else {
    return nullptr;
  }
  if (p < end && *p == '.') {
    ++p;
    const char* q = scan_digits(p, end);
    if (q == p) return nullptr;
    p = q;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    const char* q = scan_digits(p, end);
    if (q == p) return nullptr;
    p = q;
  }
  return p;
}

const char* scan_literal(const char* p, const char* end, const char* lit) {
  size_t n = strlen(lit);
  if (static_cast<size_t>(end - p) < n || memcmp(p, lit, n) != 0) return nullptr;
  return p + n;
}

Type type_of(char c) {
  switch (c) {
    case '{': return Type::kObject;
    case '[': return Type::kArray;
    case '"': return Type::kString;
    case 't':
    case 'f': return Type::kBool;
    case 'n': return Type::kNull;
    default: return Type::kNumber;
  }
}

// Skips one value of already validated text; returns the position after it.
char* skip_value(char* p, char* end) {
  if (p >= end) return p;
  if (*p == '"') {
    ++p;
    while (p < end && *p != '"') p += (*p == '\\') ? 2 : 1;
    return p < end ? p + 1 : end;
  }
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < end) {
      char c = *p;
      if (c == '"') {
        ++p;
        while (p < end && *p != '"') p += (*p == '\\') ? 2 : 1;
        ++p;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return p + 1;
      }
      ++p;
    }
    return end;
  }
  while (p < end && *p != ',' && *p != '}' && *p != ']' && !is_ws(*p)) ++p;
  return p;
}

// Decodes one unit of string content at p (not the closing quote) into out; returns
// the number of bytes produced and advances p.
size_t decode_one(const char*& p, unsigned char out[4]) {
  if (*p != '\\') {
    out[0] = static_cast<unsigned char>(*p++);
    return 1;
  }
  char e = p[1];
  p += 2;
  switch (e) {
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'u': break;
    default: out[0] = static_cast<unsigned char>(e); return 1;  // " \ /
  }
  uint32_t cp = 0;
  for (int i = 0; i < 4; ++i) cp = (cp << 4) | static_cast<uint32_t>(hex_digit(p[i]));
  p += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t lo = 0;
    bool pair = p[0] == '\\' && p[1] == 'u';
    if (pair) {
      for (int i = 0; i < 4 && pair; ++i) {
        int d = hex_digit(p[2 + i]);
        if (d < 0) pair = false;
        lo = (lo << 4) | static_cast<uint32_t>(d < 0 ? 0 : d);
      }
      pair = pair && lo >= 0xDC00 && lo <= 0xDFFF;
    }
    if (pair) {
      p += 6;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else {
      cp = 0xFFFD;
    }
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    cp = 0xFFFD;
  }
  if (cp < 0x80) {
    out[0] = static_cast<unsigned char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<unsigned char>(0xC0 | (cp >> 6));
    out[1] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<unsigned char>(0xE0 | (cp >> 12));
    out[1] = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<unsigned char>(0xF0 | (cp >> 18));
  out[1] = static_cast<unsigned char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace

bool validate(char* text, size_t len, Value* out, const char** error) {
  const char* const begin = text;
  const char* const end = text + len;
  const char* p = skip_ws(begin, end);
  const char* value_start = p;
  uint64_t stack = 0;  // bit set: object at that depth, clear: array
  int depth = 0;
  const char* err = "unexpected end of input";

  // States: expecting a value, or just finished one.
  for (;;) {
    // ---- expect a value at p
    p = skip_ws(p, end);
    if (p >= end) goto fail;
    {
      char c = *p;
      if (c == '{' || c == '[') {
        if (depth >= MCPGEN_JSON_MAX_DEPTH) {
          err = "nesting too deep";
          goto fail;
        }
        bool obj = c == '{';
        if (obj) {
          stack |= (uint64_t{1} << depth);
        } else {
          stack &= ~(uint64_t{1} << depth);
        }
        ++depth;
        p = skip_ws(p + 1, end);
        if (p < end && *p == (obj ? '}' : ']')) {
          --depth;
          ++p;
          goto after_value;
        }
        if (obj) goto expect_key;
        continue;  // array element
      }
      if (c == '"') {
        p = scan_string(p, end, &err);
      } else if (c == 't') {
        p = scan_literal(p, end, "true");
        err = "invalid literal";
      } else if (c == 'f') {
        p = scan_literal(p, end, "false");
        err = "invalid literal";
      } else if (c == 'n') {
        p = scan_literal(p, end, "null");
        err = "invalid literal";
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        p = scan_number(p, end);
        err = "invalid number";
      } else {
        err = "unexpected character";
        p = nullptr;
      }
      if (p == nullptr) goto fail;
    }
  after_value:
    p = skip_ws(p, end);
    if (depth == 0) {
      if (p != end) {
        err = "trailing characters after JSON value";
        goto fail;
      }
      out->p = const_cast<char*>(value_start);
      {
        const char* q = end;
        while (q > value_start && is_ws(q[-1])) --q;
        out->n = static_cast<size_t>(q - value_start);
      }
      out->type = type_of(*value_start);
      return true;
    }
    if (p >= end) goto fail;
    {
      bool obj = (stack >> (depth - 1)) & 1;
      if (*p == ',') {
        ++p;
        if (obj) goto expect_key;
        continue;
      }
      if (*p == (obj ? '}' : ']')) {
        --depth;
        ++p;
        goto after_value;
      }
      err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
      goto fail;
    }
  expect_key:
    p = skip_ws(p, end);
    if (p >= end || *p != '"') {
      err = "expected a string key";
      goto fail;
    }
    p = scan_string(p, end, &err);
    if (p == nullptr) goto fail;
    p = skip_ws(p, end);
    if (p >= end || *p != ':') {
      err = "expected ':'";
      goto fail;
    }
    ++p;
  }
fail:
  *error = err;
  return false;
}

Value find(const Value& obj, const char* key) {
  Value k, v;
  if (obj.type == Type::kObject) {
    ObjectIter it(obj);
    while (it.next(&k, &v)) {
      if (string_equals(k, key)) return v;
    }
  }
  return Value();
}

ObjectIter::ObjectIter(const Value& obj) : p_(nullptr), end_(nullptr) {
  if (obj.type == Type::kObject && obj.n >= 2) {
    p_ = obj.p + 1;
    end_ = obj.p + obj.n - 1;
  }
}

bool ObjectIter::next(Value* key, Value* value) {
  if (p_ == nullptr) return false;
  while (p_ < end_ && (is_ws(*p_) || *p_ == ',')) ++p_;
  if (p_ >= end_ || *p_ != '"') return false;
  char* k = p_;
  char* after = skip_value(p_, end_);
  key->p = k;
  key->n = static_cast<size_t>(after - k);
  key->type = Type::kString;
  p_ = after;
  while (p_ < end_ && (is_ws(*p_) || *p_ == ':')) ++p_;
  char* v = p_;
  after = skip_value(p_, end_);
  value->p = v;
  value->n = static_cast<size_t>(after - v);
  value->type = v < end_ ? type_of(*v) : Type::kInvalid;
  p_ = after;
  return value->type != Type::kInvalid;
}

bool string_equals(const Value& s, const char* lit, size_t lit_len) {
  if (s.type != Type::kString || s.n < 2) return false;
  const char* p = s.p + 1;
  const char* end = s.p + s.n - 1;
  size_t i = 0;
  unsigned char buf[4];
  while (p < end) {
    size_t n = decode_one(p, buf);
    if (i + n > lit_len || memcmp(buf, lit + i, n) != 0) return false;
    i += n;
  }
  return i == lit_len;
}

bool string_equals(const Value& s, const char* lit) { return string_equals(s, lit, strlen(lit)); }

char* unescape(const Value& s, size_t* len) {
  char* dst = s.p + 1;
  char* const start = dst;
  const char* p = s.p + 1;
  const char* end = s.p + s.n - 1;
  unsigned char buf[4];
  while (p < end) {
    size_t n = decode_one(p, buf);
    memcpy(dst, buf, n);  // dst never overtakes p: every escape shrinks or keeps size
    dst += n;
  }
  *dst = '\0';
  if (len != nullptr) *len = static_cast<size_t>(dst - start);
  return start;
}

bool copy_string(const Value& s, char* dst, size_t cap) {
  if (cap == 0) return false;
  dst[0] = '\0';
  if (s.type != Type::kString || s.n < 2) return false;
  const char* p = s.p + 1;
  const char* end = s.p + s.n - 1;
  size_t len = 0;
  unsigned char buf[4];
  while (p < end) {
    size_t n = decode_one(p, buf);
    if (len + n >= cap) {
      dst[0] = '\0';
      return false;
    }
    memcpy(dst + len, buf, n);
    len += n;
  }
  dst[len] = '\0';
  return true;
}

size_t utf8_length(const char* s, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++count;
  }
  return count;
}

}  // namespace json
}  // namespace mcpgen
