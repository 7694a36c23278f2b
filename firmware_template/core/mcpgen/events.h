// Device-initiated events declared in the spec's `events:` section. The generated
// mcp_tools.h has one typed emitter per event,
//
//   mcpgen::EventStatus mcpgen::events::emit_button_pressed(int64_t count);
//
// which checks the arguments against the spec, writes the JSON-RPC notification
// {"jsonrpc":"2.0","method":"notifications/events/button_pressed","params":{"count":2}}
// (in the xiaozhi envelope when the peer uses one) into a fixed buffer and sends it
// through the port's send path. Callable from any task: everything happens under the
// port's send lock (EventOutlet). No heap.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mcpgen/mcp_core.h"

// The params object of one event (its JSON text) and the whole outgoing message.
#ifndef MCPGEN_EVENT_PARAMS_SIZE
#define MCPGEN_EVENT_PARAMS_SIZE 384
#endif
#ifndef MCPGEN_EVENT_MESSAGE_SIZE
#define MCPGEN_EVENT_MESSAGE_SIZE 640
#endif

namespace mcpgen {

enum class EventStatus : uint8_t {
  kSent,
  kNoPeer,  // no outlet installed, or the port has no connection now
  kInvalidArgument,  // an argument breaks the spec (range, enum, max_length, NaN)
  kTooLarge,  // does not fit MCPGEN_EVENT_PARAMS_SIZE / MCPGEN_EVENT_MESSAGE_SIZE
  kSendFailed,  // the transport refused it (the link is broken)
};

// "sent", "no peer", ...: for logs.
const char* event_status_text(EventStatus s);

// A port's way out for events. The lock must be the one the port holds around every
// other send (replies, hello) and around Server::handle, so that an event never
// interleaves with another message and never reads the session state mid-update. It
// must be recursive: a tool handler may emit an event while the port holds the lock
// around handle(). Single-task ports (the QEMU images) use no-op lock functions.
class EventOutlet {
 public:
  virtual void lock() = 0;
  virtual void unlock() = 0;
  // Called with the lock held: sends one complete message (no trailing newline; the
  // port frames it like a reply). Returns kNoPeer when not connected.
  virtual EventStatus send_locked(const char* data, size_t len) = 0;

 protected:
  ~EventOutlet() = default;
};

// Installs the outlet and the server whose session (envelope, session_id) frames the
// events. Call once at start-up, before any task emits; nullptr uninstalls.
void set_event_outlet(Server* server, EventOutlet* outlet);

// Writes one event's params object (generated per event).
typedef void (*EventParamsFn)(JsonWriter& w, const void* args);

// The generated emitters call this after checking their arguments.
EventStatus emit_event(const char* method, EventParamsFn write_params, const void* args);

// Length of a NUL-terminated UTF-8 string in code points (the unit of max_length).
size_t event_text_length(const char* s);

}  // namespace mcpgen
