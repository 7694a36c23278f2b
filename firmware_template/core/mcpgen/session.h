// The glue every port uses between its transport and the Server: the port delivers
// complete incoming messages (a line, a WebSocket text message, an MQTT payload) and
// implements Link to send one; Session sends the reply and any device notification a
// handler queued. Plain C++17, no OS dependency: the host simulator and the ESP-IDF
// port share it. Buffers belong to the port (no heap).
#pragma once

#include <stddef.h>

#include "mcpgen/mcp_core.h"

namespace mcpgen {

// Link, the port's way to send one message, is declared in mcpgen/mcp_core.h.

class Session {
 public:
  // `out` (MCPGEN_RESPONSE_BUFFER_SIZE bytes, typically) holds each outgoing message.
  Session(Server& server, Link& link, char* out, size_t out_cap);

  // One complete incoming message: `in` holds len bytes and has room for len+1.
  // Returns false when sending failed (the link is broken).
  bool on_message(char* in, size_t len);
  // The port dropped a message longer than its request buffer.
  bool on_oversized();
  // The same, with the first prefix_len bytes of that message (the reply then carries
  // its id when it can be read there; see Server::oversized_reply).
  bool on_oversized(const char* prefix, size_t prefix_len);
  // Sends the device hello ("websocket", "mqtt", ...).
  bool send_hello(const char* transport);
  // Sends a device-initiated notification (see Server::notification).
  bool notify(const char* method, const char* params_json);

  Server& server() { return server_; }

 private:
  bool send_pending();

  Server& server_;
  Link& link_;
  char* out_;
  size_t out_cap_;
};

}  // namespace mcpgen
