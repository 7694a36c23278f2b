// Polled driver for the Arm CMSDK APB UART, as found on the MPS2 boards (and modelled
// by QEMU's cmsdk-apb-uart). No interrupts, no FIFO: one byte in each direction.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace board {

class CmsdkUart {
 public:
  explicit constexpr CmsdkUart(uintptr_t base) : base_(base) {}

  // Enables TX and RX. `bauddiv` = peripheral clock / baud rate (>= 16).
  void init(uint32_t bauddiv) const;
  void put(char c) const;
  void write(const char* s, size_t n) const;
  void write(const char* s) const;
  // True when a received byte is waiting.
  bool readable() const;
  // Blocks (polling) until a byte arrives.
  char get() const;

 private:
  volatile uint32_t& reg(uintptr_t off) const { return *reinterpret_cast<volatile uint32_t*>(base_ + off); }
  uintptr_t base_;
};

// UART0 carries the MCP stream; UART1 is the debug console (logs, stack figures).
constexpr CmsdkUart kMcpUart(0x40004000u);
constexpr CmsdkUart kLogUart(0x40005000u);

}  // namespace board
