// Test driver of mcpgen::LineReader (core/mcpgen/line_reader.h), for test_line_reader.py.
//
//   line_reader_driver CAP CHUNK < bytes
//
// Reads all of stdin, then gives it to a LineReader over a CAP-byte buffer: byte by byte
// with push() when CHUNK is 0, else with feed() in CHUNK-byte pieces (a line split across
// reads), and finish() at the end. Prints one line per event:
//   line <size> <hex of the bytes>        kLine
//   oversized <size> <hex of the bytes>   kOversized (the first bytes kept)
// and "buffer-intact" when no byte was ever written at or past CAP (the guard bytes).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/line_reader.h"

namespace {

constexpr size_t kGuard = 16;
constexpr char kGuardByte = '\x5a';

void print_event(mcpgen::LineReader::Event ev, const mcpgen::LineReader& r) {
  if (ev == mcpgen::LineReader::Event::kNone) return;
  printf("%s %zu ", ev == mcpgen::LineReader::Event::kLine ? "line" : "oversized", r.size());
  for (size_t i = 0; i < r.size(); ++i) printf("%02x", static_cast<unsigned char>(r.data()[i]));
  printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: line_reader_driver CAP CHUNK < bytes\n");
    return 2;
  }
  const size_t cap = strtoul(argv[1], nullptr, 10);
  const size_t chunk = strtoul(argv[2], nullptr, 10);
  static char input[1 << 20];
  const size_t n = fread(input, 1, sizeof input, stdin);
  static char buf[(1 << 16) + kGuard];
  if (cap < 2 || cap > sizeof buf - kGuard) return 2;
  memset(buf, kGuardByte, sizeof buf);
  mcpgen::LineReader reader(buf, cap);
  if (chunk == 0) {
    for (size_t i = 0; i < n; ++i) print_event(reader.push(input[i]), reader);
  } else {
    for (size_t at = 0; at < n;) {
      size_t piece = n - at < chunk ? n - at : chunk;
      while (piece > 0) {
        size_t used = 0;
        print_event(reader.feed(input + at, piece, &used), reader);
        if (used == 0 || used > piece) return 3;  // feed must make progress and stay in bounds
        at += used;
        piece -= used;
      }
    }
  }
  print_event(reader.finish(), reader);
  bool intact = true;
  for (size_t i = cap; i < cap + kGuard; ++i) intact = intact && buf[i] == kGuardByte;
  if (intact) printf("buffer-intact\n");
  return 0;
}
