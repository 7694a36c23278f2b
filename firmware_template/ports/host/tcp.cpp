#include "tcp.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
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

TcpStream::TcpStream(const char* eof_reason) : fd_(-1), eof_reason_(eof_reason), rpos_(0), rlen_(0) {
  error_[0] = '\0';
}

TcpStream::~TcpStream() { close_socket(); }

void TcpStream::close_socket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TcpStream::fail(const char* what) {
  snprintf(error_, sizeof error_, "%s", what);
  close_socket();
}

bool TcpStream::open(const char* host, const char* port, char* err, size_t err_cap) {
  close_socket();
  rpos_ = rlen_ = 0;
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* res = nullptr;
  int gai = getaddrinfo(host, port, &hints, &res);
  if (gai != 0) {
    snprintf(err, err_cap, "cannot resolve %s: %s", host, gai_strerror(gai));
    return false;
  }
  int fd = -1;
  for (struct addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      snprintf(err, err_cap, "cannot connect to %s:%s: %s", host, port, strerror(errno));
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fd_ = fd;
  return true;
}

bool TcpStream::send_all(const void* data, size_t len, bool more) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    if (fd_ < 0) return false;
    ssize_t n = ::send(fd_, p, len, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(strerror(errno));
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

int TcpStream::wait_readable(int64_t deadline_ms) {
  if (rpos_ < rlen_) return 1;
  for (;;) {
    if (fd_ < 0) return -1;
    struct pollfd pfd;
    pfd.fd = fd_;
    pfd.events = POLLIN;
    pfd.revents = 0;
    int pr = poll(&pfd, 1, remaining_ms(deadline_ms));
    if (pr < 0) {
      if (errno == EINTR) continue;
      fail(strerror(errno));
      return -1;
    }
    return pr == 0 ? 0 : 1;
  }
}

int TcpStream::read_exact(void* dst, size_t n, int64_t deadline_ms) {
  uint8_t* out = static_cast<uint8_t*>(dst);
  while (n > 0) {
    if (rpos_ < rlen_) {
      size_t take = rlen_ - rpos_ < n ? rlen_ - rpos_ : n;
      if (out != nullptr) {
        memcpy(out, rbuf_ + rpos_, take);
        out += take;
      }
      rpos_ += take;
      n -= take;
      continue;
    }
    int w = wait_readable(deadline_ms);
    if (w <= 0) return w;
    ssize_t r = ::recv(fd_, rbuf_, sizeof rbuf_, 0);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail(strerror(errno));
      return -1;
    }
    if (r == 0) {
      fail(eof_reason_);
      return -1;
    }
    rpos_ = 0;
    rlen_ = static_cast<size_t>(r);
  }
  return 1;
}

}  // namespace hostport
