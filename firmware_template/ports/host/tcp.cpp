#include "tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

namespace hostport {

int64_t now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int remaining_ms(int64_t deadline_ms) {
  if (deadline_ms < 0) return -1;
  int64_t left = deadline_ms - now_ms();
  if (left < 0) return 0;
  return left > 0x7FFFFFFF ? 0x7FFFFFFF : static_cast<int>(left);
}

void sleep_ms(int ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = static_cast<long>(ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void random_bytes(void* buf, size_t n) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  size_t got = 0;
  if (fd >= 0) {
    while (got < n) {
      ssize_t r = read(fd, static_cast<char*>(buf) + got, n - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    ::close(fd);
  }
  static uint64_t state = 0;
  if (state == 0) state = static_cast<uint64_t>(now_ms()) ^ (static_cast<uint64_t>(getpid()) << 32) ^ 1;
  for (; got < n; ++got) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    static_cast<uint8_t*>(buf)[got] = static_cast<uint8_t>(state);
  }
}

}  // namespace hostport
