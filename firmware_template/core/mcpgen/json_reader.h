// mcpgen tiny in-place JSON reader: no DOM, no heap, no unbounded recursion.
//
// read_message() is the server's one walk over a request: it checks the whole message
// (strict RFC 8259 grammar, well-formed UTF-8 in strings, bounded nesting) and, in the
// same pass, locates the members the core reads (envelope, JSON-RPC fields, params) and
// notes duplicate keys among them. validate() checks any other text the same way.
// After that, values are raw spans into the buffer:
// find() and ObjectIter walk them read-only, string_equals() compares a JSON string
// with a C string without decoding it anywhere, and unescape() decodes a string in
// place (\uXXXX and surrogate pairs to UTF-8; lone surrogates become U+FFFD) and
// NUL-terminates it. A span that was unescaped must not be walked again: walk first,
// decode last (ObjectIter has always moved past a member before returning it).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace mcpgen {
namespace json {

enum class Type : uint8_t { kInvalid, kNull, kBool, kNumber, kString, kObject, kArray };

// A raw JSON value: [p, p+n) is its exact text (strings include their quotes).
struct Value {
  char* p = nullptr;
  uint32_t n = 0;  // messages are far below 4 GB; keeps a Value at 16 bytes on 64-bit hosts
  Type type = Type::kInvalid;
  // Strings: true when the text has a backslash escape (set by every function that
  // returns a Value). While it is false the raw bytes between the quotes are the
  // decoded text, compared with memcmp.
  bool esc = false;

  bool valid() const { return type != Type::kInvalid; }
  bool is(Type t) const { return type == t; }
  bool is_true() const { return type == Type::kBool && p[0] == 't'; }
};

// Checks that text[0, len) is exactly one JSON value surrounded by optional
// whitespace. On success stores the value span in *out. On failure returns false and
// sets *error to a short static description.
bool validate(char* text, size_t len, Value* out, const char** error);

// Object member lookup by key (first match). Returns an invalid Value when absent or
// when `obj` is not an object.
Value find(const Value& obj, const char* key);

// The members of params the core reads (tools/call, tools/list, initialize, resources/*).
struct Params {
  Value name, arguments, cursor, with_user_tools, protocol_version, capabilities, uri;
  Value meta;  // "_meta" (tools/call: its progressToken; read only when a handler reports progress)
  Value duplicate;  // the first key that appears twice in params, if any
};

// The members of one JSON-RPC object the core reads; for the root object also those of
// the xiaozhi envelope (type, session_id, payload).
struct Rpc {
  Value jsonrpc, id, method, params, result, error;
  Value session_id, type, payload;
  bool id_duplicated = false;
  bool type_duplicated = false;  // the envelope's "type" given twice (root only)
  Value duplicate;  // the first key that appears twice in this object, if any
  Params p;  // of params, when params is an object

  // Has "result" or "error": a response sent to the device.
  bool response() const { return result.valid() || error.valid(); }
};

// One request located in a single walk: the root object's members go to `top`, those
// of an object-valued envelope payload to `inner`.
struct Message {
  Value root;  // the whole value
  Rpc top;
  Rpc inner;
};

// Checks text[0, len) like validate() and fills *m. On failure returns false with
// *error set; the members located before the error stay in *m (whole values only:
// a member is recorded once its value was read to its end), which is what
// Server::oversized_reply uses to find the id in the first part of a message.
bool read_message(char* text, size_t len, Message* m, const char** error);

// Compares two keys (string values) by their decoded text.
bool keys_equal(const Value& a, const Value& b);

// Iterates the members of a validated object.
class ObjectIter {
 public:
  explicit ObjectIter(const Value& obj);
  bool next(Value* key, Value* value);

 private:
  char* p_;
  char* end_;
};

// Compares a JSON string value (escaped text) with a UTF-8 C string.
bool string_equals(const Value& s, const char* lit);
bool string_equals_slow(const Value& s, const char* lit, size_t lit_len);
inline bool string_equals(const Value& s, const char* lit, size_t lit_len) {
  // Inline: most compares fail on the length of an unescaped string.
  if (s.type != Type::kString || (!s.esc && s.n - 2 != lit_len)) return false;
  return string_equals_slow(s, lit, lit_len);
}

// Decodes a string value in place (call once per value); returns its NUL-terminated
// text and stores its byte length (which counts embedded NULs from \u0000) in *len.
char* unescape(const Value& s, size_t* len);

// Decodes a string value into dst (cap bytes incl. the NUL) without touching the
// source. Returns false (dst = "") when it does not fit or is not a string.
bool copy_string(const Value& s, char* dst, size_t cap);

// True when a string value has a \uXXXX escape of a lone surrogate (valid JSON grammar,
// but not Unicode): echoed raw, such text is refused by strict parsers at the other end.
bool has_lone_surrogate(const Value& s);

// The first key that appears twice in an object (invalid Value when none, or when `obj`
// is not an object). For the objects the core reads below params, where a first-wins
// find() and a last-wins Python reader would disagree.
Value first_duplicate(const Value& obj);

// Number of Unicode code points in well-formed UTF-8 text.
size_t utf8_length(const char* s, size_t n);

// Byte tests shared by the reader and the writer (hot paths, so inline).
namespace detail {

// A machine word of string bytes, tested 4 or 8 at a time.
typedef uintptr_t Word;
inline constexpr Word kOnes = ~Word{0} / 0xFF;  // 0x01 in every byte
inline constexpr Word kHigh = kOnes * 0x80;

// True when no byte of x needs a look of its own in a string: none is below 0x20, '"',
// '\\' or above 0x7F (the usual "has a byte less than / equal to" bit tricks).
// Any unsigned width (a 64-bit host's writer checks short tails 4 bytes at a time).
template <typename W = Word>
inline W flags_of(W x) {
  constexpr W ones = ~W{0} / 0xFF;
  W quote = x ^ (ones * '"');
  W slash = x ^ (ones * '\\');
  return ((x - ones * 0x20) & ~x) | ((quote - ones) & ~quote) | ((slash - ones) & ~slash) | x;
}
template <typename W = Word>
inline bool plain_word(W x) {
  return (flags_of(x) & (~W{0} / 0xFF * 0x80)) == 0;
}

// n bytes at a and b are equal: 4 at a time (short keys and literals, no libc call).
inline bool same_bytes(const char* a, const char* b, size_t n) {
  if (n < 4) {
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  uint32_t x, y;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    memcpy(&x, a + i, 4);
    memcpy(&y, b + i, 4);
    if (x != y) return false;
  }
  memcpy(&x, a + n - 4, 4);
  memcpy(&y, b + n - 4, 4);
  return x == y;
}

// Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), 0 if malformed
// (overlong, surrogate, above U+10FFFF, cut short by end). Shared by reader and writer.
size_t utf8_seq(const unsigned char* p, const unsigned char* end);

// The value of the 4 hex digits at p (upper or lower case), or 0x10000 when one is not
// a hex digit. p must have 4 readable bytes.
uint32_t hex4(const char* p);

// "0123456789abcdef": one copy for the writer's \u00XX escapes and the server's cursors
// (defined in json_writer.cpp).
extern const char kHexDigits[17];

}  // namespace detail

}  // namespace json
}  // namespace mcpgen
