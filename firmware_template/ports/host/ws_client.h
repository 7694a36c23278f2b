// The host simulator's WebSocket client, on libwebsockets (Debian libwebsockets-dev).
//
// Why libwebsockets: it is the WebSocket C library Debian ships and keeps (framing,
// masking, the opening handshake and its Sec-WebSocket-Accept check, ping/pong, the close
// handshake, fragmentation), event-driven in the simulator's own thread like the
// libmosquitto MQTT mode, and it is what the ESP-IDF port's esp_websocket_client is
// to the device side: nothing of RFC 6455 is written here any more. (wslay was
// considered: it leaves the handshake and its SHA-1/base64 to the caller.)
//
// What stays here: parsing the ws:// URL (the simulator refuses wss:// and anything
// else with exit 2), the xiaozhi handshake headers, reassembling fragmented text
// messages into the caller's buffer (an oversized one is reported, never truncated),
// the answer to a close frame (RFC 6455 7.4: a valid code is echoed, none gets 1000, a
// 1-byte payload or an invalid code gets 1002; libwebsockets would echo them as they
// came), and a queue of outgoing messages written when the socket is writable.
//
// Built only when the compiler finds <libwebsockets.h> (codegen/targets/host.py defines
// MCPGEN_HOST_WS=1 and links -lwebsockets); otherwise --ws says which package is
// missing and exits 2.
#pragma once

#include <stddef.h>
#include <stdint.h>

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

// What the simulator does with one connection (called from WsClient::run).
class WsEvents {
 public:
  virtual void on_open() = 0;  // handshake done
  virtual void on_text(char* msg, size_t len) = 0;  // one whole text message, NUL-terminated
  virtual void on_oversized() = 0;  // a text message longer than the buffer
  virtual bool on_timer() = 0;  // set_timer expired; false closes (1000)

 protected:
  ~WsEvents() = default;
};

class WsClient {
 public:
  WsClient();
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  // Creates the libwebsockets context (once); false with a reason in err.
  bool init(char* err, size_t err_cap);

  // Runs one connection to its end: opening handshake with `headers`, then events.
  // `buf` (cap bytes) receives the text messages. Returns false when it never opened
  // (err: "cannot connect ..." or "handshake rejected: HTTP/1.1 <status>"), true after
  // an open connection ended (err: why).
  bool run(const WsUrl& url, const HttpHeader* headers, size_t header_count, char* buf, size_t cap, WsEvents& events,
           char* err, size_t err_cap);

  // Queues one text message (written when the socket is writable, in order); false
  // when the connection is gone or the queue is full.
  bool send_text(const char* data, size_t len);
  // Calls events.on_timer() after ms milliseconds (ms < 0 cancels).
  void set_timer(int ms);

  struct Impl;

 private:
  Impl* impl_;
};

}  // namespace hostport
