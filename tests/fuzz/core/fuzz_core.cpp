// libFuzzer harness over the device core's request entry point (mcpgen::Server::handle)
// with the generated tables and handlers of a spec (toolspec/default_device.yaml in the
// test suite). Built with clang -fsanitize=fuzzer,address,undefined by fuzzlib.py.
//
// An input is what a port reads from its transport: one or more messages separated by
// '\n' (the UART/stdio framing), handled in order by one fresh Server, so that sequences
// (initialize, then envelopes, then calls) are reachable. Each message is copied into a
// heap buffer of exactly len+1 bytes (the room handle() may use) and the reply goes to a
// heap buffer of exactly the response size, so AddressSanitizer sees any access past
// either. A message longer than the port's request buffer gets the port's treatment
// (Server::oversized_reply) instead, as on the device.
//
// Beyond the sanitizers, every reply is checked: its length fits the buffer and it is
// exactly one JSON text per RFC 8259 (grammar, and UTF-8 as §8.1 requires). Anything else
// aborts, which libFuzzer reports as a crash with the input saved.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_tools.h"
#include "mcpgen/mcp_core.h"

namespace {

// RFC 8259 checker for the replies. Hand-written on purpose: the oracle must not share
// code with the core, and cJSON (the system's JSON library) rejects escaped lone
// surrogates ("\udc00"), which the RFC's grammar allows, so it would report valid
// replies that echo them as crashes.
class JsonCheck {
 public:
  JsonCheck(const char* s, size_t n) : p_(reinterpret_cast<const unsigned char*>(s)), end_(p_ + n) {}
  // True when the whole input is one JSON value with optional whitespace around it.
  bool document() {
    ws();
    if (!value(0)) return false;
    ws();
    return p_ == end_;
  }

 private:
  bool at(char c) const { return p_ < end_ && *p_ == static_cast<unsigned char>(c); }
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool literal(const char* word) {
    const size_t n = strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }
  bool digits() {
    const unsigned char* start = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ > start;
  }
  bool number() {
    if (at('-')) ++p_;
    if (at('0')) {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (at('.')) {
      ++p_;
      if (!digits()) return false;
    }
    if (at('e') || at('E')) {
      ++p_;
      if (at('+') || at('-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }
  static bool hex(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
  // One UTF-8 sequence starting at a byte >= 0x80: no overlong forms, no surrogates,
  // nothing above U+10FFFF.
  bool utf8() {
    const unsigned char c = *p_;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (static_cast<size_t>(end_ - p_) < n || p_[1] < lo || p_[1] > hi) return false;
    for (size_t i = 2; i < n; ++i) {
      if (p_[i] < 0x80 || p_[i] > 0xBF) return false;
    }
    p_ += n;
    return true;
  }
  bool string() {
    ++p_;  // opening quote
    while (p_ < end_) {
      const unsigned char c = *p_;
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++p_;
        if (p_ >= end_) return false;
        if (*p_ == 'u') {
          if (end_ - p_ < 5 || !hex(p_[1]) || !hex(p_[2]) || !hex(p_[3]) || !hex(p_[4])) return false;
          p_ += 5;
        } else if (strchr("\"\\/bfnrt", *p_) != nullptr && *p_ != '\0') {
          ++p_;
        } else {
          return false;
        }
      } else if (c >= 0x80) {
        if (!utf8()) return false;
      } else {
        ++p_;
      }
    }
    return false;
  }
  bool value(int depth) {
    if (depth > 256 || p_ >= end_) return false;
    switch (*p_) {
      case '{':
        ++p_;
        ws();
        if (at('}')) return ++p_, true;
        for (;;) {
          if (!at('"') || !string()) return false;
          ws();
          if (!at(':')) return false;
          ++p_;
          ws();
          if (!value(depth + 1)) return false;
          ws();
          if (at('}')) return ++p_, true;
          if (!at(',')) return false;
          ++p_;
          ws();
        }
      case '[':
        ++p_;
        ws();
        if (at(']')) return ++p_, true;
        for (;;) {
          if (!value(depth + 1)) return false;
          ws();
          if (at(']')) return ++p_, true;
          if (!at(',')) return false;
          ++p_;
          ws();
        }
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

[[noreturn]] void fail(const char* what, const char* reply, size_t len) {
  fprintf(stderr, "fuzz_core: %s (reply of %zu bytes): %.*s\n", what, len, static_cast<int>(len < 2000 ? len : 2000),
          reply);
  abort();
}

void check_reply(const char* out, size_t n, size_t cap) {
  if (n == 0) return;
  if (n > cap) fail("reply longer than the buffer", out, cap);
  if (!JsonCheck(out, n).document()) fail("reply is not one valid JSON text (RFC 8259)", out, n);
}

void handle_one(mcpgen::Server& server, const uint8_t* data, size_t len, char* out, size_t cap) {
  size_t n;
  if (len + 1 > MCPGEN_REQUEST_BUFFER_SIZE) {  // the port drops it and answers -32600
    n = server.oversized_reply(out, cap);
  } else {
    char* in = static_cast<char*>(malloc(len + 1));
    if (len > 0) memcpy(in, data, len);
    n = server.handle(in, len, out, cap);
    free(in);
  }
  check_reply(out, n, cap);
  check_reply(out, server.pending_notification(out, cap), cap);
}

}  // namespace

// The oracle checks itself before any fuzzing: a checker that accepted everything would
// make every run pass.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static const char* const kGood[] = {"{}",
                                      " [1, -0.5e+3, true, false, null, \"a\\u00e9\\ud800\\n\"] ",
                                      "{\"k\":{\"x\":[[]]}}",
                                      "\"\xc3\xa9\xf0\x9f\x98\x80\"",
                                      "0",
                                      "-0.0E-0"};
  static const char* const kBad[] = {"",
                                     "{",
                                     "{}}",
                                     "[1,]",
                                     "{\"a\" 1}",
                                     "01",
                                     "1.",
                                     "-",
                                     "\"\\x\"",
                                     "\"\\u12\"",
                                     "\"\x01\"",
                                     "\"\xc0\xaf\"",
                                     "\"\xed\xa0\x80\"",
                                     "\"\xf4\x90\x80\x80\"",
                                     "tru",
                                     "{} {}",
                                     "\"open"};
  for (const char* s : kGood) {
    if (!JsonCheck(s, strlen(s)).document()) fail("oracle self-test: valid JSON rejected", s, strlen(s));
  }
  for (const char* s : kBad) {
    if (JsonCheck(s, strlen(s)).document()) fail("oracle self-test: invalid JSON accepted", s, strlen(s));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Server holds the per-connection state; a fresh one per input keeps runs reproducible
  // (the example handlers' own state, a counter and a few settings, carries over).
  mcpgen::Server server(kMcpSpec);

  const size_t cap = MCPGEN_RESPONSE_BUFFER_SIZE;
  char* out = static_cast<char*>(malloc(cap));
  size_t start = 0;
  for (size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      if (i > start) handle_one(server, data + start, i - start, out, cap);
      start = i + 1;
    }
  }
  free(out);
  return 0;
}
