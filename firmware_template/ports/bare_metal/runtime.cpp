// C runtime start-up, stack and heap accounting shared by the bare-metal ports (see
// board.h). Nothing here knows the CPU: the reset code of each port sets up the stack
// pointer (and on RISC-V gp/tp) and then calls init_runtime().
#include <stddef.h>
#include <stdint.h>

#include "board.h"

extern "C" {
// From the linker script.
extern uint32_t __data_start__[], __data_end__[], __data_load__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_bottom__[], __stack_top__[];
extern uint8_t __heap_start__[], __heap_end__[];
typedef void (*InitFn)();
extern InitFn __preinit_array_start[], __preinit_array_end[];
extern InitFn __init_array_start[], __init_array_end[];

// Global destructors never run on a bare-metal target: registering them is a no-op.
void* __dso_handle = nullptr;
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
void __cxa_pure_virtual() { board::halt("mcpgen: pure virtual call; halted\n"); }
}

namespace {

constexpr uint32_t kStackPaint = 0xC0DEFACEu;

// brk and its high-water mark (free() may move brk back). Zero-initialised, so they
// live in .bss and mean "at __heap_start__".
size_t g_brk_offset;
size_t g_brk_peak;

}  // namespace

namespace board {

// Not inlined, so that its frame (and the marker in it) lies below the caller's: the
// painting must stop short of every frame that is live while it runs.
__attribute__((noinline)) static void paint_stack() {
  volatile uint32_t marker = 0;
  uint32_t* limit = reinterpret_cast<uint32_t*>((reinterpret_cast<uintptr_t>(&marker) - 64u) & ~uintptr_t{3});
  for (uint32_t* p = __stack_bottom__; p < limit; ++p) *p = kStackPaint;
}

void init_runtime() {
  paint_stack();
  for (uint32_t *src = __data_load__, *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
  for (uint32_t* dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;
  for (InitFn* f = __preinit_array_start; f < __preinit_array_end; ++f) (*f)();
  for (InitFn* f = __init_array_start; f < __init_array_end; ++f) (*f)();
}

size_t stack_size() {
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(__stack_top__) -
                             reinterpret_cast<uintptr_t>(__stack_bottom__));
}

size_t stack_high_water() {
  const uint32_t* p = __stack_bottom__;
  while (p < __stack_top__ && *p == kStackPaint) ++p;
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(__stack_top__) - reinterpret_cast<uintptr_t>(p));
}

size_t heap_size() { return static_cast<size_t>(__heap_end__ - __heap_start__); }

size_t heap_used() { return g_brk_peak; }

void log_uint(size_t v) {
  char buf[24];
  size_t n = sizeof buf;
  buf[--n] = '\0';
  do {
    buf[--n] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n > 0);
  log(buf + n);
}

}  // namespace board

extern "C" void* mcpgen_sbrk(ptrdiff_t incr) {
  const ptrdiff_t room = (__heap_end__ - __heap_start__) - static_cast<ptrdiff_t>(g_brk_offset);
  if (incr > room || incr < -static_cast<ptrdiff_t>(g_brk_offset)) return reinterpret_cast<void*>(-1);
  uint8_t* prev = __heap_start__ + g_brk_offset;
  g_brk_offset = static_cast<size_t>(static_cast<ptrdiff_t>(g_brk_offset) + incr);
  if (g_brk_offset > g_brk_peak) g_brk_peak = g_brk_offset;
  return prev;
}
