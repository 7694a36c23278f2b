// Runs the ESP-IDF port's update handler (port/mcpgen_esp_ota.cpp) and its rollback rule
// on the host, over the fake ESP-IDF of ota_fake_idf/ (tests/esp32/test_esp32_ota_logic.py).
//   driver update URL SHA256 SIZE VERSION  a tools/call of self.upgrade_firmware through the core
//   driver session                         a pending image: boot, then a backend's session
//   driver deadline                        a pending image whose deadline passes
//   driver settled                         a valid image boots: no deadline
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_idf.h"
#include "mcp_tools.h"
#include "mcpgen_esp_ota.h"

FakeIdf fake;

namespace tools {
mcpgen::Result light_set(const LightSetArgs&, mcpgen::Context&) { return mcpgen::Result::Text("ok"); }
}  // namespace tools

namespace {

char g_in[4096];
char g_out[8192];

void report() {
  printf("begun=%d aborted=%d finished=%d valid=%d rolled_back=%d restarts=%d timers=%d", fake.begun, fake.aborted,
         fake.finished, fake.marked_valid, fake.rolled_back, fake.restarts, fake.timers);
  for (int i = 0; i < fake.timers; ++i) printf(" %s=%llu", fake.timer_name[i], (unsigned long long)fake.timer_us[i]);
  printf("\n");
}

// One message through the worker's sequence: observe, the core, replied.
void message(mcpgen::Server& server, const char* text) {
  size_t n = strlen(text);
  memcpy(g_in, text, n + 1);
  mcpgen_esp::ota_observe(g_in, n);
  size_t out = server.handle(g_in, n, g_out, sizeof g_out);
  mcpgen_esp::ota_replied(out > 0);
  printf("%s -> valid=%d\n", text, fake.marked_valid);
}

}  // namespace

int main(int argc, char** argv) {
  snprintf(fake.running.project_name, sizeof fake.running.project_name, "lamp");
  snprintf(fake.running.version, sizeof fake.running.version, "1.2.0");
  mcpgen::Server server(kMcpSpec);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "update") == 0 && argc == 6) {
    mcpgen_esp::ota_boot();
    int n = snprintf(g_in, sizeof g_in,
                     "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
                     "\"self.upgrade_firmware\",\"arguments\":{\"url\":\"%s\",\"sha256\":\"%s\",\"size\":%s,"
                     "\"version\":\"%s\"}}}",
                     argv[2], argv[3], argv[4], argv[5]);
    size_t out = server.handle(g_in, static_cast<size_t>(n), g_out, sizeof g_out);
    printf("%.*s\n", static_cast<int>(out), g_out);
    // The reboot timer fires after the reply: as the device would.
    for (int i = 0; i < fake.timers; ++i) {
      if (strcmp(fake.timer_name[i], "mcpgen-ota-reboot") == 0 && fake.timer_us[i] > 0)
        fake.timer_cb[i](fake.timer_arg[i]);
    }
    report();
    return 0;
  }
  if (strcmp(mode, "session") == 0 || strcmp(mode, "deadline") == 0 || strcmp(mode, "settled") == 0) {
    fake.pending = strcmp(mode, "settled") != 0;
    mcpgen_esp::ota_boot();
    report();
    if (strcmp(mode, "deadline") == 0) {
      fake.timer_cb[0](fake.timer_arg[0]);
      report();
      return 0;
    }
    message(server, "{\"type\":\"hello\",\"transport\":\"websocket\",\"session_id\":\"s1\"}");
    message(server,
            "{\"session_id\":\"s1\",\"type\":\"mcp\",\"payload\":{\"jsonrpc\":\"2.0\",\"id\":1,"
            "\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\"}}}");
    message(server,
            "{\"session_id\":\"s1\",\"type\":\"mcp\",\"payload\":{\"jsonrpc\":\"2.0\","
            "\"method\":\"notifications/initialized\"}}");
    message(server,
            "{\"session_id\":\"s1\",\"type\":\"mcp\",\"payload\":{\"jsonrpc\":\"2.0\",\"id\":2,"
            "\"method\":\"tools/list\",\"params\":{\"withUserTools\":true}}}");
    message(server, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    report();
    return 0;
  }
  fprintf(stderr, "usage: %s update URL SHA256 SIZE VERSION | session | deadline | settled\n", argv[0]);
  return 2;
}
