// Reset and exception vectors of the Cortex-M3 on mps2-an385, C runtime start-up, and
// stack painting for the high-water mark.
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "cmsdk_uart.h"

extern "C" {
// From the linker script.
extern uint32_t __data_start__[], __data_end__[], __data_load__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_bottom__[], __stack_top__[];
extern uint8_t __heap_start__[], __heap_end__[];
typedef void (*InitFn)();
extern InitFn __preinit_array_start[], __preinit_array_end[];
extern InitFn __init_array_start[], __init_array_end[];

int main();
void Reset_Handler();
void Fault_Handler();
void Default_Handler();

// Global destructors never run on a bare-metal target: registering them is a no-op.
void* __dso_handle = nullptr;
int __aeabi_atexit(void*, void (*)(void*), void*) { return 0; }
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
void __cxa_pure_virtual() { Fault_Handler(); }
}

namespace {

constexpr uint32_t kStackPaint = 0xC0DEFACEu;

inline uint32_t current_sp() {
  uint32_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

}  // namespace

extern "C" void Reset_Handler() {
  // Paint the unused part of the stack (everything below our own frame).
  uint32_t* limit = reinterpret_cast<uint32_t*>(current_sp() - 64u);
  for (uint32_t* p = __stack_bottom__; p < limit; ++p) *p = kStackPaint;

  for (uint32_t *src = __data_load__, *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
  for (uint32_t* dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;

  board::kLogUart.init(16);
  board::kMcpUart.init(16);

  for (InitFn* f = __preinit_array_start; f < __preinit_array_end; ++f) (*f)();
  for (InitFn* f = __init_array_start; f < __init_array_end; ++f) (*f)();

  main();
  for (;;) {
    __asm__ volatile("wfi");
  }
}

extern "C" void Fault_Handler() {
  board::kLogUart.write("mcpgen: FAULT (hard fault / bus fault / stack overflow); halted\n");
  for (;;) {
    __asm__ volatile("wfi");
  }
}

extern "C" void Default_Handler() {
  board::kLogUart.write("mcpgen: unexpected interrupt; halted\n");
  for (;;) {
    __asm__ volatile("wfi");
  }
}

// The vector table: initial stack pointer, then the 15 system exceptions. The board's
// external interrupts are not used (UARTs are polled), so the table stops there.
typedef void (*Vector)();
extern "C" __attribute__((section(".isr_vector"), used)) const Vector g_vectors[16] = {
    reinterpret_cast<Vector>(__stack_top__),
    Reset_Handler,
    Default_Handler,  // NMI
    Fault_Handler,    // HardFault
    Fault_Handler,    // MemManage
    Fault_Handler,    // BusFault
    Fault_Handler,    // UsageFault
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    Default_Handler,  // SVCall
    Default_Handler,  // DebugMonitor
    nullptr,
    Default_Handler,  // PendSV
    Default_Handler,  // SysTick
};

namespace board {

size_t stack_size() {
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(__stack_top__) -
                             reinterpret_cast<uintptr_t>(__stack_bottom__));
}

size_t stack_high_water() {
  const uint32_t* p = __stack_bottom__;
  while (p < __stack_top__ && *p == kStackPaint) ++p;
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(__stack_top__) - reinterpret_cast<uintptr_t>(p));
}

size_t heap_size() {
  return static_cast<size_t>(__heap_end__ - __heap_start__);
}

void log(const char* s) { kLogUart.write(s); }

void log_uint(size_t v) {
  char buf[12];
  size_t n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < sizeof buf);
  while (n > 0) kLogUart.put(buf[--n]);
}

}  // namespace board
