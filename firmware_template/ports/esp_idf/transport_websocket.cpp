// The WebSocket transport of the ESP-IDF port (Kconfig "Transport to the backend" =
// WebSocket, the default): esp_websocket_client from the component registry (see
// idf_component.yml) with the xiaozhi handshake headers Authorization: Bearer <token>,
// Protocol-Version, Device-Id (the station MAC) and Client-Id (a UUID kept in NVS).
// Text messages are reassembled into the port's receive buffers (esp_port.h); binary
// frames (audio), pings and pongs are not ours. The esp_websocket_client task calls
// on_ws_event; replies are sent from the worker task.
#include "esp_port.h"

#if CONFIG_MCPGEN_TRANSPORT_WEBSOCKET

// codegen requires this transport's components only when it generates the project for it
// (src/CMakeLists.txt, src/idf_component.yml): a choice changed in menuconfig alone finds none.
#if !__has_include("esp_websocket_client.h")
#error "project generated for another transport: run codegen build again with MCPGEN_TRANSPORT=websocket"
#endif

#include <stdio.h>
#include <string.h>

#include "esp_crt_bundle.h"
#include "esp_log.h"
#include "esp_websocket_client.h"
#include "freertos/FreeRTOS.h"

namespace mcpgen_esp {
namespace {

const char* const kTag = "mcpgen-ws";
constexpr int kWsOpText = 0x1;
constexpr int kWsOpContinuation = 0x0;

esp_websocket_client_handle_t g_ws;
char g_headers[640];

void on_text_chunk(const esp_websocket_event_data_t* d) {
  if (d->op_code == kWsOpText && d->payload_offset == 0) rx_begin();
  if (!rx_active()) return;
  rx_append(d->data_ptr, d->data_len > 0 ? static_cast<size_t>(d->data_len) : 0);
  const bool frame_done = d->payload_offset + d->data_len >= d->payload_len;
  if (frame_done && d->fin) rx_end();  // else more chunks or continuation frames follow
}

void on_ws_event(void*, esp_event_base_t, int32_t id, void* data) {
  const esp_websocket_event_data_t* d = static_cast<const esp_websocket_event_data_t*>(data);
  switch (id) {
    case WEBSOCKET_EVENT_CONNECTED:
      ESP_LOGI(kTag, "connected to %s", CONFIG_MCPGEN_BACKEND_URL);
      post_connected();
      break;
    case WEBSOCKET_EVENT_DISCONNECTED:
    case WEBSOCKET_EVENT_CLOSED:
      ESP_LOGW(kTag, "disconnected");
      post_disconnected();
      break;
    case WEBSOCKET_EVENT_DATA:
      if (d != nullptr && (d->op_code == kWsOpText || (d->op_code == kWsOpContinuation && rx_active()))) {
        on_text_chunk(d);
      }
      break;
    case WEBSOCKET_EVENT_ERROR: ESP_LOGE(kTag, "error"); break;
    default: break;
  }
}

}  // namespace

const char* transport_name() { return "websocket"; }

bool transport_start() {
  const char* token = CONFIG_MCPGEN_BACKEND_TOKEN;
  const bool has_scheme = strchr(token, ' ') != nullptr;  // e.g. "Basic ...": sent as is
  int n = snprintf(g_headers, sizeof g_headers,
                   "Authorization: %s%s\r\nProtocol-Version: %d\r\nDevice-Id: %s\r\nClient-Id: %s\r\n",
                   has_scheme ? "" : "Bearer ", token, MCPGEN_XIAOZHI_PROTOCOL_VERSION, g_device_id, g_client_id);
  if (n < 0 || static_cast<size_t>(n) >= sizeof g_headers) {
    ESP_LOGE(kTag, "handshake headers too long (MCPGEN_BACKEND_TOKEN?)");
    return false;
  }
  esp_websocket_client_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.uri = CONFIG_MCPGEN_BACKEND_URL;
  cfg.headers = g_headers;
  cfg.buffer_size = 2048;
  cfg.task_stack = 6144;
  cfg.reconnect_timeout_ms = 3000;
  cfg.network_timeout_ms = 10000;
  cfg.crt_bundle_attach = esp_crt_bundle_attach;  // wss:// with the public CA bundle
  g_ws = esp_websocket_client_init(&cfg);
  if (g_ws == nullptr) {
    ESP_LOGE(kTag, "bad configuration (URL \"%s\")", CONFIG_MCPGEN_BACKEND_URL);
    return false;
  }
  esp_websocket_register_events(g_ws, WEBSOCKET_EVENT_ANY, on_ws_event, nullptr);
  return esp_websocket_client_start(g_ws) == ESP_OK;
}

bool transport_send(const char* data, size_t len) {
  if (g_ws == nullptr || !esp_websocket_client_is_connected(g_ws)) return false;
  return esp_websocket_client_send_text(g_ws, data, static_cast<int>(len), pdMS_TO_TICKS(5000)) >= 0;
}

void transport_connected() {}

size_t transport_hello(mcpgen::Server& server, char* out, size_t cap) { return server.hello("websocket", out, cap); }

Verdict transport_begin_message(uint8_t, char*, size_t, const char*) { return Verdict::kDeliver; }

void transport_end_message() {}

bool transport_session_ended() {
  // The WebSocket gateway ends a session by closing the connection: reconnect.
  ESP_LOGW(kTag, "reconnecting");
  esp_websocket_client_stop(g_ws);
  esp_websocket_client_start(g_ws);
  return false;
}

}  // namespace mcpgen_esp

#endif  // CONFIG_MCPGEN_TRANSPORT_WEBSOCKET
