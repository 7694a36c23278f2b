// Number text of the core, shared by the JSON writer, the server and handlers. No libc
// formatting or parsing (no printf, no strtod): newlib's versions allocate from the heap
// (_dtoa/Balloc), pull in a lot of flash, and its nano printf has no 64-bit integers.
// Nothing here allocates; the exact slow paths use fixed-size big integers on the stack
// (about 600 bytes for format_double, 700 bytes for parse_double). Implemented in
// json_writer.cpp.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace mcpgen {

// Decimal text of v; buf needs 21 bytes. Returns the length (NUL-terminated).
size_t format_int64(int64_t v, char* buf);

// Shortest text of a finite double that parses back to the same value (of the shortest
// candidates, the one nearest to v), always with a '.', 'e' or both so it reads as a
// number with a fraction. Python's repr() style: exponent form below 1e-4 and from 1e16
// on, e.g. "3.0", "0.1", "-0.0", "1e-05", "1.5e-07", "1e+16", "1e+300", "5e-324".
// buf needs 32 bytes. Non-finite values give "null". Returns the length.
size_t format_double(double v, char* buf);

// Parses the JSON number text[0, len) (RFC 8259 grammar, nothing around it) into the
// nearest double (ties to even), like a correctly rounding strtod: beyond the double
// range it gives +-inf, below it +-0. Returns false (and *out = 0) when the text is not
// a JSON number.
bool parse_double(const char* text, size_t len, double* out);

}  // namespace mcpgen
