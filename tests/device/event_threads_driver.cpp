// Emits spec events from several threads while the main thread serves requests through
// a Session, over one stdout link, the way the host simulator does (event_outlet.h).
// Every line it prints must be one whole JSON message: tests/device/test_device_events.py.
//
//   event_threads_driver THREADS EVENTS_PER_THREAD REQUESTS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_outlet.h"
#include "mcp_tools.h"
#include "mcpgen/events.h"
#include "mcpgen/session.h"

namespace {

mcpgen::Server g_server(kMcpSpec);
char g_request[MCPGEN_REQUEST_BUFFER_SIZE];
char g_response[MCPGEN_RESPONSE_BUFFER_SIZE];
int g_per_thread = 0;

// Writes a message in small pieces, so that two writers without the lock would
// interleave inside a line.
class ChoppyStdoutLink : public mcpgen::Link {
 public:
  bool send(const char* data, size_t len) override {
    for (size_t i = 0; i < len; i += 7) {
      fwrite(data + i, 1, len - i < 7 ? len - i : 7, stdout);
      fflush(stdout);
    }
    fputc('\n', stdout);
    fflush(stdout);
    return true;
  }
};

void* emitter(void*) {
  int failures = 0;
  for (int i = 0; i < g_per_thread; ++i) {
    if (mcpgen::events::emit_button_pressed(1 + i % 5) != mcpgen::EventStatus::kSent) ++failures;
  }
  return reinterpret_cast<void*>(static_cast<intptr_t>(failures));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  int threads = atoi(argv[1]);
  g_per_thread = atoi(argv[2]);
  int requests = atoi(argv[3]);
  mcpgen::set_event_outlet(&g_server, &hostport::event_outlet());
  // Before a link is up, and with arguments the spec forbids: nothing is sent.
  if (mcpgen::events::emit_button_pressed(1) != mcpgen::EventStatus::kNoPeer) return 3;
  ChoppyStdoutLink link;
  mcpgen::Session session(g_server, link, g_response, sizeof g_response);
  hostport::EventLinkScope scope(link);
  if (mcpgen::events::emit_button_pressed(0) != mcpgen::EventStatus::kInvalidArgument) return 4;
  if (mcpgen::events::emit_power_changed(true, "moon") != mcpgen::EventStatus::kInvalidArgument) return 5;
  if (mcpgen::events::emit_power_changed(true, nullptr) != mcpgen::EventStatus::kInvalidArgument) return 6;

  pthread_t tids[64];
  if (threads > 64) threads = 64;
  for (int t = 0; t < threads; ++t) pthread_create(&tids[t], nullptr, emitter, nullptr);
  for (int r = 0; r < requests; ++r) {
    // set_power emits power_changed from inside the handler, with the lock already held.
    int n = snprintf(g_request, sizeof g_request,
                     "{\"session_id\":\"s\",\"type\":\"mcp\",\"payload\":{\"jsonrpc\":\"2.0\",\"id\":%d,"
                     "\"method\":\"tools/call\",\"params\":{\"name\":\"self.light.set_power\","
                     "\"arguments\":{\"on\":%s}}}}",
                     r + 1, r % 2 == 0 ? "true" : "false");
    hostport::SendLock lock;
    if (!session.on_message(g_request, static_cast<size_t>(n))) return 7;
  }
  int failures = 0;
  for (int t = 0; t < threads; ++t) {
    void* rv = nullptr;
    pthread_join(tids[t], &rv);
    failures += static_cast<int>(reinterpret_cast<intptr_t>(rv));
  }
  fprintf(stderr, "failures %d\n", failures);
  return failures == 0 ? 0 : 8;
}
