#include "mcpgen/events.h"

#include <string.h>

#include "mcpgen/json_reader.h"

namespace mcpgen {

namespace {

Server* g_server = nullptr;
EventOutlet* g_outlet = nullptr;
// One event is written at a time (under the outlet's lock): static, not on the
// emitting task's stack, which is small on an ESP32.
char g_params[MCPGEN_EVENT_PARAMS_SIZE];
char g_message[MCPGEN_EVENT_MESSAGE_SIZE];

class Locked {
 public:
  explicit Locked(EventOutlet& o) : o_(o) { o_.lock(); }
  ~Locked() { o_.unlock(); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  EventOutlet& o_;
};

}  // namespace

const char* event_status_text(EventStatus s) {
  switch (s) {
    case EventStatus::kSent: return "sent";
    case EventStatus::kNoPeer: return "no peer";
    case EventStatus::kInvalidArgument: return "invalid argument";
    case EventStatus::kTooLarge: return "too large";
    case EventStatus::kSendFailed: return "send failed";
  }
  return "?";
}

void set_event_outlet(Server* server, EventOutlet* outlet) {
  g_server = server;
  g_outlet = outlet;
}

EventStatus emit_event(const char* method, EventParamsFn write_params, const void* args) {
  EventOutlet* outlet = g_outlet;
  Server* server = g_server;
  if (outlet == nullptr || server == nullptr) return EventStatus::kNoPeer;
  Locked guard(*outlet);
  JsonWriter w(g_params, sizeof g_params - 1);
  write_params(w, args);
  if (w.overflowed()) return EventStatus::kTooLarge;
  g_params[w.size()] = '\0';
  size_t n = server->notification(method, g_params, g_message, sizeof g_message);
  if (n == 0) return EventStatus::kTooLarge;
  return outlet->send_locked(g_message, n);
}

size_t event_text_length(const char* s) { return json::utf8_length(s, strlen(s)); }

}  // namespace mcpgen
