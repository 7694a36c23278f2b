// The newlib system calls this firmware can need. There is no file system and no
// process: stdout/stderr go to the debug console (UART1), stdin is always at EOF, and
// the heap is the region the linker script leaves between .bss and the RAM budget
// (bare_metal/runtime.cpp keeps its high-water mark).
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "board.h"
#include "cmsdk_uart.h"

#undef errno
extern int errno;

extern "C" {

void* _sbrk(ptrdiff_t incr) {
  void* prev = mcpgen_sbrk(incr);
  if (prev == reinterpret_cast<void*>(-1)) errno = ENOMEM;
  return prev;
}

int _write(int fd, const char* buf, int len) {
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  board::kLogUart.write(buf, static_cast<size_t>(len));
  return len;
}

int _read(int, char*, int) { return 0; }
int _close(int) { return -1; }
int _lseek(int, int, int) { return 0; }
int _isatty(int fd) { return fd <= 2 ? 1 : 0; }
int _fstat(int, struct stat* st) {
  st->st_mode = S_IFCHR;
  return 0;
}
int _getpid() { return 1; }
int _kill(int, int) {
  errno = EINVAL;
  return -1;
}
void _exit(int) { board::halt("mcpgen: exit/abort; halted\n"); }

}  // extern "C"
