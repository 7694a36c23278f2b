#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/mcp_core.h"
#include "mcpgen/text_format.h"

namespace mcpgen {

size_t format_int64(int64_t v, char* buf) {
  char tmp[21];
  size_t n = 0;
  // Work on the unsigned magnitude so INT64_MIN is fine.
  uint64_t u = v < 0 ? (~static_cast<uint64_t>(v) + 1) : static_cast<uint64_t>(v);
  do {
    tmp[n++] = static_cast<char>('0' + (u % 10));
    u /= 10;
  } while (u != 0);
  size_t len = 0;
  if (v < 0) buf[len++] = '-';
  while (n > 0) buf[len++] = tmp[--n];
  buf[len] = '\0';
  return len;
}

size_t format_double(double v, char* buf) {
  if (!isfinite(v)) {
    memcpy(buf, "null", 5);
    return 4;
  }
  int len = 0;
  for (int prec = 15; prec <= 17; ++prec) {
    len = snprintf(buf, 32, "%.*g", prec, v);
    if (len <= 0 || len >= 32) {
      memcpy(buf, "null", 5);
      return 4;
    }
    if (strtod(buf, nullptr) == v) break;
  }
  bool plain = true;
  for (int i = 0; i < len; ++i) {
    char c = buf[i];
    if (c == '.' || c == 'e' || c == 'E') plain = false;
  }
  if (plain && len + 2 < 32) {
    buf[len++] = '.';
    buf[len++] = '0';
    buf[len] = '\0';
  }
  return static_cast<size_t>(len);
}

JsonWriter::JsonWriter(char* buf, size_t cap)
    : buf_(buf), cap_(cap), len_(0), overflow_(false), need_comma_(false) {}

void JsonWriter::reset(char* buf, size_t cap) {
  buf_ = buf;
  cap_ = cap;
  len_ = 0;
  overflow_ = false;
  need_comma_ = false;
}

void JsonWriter::put(const char* s, size_t n) {
  if (overflow_) return;
  if (buf_ == nullptr) {  // measuring
    len_ += n;
    return;
  }
  if (n > cap_ - len_) {
    overflow_ = true;
    return;
  }
  memcpy(buf_ + len_, s, n);
  len_ += n;
}

void JsonWriter::comma() {
  if (need_comma_) put(",", 1);
  need_comma_ = false;
}

void JsonWriter::begin_object() {
  comma();
  put("{", 1);
  need_comma_ = false;
}

void JsonWriter::end_object() {
  put("}", 1);
  need_comma_ = true;
}

void JsonWriter::begin_array() {
  comma();
  put("[", 1);
  need_comma_ = false;
}

void JsonWriter::end_array() {
  put("]", 1);
  need_comma_ = true;
}

void JsonWriter::key(const char* k) {
  string(k);
  put(":", 1);
  need_comma_ = false;
}

void JsonWriter::string(const char* s) { string(s, s != nullptr ? strlen(s) : 0); }

void JsonWriter::string(const char* s, size_t len) {
  static const char kHex[] = "0123456789abcdef";
  comma();
  put("\"", 1);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
  const unsigned char* end = p + len;
  const unsigned char* run = p;  // start of bytes that need no escaping
  while (p < end) {
    unsigned char c = *p;
    const char* esc = nullptr;
    char ubuf[6];
    size_t esc_len = 2;
    size_t skip = 1;
    if (c == '"') {
      esc = "\\\"";
    } else if (c == '\\') {
      esc = "\\\\";
    } else if (c < 0x20) {
      switch (c) {
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default:
          memcpy(ubuf, "\\u00", 4);
          ubuf[4] = kHex[c >> 4];
          ubuf[5] = kHex[c & 0xF];
          esc = ubuf;
          esc_len = 6;
      }
    } else if (c >= 0x80) {
      // Validate the UTF-8 sequence; replace a malformed byte with U+FFFD.
      size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
      bool ok = need != 0 && c <= 0xF4 && static_cast<size_t>(end - p) >= need;
      for (size_t i = 1; ok && i < need; ++i) ok = (p[i] & 0xC0) == 0x80;
      if (ok && c == 0xE0) ok = p[1] >= 0xA0;
      if (ok && c == 0xED) ok = p[1] <= 0x9F;
      if (ok && c == 0xF0) ok = p[1] >= 0x90;
      if (ok && c == 0xF4) ok = p[1] <= 0x8F;
      if (ok) {
        p += need;
        continue;
      }
      esc = "\xEF\xBF\xBD";
      esc_len = 3;
    } else {
      ++p;
      continue;
    }
    put(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    put(esc, esc_len);
    p += skip;
    run = p;
  }
  put(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
  put("\"", 1);
  need_comma_ = true;
}

void JsonWriter::integer(int64_t v) {
  char buf[21];
  size_t n = format_int64(v, buf);
  comma();
  put(buf, n);
  need_comma_ = true;
}

void JsonWriter::number(double v) {
  char buf[32];
  size_t n = format_double(v, buf);
  comma();
  put(buf, n);
  need_comma_ = true;
}

void JsonWriter::boolean(bool v) {
  comma();
  if (v) {
    put("true", 4);
  } else {
    put("false", 5);
  }
  need_comma_ = true;
}

void JsonWriter::null() {
  comma();
  put("null", 4);
  need_comma_ = true;
}

void JsonWriter::raw(const char* json, size_t len) {
  comma();
  put(json, len);
  need_comma_ = true;
}

void JsonWriter::raw_fragment(const char* text, size_t len) { put(text, len); }

size_t JsonWriter::size() const { return len_; }
bool JsonWriter::overflowed() const { return overflow_; }
const char* JsonWriter::data() const { return buf_; }

}  // namespace mcpgen
