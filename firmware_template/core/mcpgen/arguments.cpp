// tools/call arguments: decoding and checking against the ParamDesc tables
// (arguments.h).
#include "mcpgen/arguments.h"

#include <math.h>
#include <string.h>

#include "mcpgen/text_format.h"

namespace mcpgen {

namespace {

using json::Type;
using json::Value;

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
    case ParamType::kObject: return "an object";
    default: return "a string";
  }
}

enum class IntParse : uint8_t { kOk, kNotInteger, kTooLarge, kTooSmall };

// Parses a validated JSON number token as an exact int64 ("5", "-3", "5.0",
// "1e2").
IntParse parse_int(const char* p, size_t n, int64_t* out) {
  // Digits only: exact in a uint64 (no 64-bit division, a libgcc call on a
  // 32-bit MCU: u stays below 2^63 / 10 + 1 before each step, so u * 10 + 9
  // cannot wrap). A fraction, an exponent or more digits than that go through
  // the double below.
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
  // Range first (infinities included): inside it the int64 conversion is exact
  // for every integral value, so comparing back tells a fraction.
  if (d >= 9223372036854775808.0) return IntParse::kTooLarge;
  if (d < -9223372036854775808.0) return IntParse::kTooSmall;
  if (d != static_cast<double>(static_cast<int64_t>(d))) return IntParse::kNotInteger;
  *out = static_cast<int64_t>(d);
  return IntParse::kOk;
}

template <typename T>
void store(void* args, uint16_t offset, T v) {
  memcpy(static_cast<char*>(args) + offset, &v, sizeof v);
}

// Ends an argument's message with ", got <its text>" (cut at 40 bytes).
__attribute__((noinline)) ArgsStatus got(Msg& head, const Value& v) {
  head.add(", got ").quote(v.p, v.n, 40);
  return ArgsStatus::kInvalid;
}

// A numeric argument beyond a bound of its parameter (high: the maximum): "must
// be <= max"; an integer beyond int64 where that side has no bound: "must fit a
// 64-bit integer".
__attribute__((noinline)) ArgsStatus out_of_range(Msg& head, const ParamDesc& p, bool high, const Value& v) {
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

// ---------------------------------------------------------------- one argument
// The decoders of one argument's value, one per ParamType: checked against the
// parameter and stored at its offset; on a violation the rest of the message
// after `head`
// ("invalid argument `x`: ") and kInvalid. The value's JSON type is already
// checked.

ArgsStatus decode_bool(const ParamDesc& p, const Value& v, void* storage) {
  store(storage, p.offset, v.is_true());
  return ArgsStatus::kOk;
}

ArgsStatus decode_int(const ParamDesc& p, const Value& v, void* storage, Msg& head) {
  int64_t x = 0;
  IntParse r = parse_int(v.p, v.n, &x);
  if (r == IntParse::kNotInteger) return got(head.add("must be an integer"), v);
  if (r == IntParse::kTooLarge || (r == IntParse::kOk && p.has_max && x > p.int_max)) {
    return out_of_range(head, p, true, v);
  }
  if (r == IntParse::kTooSmall || (p.has_min && x < p.int_min)) return out_of_range(head, p, false, v);
  store(storage, p.offset, x);
  return ArgsStatus::kOk;
}

ArgsStatus decode_number(const ParamDesc& p, const Value& v, void* storage, Msg& head) {
  double x = 0;
  parse_double(v.p, v.n, &x);
  if (!isfinite(x)) return got(head.add("must be a finite number"), v);
  if (p.has_max && x > p.num_max) return out_of_range(head, p, true, v);
  if (p.has_min && x < p.num_min) return out_of_range(head, p, false, v);
  store(storage, p.offset, x);
  return ArgsStatus::kOk;
}

// "must be one of a, b, c; got "x"".
__attribute__((noinline)) ArgsStatus not_in_enum(const ParamDesc& p, const char* str, size_t n, Msg& head) {
  head.add("must be one of ");
  for (uint16_t e = 0; e < p.enum_count; ++e) head.add(e ? ", " : "", p.enum_values[e]);
  head.add("; got \"").quote(str, n, kQuoteLimit).add("\"");
  return ArgsStatus::kInvalid;
}

ArgsStatus decode_string(const ParamDesc& p, const Value& v, void* storage, Msg& head) {
  size_t n = 0;
  const char* str = json::unescape(v, &n);
  if (strlen(str) != n) {
    head.add("must not contain NUL characters");
    return ArgsStatus::kInvalid;
  }
  if (p.enum_values != nullptr) {
    bool ok = false;
    for (uint16_t e = 0; e < p.enum_count && !ok; ++e) ok = strcmp(str, p.enum_values[e]) == 0;
    if (!ok) return not_in_enum(p, str, n, head);
  }
  if (p.max_length != 0) {
    size_t cps = json::utf8_length(str, n);
    if (cps > p.max_length) {
      head.add("must be at most ").add_int(p.max_length).add(" characters, got ").add_int(static_cast<int64_t>(cps));
      return ArgsStatus::kInvalid;
    }
  }
  store(storage, p.offset, str);
  return ArgsStatus::kOk;
}

// An argument (or field) of a named type: its object's keys against the type's fields,
// decoded into the type's struct at the parameter's offset.
__attribute__((noinline)) ArgsStatus decode_object(const ParamDesc& p, const Value& v, void* storage, Msg& head) {
  return decode_fields(p.object->fields, p.object->field_count, v, static_cast<char*>(storage) + p.offset, head);
}

// One argument: its JSON type checked, then its ParamType's decoder.
inline ArgsStatus decode_value(const ParamDesc& p, const Value& v, void* storage, Msg& head) {
  // The JSON type each ParamType takes, in ParamType order.
  static const Type kJsonType[] = {Type::kBool, Type::kNumber, Type::kNumber, Type::kString, Type::kObject};
  if (v.type != kJsonType[static_cast<uint8_t>(p.type)]) {
    head.add("must be ", param_type_name(p.type), ", got ").add(type_name(v.type));
    return ArgsStatus::kInvalid;
  }
  switch (p.type) {
    case ParamType::kBoolean: return decode_bool(p, v, storage);
    case ParamType::kInteger: return decode_int(p, v, storage, head);
    case ParamType::kNumber: return decode_number(p, v, storage, head);
    case ParamType::kObject: return decode_object(p, v, storage, head);
    case ParamType::kString: break;
  }
  return decode_string(p, v, storage, head);
}

// ---------------------------------------------------------------- the
// arguments object Every optional parameter's default, copied like a decoded
// value (the storage is zeroed first).
inline void set_defaults(const ParamDesc* params, uint8_t count, char* base) {
  for (uint8_t i = 0; i < count; ++i) {
    const ParamDesc& p = params[i];
    if (p.required) continue;  // kObject parameters are always required
    // The default field of the parameter's type.
    static const uint8_t kSize[] = {sizeof(bool), sizeof(int64_t), sizeof(double), sizeof(const char*)};
    const void* def = p.type == ParamType::kBoolean   ? static_cast<const void*>(&p.default_bool)
                      : p.type == ParamType::kInteger ? static_cast<const void*>(&p.default_int)
                      : p.type == ParamType::kNumber  ? static_cast<const void*>(&p.default_num)
                                                      : static_cast<const void*>(&p.default_str);
    memcpy(base + p.offset, def, kSize[static_cast<uint8_t>(p.type)]);
  }
}

// The index of the parameter named kt[0, kn) (a key's decoded text), or -1.
inline int find_param(const ParamDesc* params, uint8_t count, const char* kt, size_t kn, bool escaped) {
  for (uint8_t i = 0; i < count; ++i) {
    const char* name = params[i].name;
    // An escaped key may hold "\u0000": refuse it before strncmp, which would
    // stop at that NUL and let name[kn] read past a shorter name.
    if (name[0] == kt[0] && (!escaped || memchr(kt, '\0', kn) == nullptr) && strncmp(name, kt, kn) == 0 &&
        name[kn] == '\0') {
      return i;
    }
  }
  return -1;
}

// One bit per parameter (at most 255): which arguments were given.
struct Seen {
  uint32_t bits[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  bool has(unsigned i) const { return (bits[i >> 5] & (uint32_t{1} << (i & 31))) != 0; }
  void set(unsigned i) { bits[i >> 5] |= uint32_t{1} << (i & 31); }
};

// The first required parameter without an argument: "missing required
// argument" (a field of a named type: "missing required field").
inline ArgsStatus check_required(const ParamDesc* params, uint8_t count, const Seen& seen, Msg& m, size_t mark) {
  for (uint8_t i = 0; i < count; ++i) {
    if (params[i].required && !seen.has(i)) {
      m.add("missing required ", mark != 0 ? "field" : "argument", " `").add(params[i].name, "`");
      return ArgsStatus::kInvalid;
    }
  }
  return ArgsStatus::kOk;
}

}  // namespace

// The keys of one JSON object against a table of parameters: a tool's arguments, or
// (nested) the fields of a named type, after the message's prefix so far ("invalid
// argument `scene`: "). Every level refuses a key it does not declare, as the published
// schema's additionalProperties: false says. The level is told by that prefix (a tool's
// arguments start from an empty message), so the loop keeps one value more than before
// named types, not three: tools/call's instruction count stays where it was.
ArgsStatus decode_fields(const ParamDesc* params, uint8_t count, const Value& obj, char* base, Msg& m) {
  const size_t mark = m.size();
  set_defaults(params, count, base);
  Seen seen;
  Value k, v;
  json::ObjectIter it(obj);
  while (it.next(&k, &v)) {
    // Keys without escapes are compared as raw bytes (strncmp stops at the
    // name's end).
    const char* kt = k.p + 1;
    size_t kn = k.n - 2;
    if (k.esc) kt = json::unescape(k, &kn);  // the key is not walked again
    int index = find_param(params, count, kt, kn, k.esc);
    if (index < 0) {
      m.add("unknown ", mark != 0 ? "field" : "argument", " `").quote(kt, kn, kQuoteLimit).add("`");
      return ArgsStatus::kInvalid;
    }
    const ParamDesc& p = params[index];
    if (seen.has(index)) {
      m.add(mark != 0 ? "duplicate field `" : "Invalid params: duplicate argument `", p.name, "`");
      return ArgsStatus::kDuplicate;
    }
    seen.set(index);
    ArgsStatus st =
        decode_value(p, v, base, m.add(mark != 0 ? "invalid field `" : "invalid argument `", p.name, "`: "));
    if (st != ArgsStatus::kOk) return st;
    m.truncate(mark);  // this one is fine: drop its "invalid argument" prefix
  }
  return check_required(params, count, seen, m, mark);
}

}  // namespace mcpgen
