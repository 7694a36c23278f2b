// What the bare-metal UART ports (qemu_mps2: Cortex-M3, qemu_riscv_virt: RV32) have in
// common. The shared main loop (uart_main.cpp) and C runtime helpers (runtime.cpp) live
// in this folder; each port supplies the few functions marked "port" below, its start-up
// code, linker script and libc stubs.
//
// Every linker script of these ports defines the same symbols: __data_start__/__data_end__
// (RAM copy of initialised data) and __data_load__ (its image in flash), __bss_start__/
// __bss_end__, __stack_bottom__/__stack_top__, __heap_start__/__heap_end__, and the
// __preinit_array_*/__init_array_* bounds of the static constructors.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace board {

// --- port: transport and console -------------------------------------------------------

// Blocks (polling) until the MCP UART received a byte, and returns it.
char mcp_read();
// Writes bytes to the MCP UART (nothing but MCP ever goes there).
void mcp_write(const char* data, size_t len);
// Debug console: a second UART or the emulator's semihosting console, never the MCP UART.
void log(const char* s);
// Logs `why` on the console and stops the CPU for good (faults, abort, exit).
[[noreturn]] void halt(const char* why);

// --- runtime.cpp: start-up and accounting ------------------------------------------------

// First thing the reset code calls (on the boot stack, before any C++ object exists):
// paints the unused stack with a known word, copies .data from flash, zeroes .bss, and
// runs the static constructors. The ports call main() after it.
void init_runtime();

// Size of the main stack reserved by the linker script.
size_t stack_size();
// Deepest stack use since boot, in bytes: the stack is painted at reset and this scans
// for the first word that was overwritten.
size_t stack_high_water();
// Heap the linker left between .bss and the RAM budget (used only if code mallocs).
size_t heap_size();
// High-water mark of the heap in bytes: the most the libc's malloc ever took through
// sbrk. The core needs none (it formats and parses numbers itself, without the libc's
// printf/strtod), so this stays 0 unless a handler allocates.
size_t heap_used();

void log_uint(size_t v);

}  // namespace board

// The heap behind the libc's allocator: newlib calls _sbrk, picolibc calls sbrk; each
// port's syscalls file forwards to this one (from __heap_start__ to __heap_end__).
extern "C" void* mcpgen_sbrk(ptrdiff_t incr);
