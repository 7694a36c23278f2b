#include "cmsdk_uart.h"

namespace board {
namespace {

// Register offsets and bits of the CMSDK APB UART.
constexpr uintptr_t kData = 0x00;
constexpr uintptr_t kState = 0x04;
constexpr uintptr_t kCtrl = 0x08;
constexpr uintptr_t kBaudDiv = 0x10;
constexpr uint32_t kStateTxFull = 1u << 0;
constexpr uint32_t kStateRxFull = 1u << 1;
constexpr uint32_t kCtrlTxEnable = 1u << 0;
constexpr uint32_t kCtrlRxEnable = 1u << 1;

}  // namespace

void CmsdkUart::init(uint32_t bauddiv) const {
  reg(kCtrl) = 0;
  reg(kBaudDiv) = bauddiv < 16 ? 16 : bauddiv;
  reg(kCtrl) = kCtrlTxEnable | kCtrlRxEnable;
}

void CmsdkUart::put(char c) const {
  while (reg(kState) & kStateTxFull) {
  }
  reg(kData) = static_cast<uint8_t>(c);
}

void CmsdkUart::write(const char* s, size_t n) const {
  for (size_t i = 0; i < n; ++i) put(s[i]);
}

void CmsdkUart::write(const char* s) const {
  while (*s) put(*s++);
}

bool CmsdkUart::readable() const { return (reg(kState) & kStateRxFull) != 0; }

char CmsdkUart::get() const {
  while (!readable()) {
  }
  return static_cast<char>(reg(kData) & 0xFFu);
}

}  // namespace board
