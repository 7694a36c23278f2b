// Board functions of board.h for QEMU's RISC-V `virt` machine: the MCP stream on the
// 16550 UART (read after sleeping in `wfi` until the PLIC reports it has data, so an idle
// device costs the host no CPU), the debug console on the semihosting console (the
// machine has a single UART), the C++ side of reset, and the fatal-trap report.
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "ns16550.h"

extern "C" {
int main();
void mcpgen_reset();
void mcpgen_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval);
long mcpgen_semihost(long op, const void* arg);  // startup.S
extern uint32_t __stack_guard__[], __stack_bottom__[];  // riscv_virt.ld
}

namespace {

// Semihosting operations (Arm semihosting numbers, which RISC-V semihosting reuses).
constexpr long kSysWrite0 = 0x04;  // write a NUL-terminated string to the console

// PLIC of the virt machine. Context 0 is hart 0 in M-mode.
constexpr uintptr_t kPlicBase = 0x0C000000u;
constexpr uintptr_t kPlicPriority = kPlicBase;  // + 4 * source
constexpr uintptr_t kPlicEnableCtx0 = kPlicBase + 0x2000u;  // bit per source
constexpr uintptr_t kPlicThresholdCtx0 = kPlicBase + 0x200000u;
constexpr uintptr_t kPlicClaimCtx0 = kPlicBase + 0x200004u;

volatile uint32_t& mmio32(uintptr_t addr) { return *reinterpret_cast<volatile uint32_t*>(addr); }

void plic_enable_uart() {
  mmio32(kPlicPriority + 4u * board::kMcpUartIrq) = 1;
  mmio32(kPlicEnableCtx0 + 4u * (board::kMcpUartIrq / 32u)) |= 1u << (board::kMcpUartIrq % 32u);
  mmio32(kPlicThresholdCtx0) = 0;
}

// Acknowledges whatever woke us: claim + complete re-arms the PLIC gateway (called with
// the UART's interrupt disabled, so its line is low and nothing re-pends).
void plic_acknowledge() {
  const uint32_t source = mmio32(kPlicClaimCtx0);
  if (source != 0) mmio32(kPlicClaimCtx0) = source;
}

void log_hex(uint32_t v) {
  char buf[11] = "0x";
  for (int i = 0; i < 8; ++i) buf[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xFu];
  buf[10] = '\0';
  board::log(buf);
}

}  // namespace

extern "C" void mcpgen_reset() {
  board::kMcpUart.init(static_cast<uint16_t>(board::kUartClockHz / (16u * 115200u)));
  plic_enable_uart();
  board::init_runtime();
  main();
  board::halt("mcpgen: main returned; halted\n");
}

extern "C" void mcpgen_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval) {
  // A breakpoint trap means the semihosting call itself trapped (QEMU runs without
  // -semihosting-config): there is no console to report on.
  constexpr uint32_t kBreakpoint = 3;
  if (mcause == kBreakpoint) {
    for (;;) __asm__ volatile("wfi");
  }
  board::log("mcpgen: FAULT mcause ");
  board::log_uint(mcause);
  board::log(" mepc ");
  log_hex(mepc);
  board::log(" mtval ");
  log_hex(mtval);
  if (mtval >= reinterpret_cast<uintptr_t>(__stack_guard__) && mtval < reinterpret_cast<uintptr_t>(__stack_bottom__)) {
    board::log(" (stack overflow)");
  }
  board::halt("; halted\n");
}

namespace board {

char mcp_read() {
  // Sleep until a byte arrives. The UART's receive interrupt is enabled only around the
  // `wfi`: left on, its line (and so the PLIC's pending bit and mip.MEIP) can stay raised
  // after the wake-up, and every later `wfi` returns at once: the idle loop spins a host
  // core. Disabled before the claim/complete, the line is low when the PLIC re-arms, so
  // nothing stays pending. A byte arriving between readable() and `wfi` raises the line
  // first, so `wfi` returns and the loop sees it.
  while (!kMcpUart.readable()) {
    kMcpUart.enable_rx_interrupt(true);
    if (!kMcpUart.readable()) __asm__ volatile("wfi");
    kMcpUart.enable_rx_interrupt(false);
    plic_acknowledge();
  }
  return kMcpUart.take();
}

void mcp_write(const char* data, size_t len) { kMcpUart.write(data, len); }

void log(const char* s) { mcpgen_semihost(kSysWrite0, s); }

void halt(const char* why) {
  log(why);
  for (;;) __asm__ volatile("wfi");
}

}  // namespace board
