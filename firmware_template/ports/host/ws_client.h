// A minimal RFC 6455 WebSocket client over POSIX sockets for the host simulator:
// ws:// only, masked client frames, text messages (fragmented or not), ping -> pong,
// close handshake. No heap: messages are assembled in the caller's buffer.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tcp.h"

namespace hostport {

struct WsUrl {
  char host[256];
  char port[8];
  char path[1024];  // path and query, at least "/"
};

// Parses ws://host[:port][/path]; on failure writes a reason into err.
bool parse_ws_url(const char* url, WsUrl* out, char* err, size_t err_cap);

struct HttpHeader {
  const char* name;
  const char* value;
};

class WsClient : public TcpStream {
 public:
  enum class Recv { kMessage, kOversized, kTimeout, kClosed, kError };

  WsClient();

  // TCP connect + opening handshake (checks the 101 status, Upgrade, Connection and
  // Sec-WebSocket-Accept). On failure writes a reason into err.
  bool connect(const WsUrl& url, const HttpHeader* headers, size_t header_count, int timeout_ms,
               char* err, size_t err_cap);

  // Waits for one complete text message and copies it into buf (up to cap-1 bytes, NUL
  // appended). Answers pings, skips binary messages. A text message longer than cap-1
  // is read to its end and reported as kOversized. timeout_ms < 0 waits forever.
  Recv receive(char* buf, size_t cap, size_t* len, int timeout_ms);

  bool send_text(const char* data, size_t len);
  void close(uint16_t code);  // sends a close frame (best effort) and closes the socket

 private:
  bool send_frame(uint8_t opcode, const char* data, size_t len);
  Recv protocol_error(const char* what);  // closes with 1002; returns kError
  bool skip(uint64_t n);                  // discards n payload bytes
};

// Fills buf with n random bytes (/dev/urandom, falling back to a time-seeded PRNG).
void random_bytes(void* buf, size_t n);

}  // namespace hostport
