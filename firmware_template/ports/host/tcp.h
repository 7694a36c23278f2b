// TCP for the host simulator's network clients (ws_client): a monotonic
// clock, poll() timeouts, sleeping, and TcpStream (connect with TCP_NODELAY, send everything,
// buffered exact reads with a deadline). POSIX sockets, no heap.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hostport {

// Milliseconds of CLOCK_MONOTONIC.
int64_t now_ms();

// The poll() timeout until deadline_ms (a now_ms() value): -1 (forever) when the
// deadline is negative, 0 once it has passed.
int remaining_ms(int64_t deadline_ms);

// Sleeps ms milliseconds (resumed after signals).
void sleep_ms(int ms);

// A client TCP connection with a receive buffer. The clients derive from it and use the
// protected helpers; every failure closes the socket and leaves its reason in last_error().
class TcpStream {
 public:
  TcpStream(const TcpStream&) = delete;
  TcpStream& operator=(const TcpStream&) = delete;

  bool is_open() const { return fd_ >= 0; }
  const char* last_error() const { return error_; }

 protected:
  // eof_reason: last_error() when the peer closes the connection.
  explicit TcpStream(const char* eof_reason);
  ~TcpStream();

  // Closes any previous connection, empties the receive buffer, resolves host:port and
  // connects to the first address that accepts (TCP_NODELAY). On failure writes a
  // reason into err.
  bool open(const char* host, const char* port, char* err, size_t err_cap);
  void close_socket();
  void fail(const char* what);  // records what, closes the socket

  // Sends all len bytes (more: MSG_MORE, the caller sends the rest right after).
  bool send_all(const void* data, size_t len, bool more);
  int wait_readable(int64_t deadline_ms);  // 1 readable, 0 timeout, -1 error
  // Reads exactly n bytes (into dst, or discards them when dst is null).
  int read_exact(void* dst, size_t n, int64_t deadline_ms);  // 1 ok, 0 timeout, -1 error/EOF

  int fd_;
  char error_[160];

 private:
  const char* eof_reason_;
  uint8_t rbuf_[4096];
  size_t rpos_;
  size_t rlen_;
};

}  // namespace hostport
