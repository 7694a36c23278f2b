// Number formatting shared by the JSON writer and the server (no printf for integers:
// newlib-nano's printf has no 64-bit support by default).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace mcpgen {

// Decimal text of v; buf needs 21 bytes. Returns the length (NUL-terminated).
size_t format_int64(int64_t v, char* buf);

// Shortest text of a finite double that parses back to the same value, always with a
// '.', 'e' or both so it reads as a number with a fraction ("3.0", "0.1", "1e+300").
// buf needs 32 bytes. Non-finite values give "null". Returns the length.
size_t format_double(double v, char* buf);

}  // namespace mcpgen
