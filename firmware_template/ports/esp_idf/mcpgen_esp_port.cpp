// mcpgen ESP-IDF port, the transport-neutral part: Wi-Fi station, the device identity,
// the receive buffers and the worker task that runs the portable MCP core. The
// transport to the backend is one of transport_websocket.cpp (esp_websocket_client, the
// xiaozhi WebSocket handshake), transport_mqtt.cpp (ESP-IDF's esp-mqtt, MQTT 5) and
// transport_serial.cpp (UART0 / USB-Serial-JTAG, no Wi-Fi), chosen in Kconfig ("Transport
// to the backend"); esp_port.h is the seam between them.
//
//   app_main ── Wi-Fi STA ── transport (its own task) ── reassembles each message into a
//   free receive slot ──queue──► mcpgen worker task: Session/Server (tool handlers run
//   here) ──► transport_send
//
// After connecting the device sends its hello (the core's Server::hello plus what the
// transport adds); the server's hello (with session_id) and every {"type":"mcp",...}
// envelope or bare JSON-RPC message go to the core, which answers in kind.
//
// Configuration comes from the build (Kconfig menu "mcpgen device", filled from
// sdkconfig.defaults, which `codegen build` writes from MCPGEN_* environment variables;
// docs/firmware.md). Nothing is hard-coded. cJSON is not needed here: the core parses
// every message itself.
#include <stdio.h>
#include <string.h>

#include "esp_log.h"
#include "esp_mac.h"
#include "esp_port.h"
#include "esp_random.h"
#include "freertos/FreeRTOS.h"
#include "freertos/event_groups.h"
#include "freertos/queue.h"
#include "freertos/semphr.h"
#include "freertos/task.h"
#include "mcp_tools.h"
#include "mcpgen/events.h"
#include "mcpgen_esp_ota.h"
#include "mcpgen/session.h"
#include "nvs.h"
#include "nvs_flash.h"

// Wi-Fi only for the network transports. codegen requires esp_wifi, esp_netif and esp_event
// only for them (src/CMakeLists.txt, written per transport): a serial device links no Wi-Fi.
#if !CONFIG_MCPGEN_TRANSPORT_SERIAL
#if !__has_include("esp_wifi.h")
#error "project generated for the serial transport: run codegen build again with MCPGEN_TRANSPORT=websocket or mqtt"
#endif
#include "esp_event.h"
#include "esp_netif.h"
#include "esp_wifi.h"
#endif

namespace mcpgen_esp {
char g_device_id[18];
char g_client_id[37];
}  // namespace mcpgen_esp

namespace {

const char* const kTag = "mcpgen";

constexpr EventBits_t kGotIp = BIT0;
constexpr int kServerHelloTimeoutMs = 10000;
// Between hellos on one connection (MQTT: after a goodbye or a hello timeout), as the
// host simulator: 0.2 s doubling to 5 s, back to 0.2 s after a server hello.
constexpr int kMinBackoffMs = 200;
constexpr int kMaxBackoffMs = 5000;

// ------------------------------------------------------------------ state

enum class EventKind : uint8_t { kConnected, kDisconnected, kMessage, kOversized };

struct Event {
  EventKind kind;
  uint8_t slot;
  uint16_t reserved;
  uint32_t len;
};

char g_rx[CONFIG_MCPGEN_RX_SLOTS][MCPGEN_REQUEST_BUFFER_SIZE];
char g_response[MCPGEN_RESPONSE_BUFFER_SIZE];
mcpgen::Server g_server(kMcpSpec);

QueueHandle_t g_events;  // Event, transport task -> worker
QueueHandle_t g_free_slots;  // uint8_t slot indices, worker -> transport task
EventGroupHandle_t g_net;

using mcpgen_esp::g_client_id;
using mcpgen_esp::g_device_id;

// Reassembly of the message being received (transport task only).
struct Rx {
  bool active;
  bool oversized;
  bool have_slot;
  uint8_t slot;
  size_t len;
} g_cur;

// ------------------------------------------------------------------ identity

void make_device_id() {
  uint8_t mac[6] = {0, 0, 0, 0, 0, 0};
  esp_read_mac(mac, ESP_MAC_WIFI_STA);
  snprintf(g_device_id, sizeof g_device_id, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
           mac[5]);
}

void make_client_id() {
  nvs_handle_t nvs;
  if (nvs_open("mcpgen", NVS_READWRITE, &nvs) == ESP_OK) {
    size_t n = sizeof g_client_id;
    if (nvs_get_str(nvs, "client_id", g_client_id, &n) == ESP_OK && n == sizeof g_client_id) {
      nvs_close(nvs);
      return;
    }
  } else {
    nvs = 0;
  }
  uint8_t b[16];
  esp_fill_random(b, sizeof b);
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
  snprintf(g_client_id, sizeof g_client_id, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  if (nvs != 0) {
    nvs_set_str(nvs, "client_id", g_client_id);
    nvs_commit(nvs);
    nvs_close(nvs);
  }
}

// ------------------------------------------------------------------ Wi-Fi

#if !CONFIG_MCPGEN_TRANSPORT_SERIAL
void on_wifi_event(void*, esp_event_base_t base, int32_t id, void* data) {
  if (base == WIFI_EVENT && id == WIFI_EVENT_STA_START) {
    esp_wifi_connect();
  } else if (base == WIFI_EVENT && id == WIFI_EVENT_STA_DISCONNECTED) {
    xEventGroupClearBits(g_net, kGotIp);
    const wifi_event_sta_disconnected_t* d = static_cast<const wifi_event_sta_disconnected_t*>(data);
    ESP_LOGW(kTag, "Wi-Fi disconnected (reason %d), reconnecting", d != nullptr ? d->reason : -1);
    vTaskDelay(pdMS_TO_TICKS(1000));
    esp_wifi_connect();
  } else if (base == IP_EVENT && id == IP_EVENT_STA_GOT_IP) {
    const ip_event_got_ip_t* e = static_cast<const ip_event_got_ip_t*>(data);
    ESP_LOGI(kTag, "got IP " IPSTR, IP2STR(&e->ip_info.ip));
    xEventGroupSetBits(g_net, kGotIp);
  }
}

void start_wifi() {
  ESP_ERROR_CHECK(esp_netif_init());
  ESP_ERROR_CHECK(esp_event_loop_create_default());
  esp_netif_create_default_wifi_sta();
  wifi_init_config_t init = WIFI_INIT_CONFIG_DEFAULT();
  ESP_ERROR_CHECK(esp_wifi_init(&init));
  ESP_ERROR_CHECK(esp_event_handler_instance_register(WIFI_EVENT, ESP_EVENT_ANY_ID, on_wifi_event, nullptr, nullptr));
  ESP_ERROR_CHECK(esp_event_handler_instance_register(IP_EVENT, IP_EVENT_STA_GOT_IP, on_wifi_event, nullptr, nullptr));
  wifi_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  // The settings are string literals: their length is checked here, and exactly their bytes
  // are copied. A 32-byte SSID or a 64-digit PSK fills its field with no terminator, which
  // ESP-IDF accepts (strncpy would make GCC's -Wstringop-truncation fail the build at -Os).
  static_assert(sizeof(CONFIG_MCPGEN_WIFI_SSID) - 1 <= sizeof(cfg.sta.ssid),
                "MCPGEN_WIFI_SSID (CONFIG_MCPGEN_WIFI_SSID) is longer than a Wi-Fi SSID (32 bytes)");
  static_assert(sizeof(CONFIG_MCPGEN_WIFI_PASSWORD) - 1 <= sizeof(cfg.sta.password),
                "MCPGEN_WIFI_PASSWORD (CONFIG_MCPGEN_WIFI_PASSWORD) is longer than 64 bytes "
                "(a WPA2 passphrase has 8 to 63 characters, a raw key 64 hex digits)");
  memcpy(cfg.sta.ssid, CONFIG_MCPGEN_WIFI_SSID, sizeof(CONFIG_MCPGEN_WIFI_SSID) - 1);
  memcpy(cfg.sta.password, CONFIG_MCPGEN_WIFI_PASSWORD, sizeof(CONFIG_MCPGEN_WIFI_PASSWORD) - 1);
  cfg.sta.threshold.authmode = CONFIG_MCPGEN_WIFI_PASSWORD[0] != '\0' ? WIFI_AUTH_WPA2_PSK : WIFI_AUTH_OPEN;
  ESP_ERROR_CHECK(esp_wifi_set_mode(WIFI_MODE_STA));
  ESP_ERROR_CHECK(esp_wifi_set_config(WIFI_IF_STA, &cfg));
  ESP_ERROR_CHECK(esp_wifi_start());
  ESP_LOGI(kTag, "Wi-Fi: connecting to \"%s\"", CONFIG_MCPGEN_WIFI_SSID);
}
#endif  // !CONFIG_MCPGEN_TRANSPORT_SERIAL

// ------------------------------------------------------------------ transport task side

void post(EventKind kind, uint8_t slot, uint32_t len) {
  Event ev = {kind, slot, 0, len};
  if (xQueueSend(g_events, &ev, pdMS_TO_TICKS(1000)) != pdTRUE) {
    ESP_LOGE(kTag, "worker queue full: event dropped");
    if (kind == EventKind::kMessage || kind == EventKind::kOversized) xQueueSend(g_free_slots, &slot, 0);
  }
}

// ------------------------------------------------------------------ worker task

class PortLink : public mcpgen::Link {
 public:
  bool send(const char* data, size_t len) override { return mcpgen_esp::transport_send(data, len); }
};

// Spec events (mcpgen/events.h) from any task: a recursive mutex the worker holds around
// every Session call (a handler that emits runs inside one), and the transport while a
// session is up (between the connection's hello and its loss).
class EspEventOutlet : public mcpgen::EventOutlet {
 public:
  void init() { mu_ = xSemaphoreCreateRecursiveMutex(); }
  void lock() override { xSemaphoreTakeRecursive(mu_, portMAX_DELAY); }
  void unlock() override { xSemaphoreGiveRecursive(mu_); }
  mcpgen::EventStatus send_locked(const char* data, size_t len) override {
    if (!up_) return mcpgen::EventStatus::kNoPeer;
    return link_.send(data, len) ? mcpgen::EventStatus::kSent : mcpgen::EventStatus::kSendFailed;
  }
  void set_up(bool up) { up_ = up; }

 private:
  SemaphoreHandle_t mu_ = nullptr;
  PortLink link_;
  bool up_ = false;
};

EspEventOutlet g_event_outlet;

class SendLock {
 public:
  SendLock() { g_event_outlet.lock(); }
  ~SendLock() { g_event_outlet.unlock(); }
  SendLock(const SendLock&) = delete;
  SendLock& operator=(const SendLock&) = delete;
};

TickType_t ticks_until(TickType_t deadline) {
  const TickType_t now = xTaskGetTickCount();
  return deadline > now ? deadline - now : 0;
}

void worker(void*) {
  PortLink link;
  mcpgen::Session session(g_server, link, g_response, sizeof g_response);
  g_event_outlet.init();
  mcpgen::set_event_outlet(&g_server, &g_event_outlet);
  TickType_t hello_deadline = 0;  // the server hello is due by then
  TickType_t hello_at = 0;  // say hello again at (same connection)
  bool waiting_hello = false;
  bool hello_pending = false;
  int backoff_ms = kMinBackoffMs;

  auto say_hello = [&]() {
    SendLock lock;
    g_server.reset_connection();
    const size_t n = mcpgen_esp::transport_hello(g_server, g_response, sizeof g_response);
    if (n > 0 && link.send(g_response, n)) {
      waiting_hello = true;
      hello_deadline = xTaskGetTickCount() + pdMS_TO_TICKS(kServerHelloTimeoutMs);
    }
  };
  auto session_ended = [&]() {
    waiting_hello = false;
    if (mcpgen_esp::transport_session_ended()) {
      ESP_LOGI(kTag, "new hello in %d ms", backoff_ms);
      hello_pending = true;
      hello_at = xTaskGetTickCount() + pdMS_TO_TICKS(backoff_ms);
      backoff_ms = backoff_ms * 2 > kMaxBackoffMs ? kMaxBackoffMs : backoff_ms * 2;
    }
  };

  for (;;) {
    Event ev;
    TickType_t wait = portMAX_DELAY;
    if (waiting_hello) wait = ticks_until(hello_deadline);
    if (hello_pending && ticks_until(hello_at) < wait) wait = ticks_until(hello_at);
    if (xQueueReceive(g_events, &ev, wait) != pdTRUE) {
      if (waiting_hello && ticks_until(hello_deadline) == 0) {
        ESP_LOGE(kTag, "no server hello within %d ms", kServerHelloTimeoutMs);
        session_ended();
      } else if (hello_pending && ticks_until(hello_at) == 0) {
        hello_pending = false;
        say_hello();
      }
      continue;
    }
    switch (ev.kind) {
      case EventKind::kConnected: {
        hello_pending = false;
        backoff_ms = kMinBackoffMs;
        mcpgen_esp::transport_connected();
        {
          SendLock lock;
          g_event_outlet.set_up(true);
        }
        say_hello();
        break;
      }
      case EventKind::kDisconnected: {
        SendLock lock;
        g_event_outlet.set_up(false);
        waiting_hello = false;
        hello_pending = false;
        break;
      }
      case EventKind::kOversized:
        ESP_LOGW(kTag, "dropped a message longer than %d bytes", MCPGEN_REQUEST_BUFFER_SIZE - 1);
        {
          // The lock covers the whole message: an event published from another task
          // cannot take this reply's MQTT properties (Response Topic, Correlation Data).
          SendLock lock;
          mcpgen_esp::transport_begin_message(ev.slot, g_rx[ev.slot], 0, g_server.session_id());
          session.on_oversized(g_rx[ev.slot], ev.len);
          mcpgen_esp::transport_end_message();
        }
        xQueueSend(g_free_slots, &ev.slot, 0);
        break;
      case EventKind::kMessage: {
        SendLock lock;
        if (mcpgen_esp::transport_begin_message(ev.slot, g_rx[ev.slot], ev.len, g_server.session_id()) ==
            mcpgen_esp::Verdict::kSessionEnded) {
          ESP_LOGI(kTag, "goodbye from the server (session %s)", g_server.session_id());
          session_ended();
        } else {
          mcpgen_esp::ota_observe(g_rx[ev.slot], ev.len);  // device.ota: a new image's session
          mcpgen_esp::ota_replied(session.on_message(g_rx[ev.slot], ev.len));
        }
        mcpgen_esp::transport_end_message();
      }
        xQueueSend(g_free_slots, &ev.slot, 0);
        if (waiting_hello && g_server.peer_hello_received()) {
          waiting_hello = false;
          backoff_ms = kMinBackoffMs;
          ESP_LOGI(kTag, "server hello, session_id=%s", g_server.session_id());
        }
        ESP_LOGD(kTag, "message %u bytes; worker stack high-water mark %u bytes free", static_cast<unsigned>(ev.len),
                 static_cast<unsigned>(uxTaskGetStackHighWaterMark(nullptr)));
        break;
    }
  }
}

}  // namespace

// ------------------------------------------------------------------ the seam (esp_port.h)

namespace mcpgen_esp {

void post_connected() { post(EventKind::kConnected, 0, 0); }
void post_disconnected() { post(EventKind::kDisconnected, 0, 0); }

bool rx_active() { return g_cur.active; }

int rx_begin() {
  if (g_cur.active && g_cur.have_slot) xQueueSend(g_free_slots, &g_cur.slot, 0);  // abandoned message
  g_cur = Rx{true, false, false, 0, 0};
  // Backpressure: wait for the worker to free a buffer rather than drop the message.
  if (xQueueReceive(g_free_slots, &g_cur.slot, pdMS_TO_TICKS(5000)) == pdTRUE) {
    g_cur.have_slot = true;
    return g_cur.slot;
  }
  ESP_LOGE(kTag, "no free receive buffer: message dropped");
  return -1;
}

void rx_append(const void* data, size_t n) {
  if (!g_cur.active) return;
  if (g_cur.len + n + 1 > sizeof g_rx[0]) {  // keep one byte for the core's NUL
    g_cur.oversized = true;
  } else if (g_cur.have_slot && n > 0) {
    memcpy(g_rx[g_cur.slot] + g_cur.len, data, n);
    g_cur.len += n;
  }
}

void rx_end() {
  if (!g_cur.active) return;
  g_cur.active = false;
  if (!g_cur.have_slot) return;
  // An oversized message keeps its first bytes in the slot: the core answers with its id.
  post(g_cur.oversized ? EventKind::kOversized : EventKind::kMessage, g_cur.slot, static_cast<uint32_t>(g_cur.len));
}

}  // namespace mcpgen_esp

extern "C" void app_main(void) {
  esp_err_t err = nvs_flash_init();
  if (err == ESP_ERR_NVS_NO_FREE_PAGES || err == ESP_ERR_NVS_NEW_VERSION_FOUND) {
    ESP_ERROR_CHECK(nvs_flash_erase());
    err = nvs_flash_init();
  }
  ESP_ERROR_CHECK(err);
  mcpgen_esp::ota_boot();  // device.ota: a new image starts its rollback deadline
  make_device_id();
  make_client_id();
  ESP_LOGI(kTag, "%s %s (spec %s, %u tools): device %s, client %s", kMcpSpec.device_name, kMcpSpec.device_version,
           kMcpSpec.fingerprint, static_cast<unsigned>(kMcpSpec.tool_count), g_device_id, g_client_id);

  const bool wifi = mcpgen_esp::kTransportUsesWifi;  // not for the serial transport
  if (wifi && (CONFIG_MCPGEN_WIFI_SSID[0] == '\0' || CONFIG_MCPGEN_BACKEND_URL[0] == '\0')) {
    for (;;) {
      ESP_LOGE(kTag,
               "not configured: set MCPGEN_WIFI_SSID, MCPGEN_WIFI_PASSWORD, MCPGEN_BACKEND_URL and "
               "MCPGEN_BACKEND_TOKEN, then `codegen build` again (or `pio run -t menuconfig`)");
      vTaskDelay(pdMS_TO_TICKS(10000));
    }
  }

  g_events = xQueueCreate(CONFIG_MCPGEN_RX_SLOTS + 4, sizeof(Event));
  g_free_slots = xQueueCreate(CONFIG_MCPGEN_RX_SLOTS, sizeof(uint8_t));
  g_net = xEventGroupCreate();
  for (uint8_t i = 0; i < CONFIG_MCPGEN_RX_SLOTS; ++i) xQueueSend(g_free_slots, &i, 0);

#if !CONFIG_MCPGEN_TRANSPORT_SERIAL
  start_wifi();
  xEventGroupWaitBits(g_net, kGotIp, pdFALSE, pdTRUE, portMAX_DELAY);
#endif
  // Handlers run here, never on the transport's task.
  xTaskCreate(worker, "mcpgen", CONFIG_MCPGEN_WORKER_STACK_SIZE, nullptr, 5, nullptr);
  if (!mcpgen_esp::transport_start()) {
    for (;;) {
      ESP_LOGE(kTag, "%s transport not started: check the configuration above, then `codegen build` again",
               mcpgen_esp::transport_name());
      vTaskDelay(pdMS_TO_TICKS(10000));
    }
  }
}
