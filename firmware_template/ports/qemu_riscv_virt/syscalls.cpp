// The picolibc hooks this firmware can need: the heap for malloc (only a handler would
// allocate; the core never does), and _exit for abort(). Nothing else: picolibc's
// snprintf needs no system calls, and no code here uses stdio streams.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

extern "C" {

void* sbrk(ptrdiff_t incr) {
  void* prev = mcpgen_sbrk(incr);
  if (prev == reinterpret_cast<void*>(-1)) errno = ENOMEM;
  return prev;
}

void _exit(int) { board::halt("mcpgen: exit/abort; halted\n"); }

}  // extern "C"
