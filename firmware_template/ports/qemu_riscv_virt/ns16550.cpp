#include "ns16550.h"

namespace board {
namespace {

// Register offsets (DLAB = 0 unless noted) and bits.
constexpr uintptr_t kRbrThr = 0;  // receive buffer / transmit holding; DLAB=1: divisor low
constexpr uintptr_t kIer = 1;  // interrupt enable; DLAB=1: divisor high
constexpr uintptr_t kLcr = 3;  // line control
constexpr uintptr_t kLsr = 5;  // line status
constexpr uint8_t kLcrDlab = 0x80;
constexpr uint8_t kLcr8N1 = 0x03;
constexpr uint8_t kIerRxAvailable = 0x01;
constexpr uint8_t kLsrDataReady = 0x01;
constexpr uint8_t kLsrThrEmpty = 0x20;

}  // namespace

void Ns16550::init(uint16_t divisor) const {
  reg(kLcr) = kLcrDlab;
  reg(kRbrThr) = static_cast<uint8_t>(divisor & 0xFFu);
  reg(kIer) = static_cast<uint8_t>(divisor >> 8);
  reg(kLcr) = kLcr8N1;
  reg(kIer) = 0;
}

void Ns16550::enable_rx_interrupt(bool on) const { reg(kIer) = on ? kIerRxAvailable : 0; }

void Ns16550::put(char c) const {
  while ((reg(kLsr) & kLsrThrEmpty) == 0) {
  }
  reg(kRbrThr) = static_cast<uint8_t>(c);
}

void Ns16550::write(const char* s, size_t n) const {
  for (size_t i = 0; i < n; ++i) put(s[i]);
}

bool Ns16550::readable() const { return (reg(kLsr) & kLsrDataReady) != 0; }

char Ns16550::take() const { return static_cast<char>(reg(kRbrThr)); }

}  // namespace board
