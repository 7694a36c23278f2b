#include "mcpgen/json_reader.h"

#include <stddef.h>
#include <string.h>

#include "mcpgen/mcp_core.h"

static_assert(MCPGEN_JSON_MAX_DEPTH >= 1 && MCPGEN_JSON_MAX_DEPTH <= 64,
              "MCPGEN_JSON_MAX_DEPTH must be 1..64 (the checker keeps a byte per level on the stack)");

namespace mcpgen {
namespace json {
namespace {

using detail::flags_of;
using detail::kHigh;
using detail::same_bytes;
using detail::Word;

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

}  // namespace

uint32_t detail::hex4(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    int d = hex_digit(p[i]);
    if (d < 0) return 0x10000;
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  return v;
}

namespace {

using detail::hex4;

inline bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), 0 if malformed.
// scan_string calls it directly (so an optimizing host build inlines it there); the
// writer through detail::utf8_seq below.
inline size_t utf8_seq(const unsigned char* p, const unsigned char* end) {
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
// Sets *esc when the string has a backslash escape.
const char* scan_string(const char* p, const char* end, const char** error, bool* esc) {
  ++p;
  for (;;) {
    // Skip whole words of plain bytes first (most of every message), then handle one byte.
    Word x;
    Word flags = 0;
    while (end - p >= static_cast<ptrdiff_t>(sizeof x)) {
      memcpy(&x, p, sizeof x);
      flags = flags_of(x) & kHigh;
      if (flags != 0) break;
      p += sizeof x;
    }
    unsigned char c = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (flags != 0) {
      // The lowest flagged byte of the word is exact (the borrows that can flag bytes
      // wrongly only run upwards): jump straight to it.
      p += static_cast<size_t>(__builtin_ctzll(static_cast<unsigned long long>(flags))) / 8;
    }
#endif
    // Plain bytes one by one up to the next byte that needs a look.
    while (p < end) {
      c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
      ++p;
    }
    if (p >= end) break;
    if (c == '"') return p + 1;
    if (c == '\\') {
      *esc = true;
      if (p + 1 >= end) break;
      char e = p[1];
      if (e == 'u') {
        if (end - p < 6 || hex_digit(p[2]) < 0 || hex_digit(p[3]) < 0 || hex_digit(p[4]) < 0 || hex_digit(p[5]) < 0) {
          *error = "invalid \\u escape";
          return nullptr;
        }
        p += 6;
        continue;
      }
      if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') {
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
    size_t n = utf8_seq(reinterpret_cast<const unsigned char*>(p), reinterpret_cast<const unsigned char*>(end));
    if (n == 0) {
      *error = "invalid UTF-8 in string";
      return nullptr;
    }
    p += n;
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

// Decodes one unit of string content at p (not the closing quote) into out; returns
// the number of bytes produced and advances p.
size_t decode_one(const char*& p, unsigned char out[4]) {
  if (*p != '\\') {
    out[0] = static_cast<unsigned char>(*p++);
    return 1;
  }
  char e = p[1];
  p += 2;
  if (e != 'u') {
    // A validated escape: b f n r t map through the pairs below, " \ / are themselves.
    static const char kPairs[] = "b\bf\fn\nr\rt\t";
    const char* m = static_cast<const char*>(memchr(kPairs, e, sizeof kPairs - 1));
    out[0] = static_cast<unsigned char>(m != nullptr ? m[1] : e);
    return 1;
  }
  uint32_t cp = hex4(p);
  p += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t lo = p[0] == '\\' && p[1] == 'u' ? hex4(p + 2) : 0;  // >= 0x10000 when not hex
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
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
  // Continuation bytes from the end, then the lead byte: 110xxxxx, 1110xxxx, 11110xxx.
  size_t n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  for (size_t i = n - 1; i > 0; --i) {
    out[i] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
    cp >>= 6;
  }
  out[0] = static_cast<unsigned char>((0xF00 >> n) | cp);
  return n;
}

// Checks one value at p (leading whitespace allowed) that sits inside `outer` open
// containers; returns the position right after it, or nullptr with *error set.
const char* scan_value(const char* p, const char* end, int outer, const char** error) {
  bool is_object[MCPGEN_JSON_MAX_DEPTH];  // per open container: object, else array
  int depth = 0;
  bool esc = false;
  const char* err = "unexpected end of input";

  // States: expecting a value, or just finished one.
  for (;;) {
    // ---- expect a value at p
    p = skip_ws(p, end);
    if (p >= end) goto fail;
    {
      char c = *p;
      if (c == '{' || c == '[') {
        if (outer + depth >= MCPGEN_JSON_MAX_DEPTH) {
          err = "nesting too deep";
          goto fail;
        }
        bool obj = c == '{';
        is_object[depth] = obj;
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
        p = scan_string(p, end, &err, &esc);
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
    if (depth == 0) return p;
    p = skip_ws(p, end);
    if (p >= end) goto fail;
    {
      bool obj = is_object[depth - 1];
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
    p = scan_string(p, end, &err, &esc);
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
  return nullptr;
}

// Skips one value of already validated text; returns the position after it. For a
// string, sets *esc to whether it has a backslash escape. The checking scanners do it:
// on valid text they cannot fail, and a second, unchecked scanner would be more flash.
char* skip_value(char* p, char* end, bool* esc) {
  if (p >= end) return p;
  const char* err = nullptr;
  const char* q;
  if (*p == '"') {
    *esc = false;
    q = scan_string(p, end, &err, esc);
  } else {
    q = scan_value(p, end, 0, &err);
  }
  return q != nullptr ? const_cast<char*>(q) : end;
}

// ---------------------------------------------------------------- the request walk

enum Level : uint8_t { kRootLevel, kPayloadLevel, kParamsLevel };

struct KeyName {
  const char* text;
  uint8_t len;
};

// Keys of the root object (all nine) and of a payload (the first six); index + 1 is the
// key's number below.
constexpr KeyName kRpcKeys[] = {{"jsonrpc", 7}, {"id", 2},          {"method", 6}, {"params", 6}, {"result", 6},
                                {"error", 5},   {"session_id", 10}, {"type", 4},   {"payload", 7}};
enum RpcKey : uint8_t { kJsonrpc = 1, kId, kMethod, kParams, kResult, kError, kSessionId, kType, kPayload };
constexpr KeyName kParamKeys[] = {
    {"name", 4},          {"arguments", 9}, {"cursor", 6}, {"withUserTools", 13}, {"protocolVersion", 15},
    {"capabilities", 12}, {"uri", 3},       {"_meta", 5}};
enum ParamKey : uint8_t {
  kName = 1,
  kArguments,
  kCursor,
  kWithUserTools,
  kProtocolVersion,
  kCapabilities,
  kUri,
  kMeta
};

// For each key length below 16, the bit set of the table entries of that length, so a
// key is compared with at most the entries it could equal.
struct LengthIndex {
  uint16_t mask[16];
};
constexpr LengthIndex index_by_length(const KeyName* table, int count) {
  LengthIndex ix{};
  for (int i = 0; i < count; ++i) ix.mask[table[i].len] = static_cast<uint16_t>(ix.mask[table[i].len] | (1u << i));
  return ix;
}
constexpr LengthIndex kRpcByLength = index_by_length(kRpcKeys, 9);
constexpr LengthIndex kParamByLength = index_by_length(kParamKeys, 8);

// Number (index + 1) of `key` among the first `count` entries of the table, 0 when it is
// none of them. Keys without escapes are compared as raw bytes with the entries of their
// length; the others through string_equals_slow.
int classify(const Value& key, const KeyName* table, const LengthIndex& by_length, int count) {
  if (key.esc) {  // rare: each candidate compared with the decoded text
    for (int i = 0; i < count; ++i) {
      if (string_equals_slow(key, table[i].text, table[i].len)) return i + 1;
    }
    return 0;
  }
  const char* s = key.p + 1;
  size_t n = key.n - 2;
  if (n >= 16) return 0;
  unsigned mask = by_length.mask[n] & ((1u << count) - 1);
  while (mask != 0) {
    int i = __builtin_ctz(mask);
    mask &= mask - 1;
    if (same_bytes(table[i].text, s, n)) return i + 1;
  }
  return 0;
}

// FNV-1a of a key's decoded text: one bit of it marks the key in an object's filter of
// other keys, so duplicates among them cost nothing until two keys share a bit.
uint32_t key_hash(const Value& key) {
  uint32_t h = 2166136261u;
  const char* p = key.p + 1;
  const char* e = key.p + key.n - 1;
  unsigned char u[4];
  while (p < e) {
    size_t k = decode_one(p, u);
    for (size_t i = 0; i < k; ++i) h = (h ^ u[i]) * 16777619u;
  }
  return h ^ (h >> 16);
}

// True when a key of the already checked members [from, to) of an object equals `key`:
// those members read as an object of their own (from - 1 is the object's '{').
bool seen_before(char* from, char* to, const Value& key) {
  Value members;
  members.p = from - 1;
  members.n = static_cast<uint32_t>(to - from + 2);
  members.type = Type::kObject;
  ObjectIter it(members);
  Value k, v;
  while (it.next(&k, &v)) {
    if (keys_equal(k, key)) return true;
  }
  return false;
}

// Where a member goes, by key number: its byte offset in Rpc (params members: in its `p`).
// Offsets rather than member pointers: small tables and one store for both levels.
#define MCPGEN_AT(m) static_cast<uint16_t>(offsetof(Rpc, m))
constexpr uint16_t kRpcField[] = {0,
                                  MCPGEN_AT(jsonrpc),
                                  MCPGEN_AT(id),
                                  MCPGEN_AT(method),
                                  MCPGEN_AT(params),
                                  MCPGEN_AT(result),
                                  MCPGEN_AT(error),
                                  MCPGEN_AT(session_id),
                                  MCPGEN_AT(type),
                                  MCPGEN_AT(payload)};
constexpr uint16_t kParamField[] = {0,
                                    MCPGEN_AT(p.name),
                                    MCPGEN_AT(p.arguments),
                                    MCPGEN_AT(p.cursor),
                                    MCPGEN_AT(p.with_user_tools),
                                    MCPGEN_AT(p.protocol_version),
                                    MCPGEN_AT(p.capabilities),
                                    MCPGEN_AT(p.uri),
                                    MCPGEN_AT(p.meta)};
#undef MCPGEN_AT

struct Walk {
  const char* end;
  const char* err;
};

// p at the '{' of an object; `depth` open containers counting this one. Checks the
// object and records the members of `level` (root, payload or params) into rpc, or
// rpc->p for params. An object-valued payload (at the root) and params are walked the
// same way, so this recursion is at most three deep. Returns the position after '}'.
const char* walk_object(Walk& w, const char* p, int depth, Level level, Rpc* rpc, Rpc* inner) {
  const char* const end = w.end;
  char* const first = const_cast<char*>(p + 1);
  const KeyName* table = level == kParamsLevel ? kParamKeys : kRpcKeys;
  const LengthIndex& by_length = level == kParamsLevel ? kParamByLength : kRpcByLength;
  int count = level == kRootLevel ? 9 : level == kParamsLevel ? 8 : 6;
  Value& dup = level == kParamsLevel ? rpc->p.duplicate : rpc->duplicate;
  uint32_t known = 0;  // bit n: key number n seen
  uint32_t others = 0;  // filter of the other keys (see key_hash)
  p = skip_ws(p + 1, end);
  if (p < end && *p == '}') return p + 1;
  for (;;) {
    if (p >= end || *p != '"') {
      w.err = "expected a string key";
      return nullptr;
    }
    Value key;
    key.p = const_cast<char*>(p);
    key.type = Type::kString;
    key.esc = false;
    const char* q = scan_string(p, end, &w.err, &key.esc);
    if (q == nullptr) return nullptr;
    key.n = static_cast<size_t>(q - p);
    q = skip_ws(q, end);
    if (q >= end || *q != ':') {
      w.err = "expected ':'";
      return nullptr;
    }
    q = skip_ws(q + 1, end);
    if (q >= end) {
      w.err = "unexpected end of input";
      return nullptr;
    }
    int which = classify(key, table, by_length, count);
    bool twice;
    if (which != 0) {
      uint32_t bit = uint32_t{1} << which;
      twice = (known & bit) != 0;
      known |= bit;
    } else {
      uint32_t bit = uint32_t{1} << (key_hash(key) & 31);
      twice = (others & bit) != 0 && seen_before(first, key.p, key);
      others |= bit;
    }
    if (twice) {
      if (!dup.valid()) dup = key;
      if (level != kParamsLevel && which == kId) rpc->id_duplicated = true;
      if (level == kRootLevel && which == kType) rpc->type_duplicated = true;
    }
    Value v;
    v.p = const_cast<char*>(q);
    v.type = type_of(*q);
    const char* after;
    bool payload = level == kRootLevel && which == kPayload;
    if (*q == '{' && (payload || (level != kParamsLevel && which == kParams))) {
      if (depth >= MCPGEN_JSON_MAX_DEPTH) {
        w.err = "nesting too deep";
        return nullptr;
      }
      after = walk_object(w, q, depth + 1, payload ? kPayloadLevel : kParamsLevel, payload ? inner : rpc, inner);
    } else if (*q == '"') {
      v.esc = false;
      after = scan_string(q, end, &w.err, &v.esc);
    } else {
      after = scan_value(q, end, depth, &w.err);
    }
    if (after == nullptr) return nullptr;
    v.n = static_cast<size_t>(after - q);
    if (!twice && which != 0) {
      uint16_t at = (level == kParamsLevel ? kParamField : kRpcField)[which];
      memcpy(reinterpret_cast<char*>(rpc) + at, &v, sizeof v);
    }
    p = skip_ws(after, end);
    if (p >= end) {
      w.err = "unexpected end of input";
      return nullptr;
    }
    if (*p == ',') {
      p = skip_ws(p + 1, end);
      continue;
    }
    if (*p == '}') return p + 1;
    w.err = "expected ',' or '}'";
    return nullptr;
  }
}

}  // namespace

namespace {

// validate() and read_message(): one value surrounded by optional whitespace, walked
// as a request (m != nullptr and an object) or only checked. Stores its span in *out.
bool read_root(char* text, size_t len, Value* out, Message* m, const char** error) {
  const char* const end = text + len;
  const char* p = skip_ws(text, end);
  Walk w{end, "unexpected end of input"};
  const char* q = (m != nullptr && p < end && *p == '{') ? walk_object(w, p, 1, kRootLevel, &m->top, &m->inner)
                                                         : scan_value(p, end, 0, &w.err);
  if (q == nullptr) {
    *error = w.err;
    return false;
  }
  out->p = const_cast<char*>(p);
  out->n = static_cast<size_t>(q - p);
  out->type = type_of(*p);
  if (skip_ws(q, end) != end) {
    *error = "trailing characters after JSON value";
    return false;
  }
  return true;
}

}  // namespace

bool validate(char* text, size_t len, Value* out, const char** error) {
  out->esc = true;  // not looked at: compare a string root by decoding it
  return read_root(text, len, out, nullptr, error);
}

bool read_message(char* text, size_t len, Message* m, const char** error) {
  return read_root(text, len, &m->root, m, error);
}

size_t detail::utf8_seq(const unsigned char* p, const unsigned char* end) { return json::utf8_seq(p, end); }

// Decoded side by side (only called when two keys' hashes collide: no fast path).
bool keys_equal(const Value& a, const Value& b) {
  const char* pa = a.p + 1;
  const char* ea = a.p + a.n - 1;
  const char* pb = b.p + 1;
  const char* eb = b.p + b.n - 1;
  unsigned char ua[4], ub[4];
  size_t na = 0, ia = 0, nb = 0, ib = 0;
  for (;;) {
    if (ia == na) {
      na = pa < ea ? decode_one(pa, ua) : 0;
      ia = 0;
    }
    if (ib == nb) {
      nb = pb < eb ? decode_one(pb, ub) : 0;
      ib = 0;
    }
    if (na == 0 || nb == 0) return na == nb;
    if (ua[ia++] != ub[ib++]) return false;
  }
}

bool has_lone_surrogate(const Value& s) {
  if (s.type != Type::kString || !s.esc) return false;
  const char* p = s.p + 1;
  const char* end = s.p + s.n - 1;
  while (p < end) {  // validated text: every backslash starts a whole escape
    if (*p != '\\') {
      ++p;
      continue;
    }
    if (p[1] != 'u') {
      p += 2;
      continue;
    }
    uint32_t cp = hex4(p + 2);
    p += 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return true;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t lo = end - p >= 6 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2) : 0;
      if (lo < 0xDC00 || lo > 0xDFFF) return true;
      p += 6;
    }
  }
  return false;
}

Value first_duplicate(const Value& obj) {
  if (obj.type != Type::kObject) return Value();
  ObjectIter it(obj);
  Value k, v;
  while (it.next(&k, &v)) {
    if (seen_before(obj.p + 1, k.p, k)) return k;
  }
  return Value();
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
  char* after = skip_value(p_, end_, &key->esc);
  key->p = k;
  key->n = static_cast<size_t>(after - k);
  key->type = Type::kString;
  p_ = after;
  while (p_ < end_ && (is_ws(*p_) || *p_ == ':')) ++p_;
  char* v = p_;
  value->esc = true;
  after = skip_value(p_, end_, &value->esc);
  value->p = v;
  value->n = static_cast<size_t>(after - v);
  value->type = v < end_ ? type_of(*v) : Type::kInvalid;
  p_ = after;
  return value->type != Type::kInvalid;
}

bool string_equals_slow(const Value& s, const char* lit, size_t lit_len) {
  if (s.type != Type::kString || s.n < 2) return false;
  if (!s.esc) return s.n - 2 == lit_len && same_bytes(s.p + 1, lit, lit_len);
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
