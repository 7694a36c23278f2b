// The C++ runtime a generic RISC-V GCC lacks (Debian's gcc-riscv64-unknown-elf ships no
// libstdc++), reduced to what the mcpgen firmware and ESP-IDF's C++ components (`cxx`,
// `nvs_flash`) use when built with -fno-exceptions -fno-rtti: the allocation operators,
// std::nothrow and the pure-virtual trap. The core and the port use C headers only, so nothing
// of the C++ library proper is needed.
// scripts/esp_idf_gnu_riscv.sh compiles this into DIR/lib/libstdc++.a (and an empty
// libsupc++.a), which the riscv32-esp-elf-g++ wrapper links. Not for Espressif's toolchain,
// which has the real library.
#include <stddef.h>  // GCC's own header: the shim is built before any C library is chosen

extern "C" {
void* malloc(size_t size);
void free(void* p);
[[noreturn]] void abort();
}

namespace std {
struct nothrow_t {
  explicit nothrow_t() = default;
};
enum class align_val_t : size_t {};
// The object `new (std::nothrow) T` names (ESP-IDF's nvs_flash allocates its pages so).
extern const nothrow_t nothrow;
const nothrow_t nothrow{};
}  // namespace std

void* operator new(size_t size) {
  void* p = malloc(size != 0 ? size : 1);
  if (p == nullptr) abort();  // no exceptions: the standard's bad_alloc becomes an abort
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return malloc(size != 0 ? size : 1); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return malloc(size != 0 ? size : 1); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { free(p); }

extern "C" void __cxa_pure_virtual() { abort(); }
extern "C" void __cxa_deleted_virtual() { abort(); }
