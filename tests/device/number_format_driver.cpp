// Test driver of the core's number text, mcpgen/text_format.h (implemented in
// json_writer.cpp), for tests/device/test_number_format.py: one command per line on
// stdin, one answer per line on stdout.
//   f <16 hex digits>  -> format_double of those bits, then glibc's strtod of that text
//                         as 16 hex digits: "<text> <bits>"
//   p <text>           -> parse_double of the text and glibc's strtod of it:
//                         "<bits> <glibc bits>", or "invalid <glibc bits>"
//   i <decimal>        -> format_int64 of strtoll's value
// Built with -DMCPGEN_TEXT_FORMAT_CHECKED: a big integer that runs out of room traps.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/text_format.h"

namespace {

uint64_t bits_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace

int main() {
  static char line[1 << 16];
  while (fgets(line, sizeof line, stdin) != nullptr) {
    size_t n = strcspn(line, "\r\n");
    line[n] = '\0';
    if (n < 2) continue;
    const char* arg = line + 2;
    if (line[0] == 'f') {
      uint64_t bits = strtoull(arg, nullptr, 16);
      double v;
      memcpy(&v, &bits, sizeof v);
      char buf[32];
      memset(buf, 'X', sizeof buf);
      size_t len = mcpgen::format_double(v, buf);
      if (len >= sizeof buf || buf[len] != '\0' || strlen(buf) != len) {
        printf("BADLEN %zu\n", len);
        continue;
      }
      printf("%s %016" PRIx64 "\n", buf, bits_of(strtod(buf, nullptr)));
    } else if (line[0] == 'p') {
      double v = 12345.0;
      bool ok = mcpgen::parse_double(arg, n - 2, &v);
      uint64_t glibc = bits_of(strtod(arg, nullptr));
      if (ok) {
        printf("%016" PRIx64 " %016" PRIx64 "\n", bits_of(v), glibc);
      } else {
        printf("invalid%s %016" PRIx64 "\n", v == 0.0 ? "" : "-dirty", glibc);
      }
    } else if (line[0] == 'i') {
      char buf[21];
      size_t len = mcpgen::format_int64(strtoll(arg, nullptr, 10), buf);
      printf("%s %zu\n", buf, len);
    }
  }
  return 0;
}
