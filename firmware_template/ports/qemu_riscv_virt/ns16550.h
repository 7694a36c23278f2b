// Polled driver for the 16550-compatible UART of QEMU's RISC-V `virt` machine (and of
// many real SoCs): byte-wide registers, no reg-shift. It raises its interrupt line when a
// byte is waiting, so the firmware can sleep in `wfi` instead of spinning (see board.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace board {

class Ns16550 {
 public:
  explicit constexpr Ns16550(uintptr_t base) : base_(base) {}

  // 8N1 at clock / (16 * divisor) baud, interrupts off. The FIFO control register is
  // left alone on purpose: writing it flushes the receive FIFO, which on QEMU drops bytes
  // a client already sent before the firmware booted.
  void init(uint16_t divisor) const;
  // The receive interrupt: the line is high while it is enabled and a byte waits. The
  // reader enables it only around `wfi`, so the line is low whenever nobody sleeps.
  void enable_rx_interrupt(bool on) const;
  void put(char c) const;
  void write(const char* s, size_t n) const;
  // True when a received byte is waiting.
  bool readable() const;
  // The waiting byte (call only when readable()).
  char take() const;

 private:
  volatile uint8_t& reg(uintptr_t off) const { return *reinterpret_cast<volatile uint8_t*>(base_ + off); }
  uintptr_t base_;
};

// The virt machine has one UART: it carries the MCP stream. The debug console goes to
// the emulator's semihosting console instead (board.cpp).
constexpr Ns16550 kMcpUart(0x10000000u);
// Its interrupt source number on the PLIC.
constexpr uint32_t kMcpUartIrq = 10;
// The UART input clock QEMU's virt machine declares in its device tree (3.6864 MHz).
constexpr uint32_t kUartClockHz = 3686400u;

}  // namespace board
