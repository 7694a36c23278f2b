// Reset and exception vectors of the Cortex-M3 on mps2-an385, and the board functions
// of board.h: UART0 is the MCP stream, UART1 the debug console.
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "cmsdk_uart.h"

extern "C" {
extern uint32_t __stack_top__[];  // from the linker script

int main();
void Reset_Handler();
void Fault_Handler();
void mcpgen_fault_report();
void Default_Handler();

// ARM EABI flavour of __cxa_atexit (runtime.cpp has the generic one).
int __aeabi_atexit(void*, void (*)(void*), void*) { return 0; }
}

extern "C" void Reset_Handler() {
  board::kLogUart.init(16);
  board::kMcpUart.init(16);
  board::init_runtime();
  main();
  board::halt("mcpgen: main returned; halted\n");
}

// A fault may come from a stack overflow, with the stack pointer below RAM: the handler
// moves it back to the top of the stack before calling anything (a fault while handling
// HardFault would lock the core up, which QEMU treats as fatal).
extern "C" __attribute__((naked)) void Fault_Handler() {
  __asm__ volatile(
      "ldr r0, =__stack_top__\n"
      "msr msp, r0\n"
      "b mcpgen_fault_report\n");
}

extern "C" void mcpgen_fault_report() {
  board::halt("mcpgen: FAULT (hard fault / bus fault / stack overflow); halted\n");
}

extern "C" void Default_Handler() { board::halt("mcpgen: unexpected interrupt; halted\n"); }

// The vector table: initial stack pointer, then the 15 system exceptions. The board's
// external interrupts are not used (UARTs are polled), so the table stops there.
typedef void (*Vector)();
extern "C" __attribute__((section(".isr_vector"), used)) const Vector g_vectors[16] = {
    reinterpret_cast<Vector>(__stack_top__),
    Reset_Handler,
    Default_Handler,  // NMI
    Fault_Handler,  // HardFault
    Fault_Handler,  // MemManage
    Fault_Handler,  // BusFault
    Fault_Handler,  // UsageFault
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

char mcp_read() { return kMcpUart.get(); }

void mcp_write(const char* data, size_t len) { kMcpUart.write(data, len); }

void log(const char* s) { kLogUart.write(s); }

void halt(const char* why) {
  kLogUart.write(why);
  for (;;) {
    __asm__ volatile("wfi");
  }
}

}  // namespace board
