// Board support of the QEMU mps2-an385 port: stack accounting and the debug console.
#pragma once

#include <stddef.h>

namespace board {

// Size of the main stack reserved by the linker script.
size_t stack_size();
// Deepest stack use since boot, in bytes: the stack is painted with a known word at
// reset and this scans for the first word that was overwritten.
size_t stack_high_water();
// Heap the linker left between .bss and the RAM budget (used only if code mallocs).
size_t heap_size();

// High-water mark of the heap in bytes: the most newlib's malloc ever took through
// _sbrk. The core needs none (it formats and parses numbers itself, without newlib's
// heap-using printf/strtod), so this stays 0 unless a handler allocates.
size_t heap_used();

// Debug console on UART1 (never on the MCP UART).
void log(const char* s);
void log_uint(size_t v);

}  // namespace board
