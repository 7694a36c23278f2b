// The MQTT transport of the ESP-IDF port (Kconfig "Transport to the backend" = MQTT 5):
// ESP-IDF's own esp-mqtt client, speaking exactly what the host simulator
// (ports/host/mqtt_device.cpp) and the runtime (MqttGateway, MqttFleet) speak
// (docs/mqtt.md):
//
// * topics <prefix>/<device_id>/up (hello, replies, notifications), .../down (subscribed,
//   QoS 1) and .../state: "online" (retained) once connected, "offline" (retained) as the
//   Last Will;
// * a request carrying the MQTT 5 Response Topic is answered there with its Correlation
//   Data (esp_mqtt5_client_set_publish_property) at the request's QoS (at most 1): how
//   fleet workers call any device; one without it is answered on up (xiaozhi, MqttGateway);
// * the hello is the core's Server::hello("mqtt") plus "client_id" and "token"; with
//   "Say hello when connected" off (hello-less mode) the device only answers requests;
// * {"type":"goodbye"} on down ends the session: a new hello after the backoff, on the
//   same connection (requests keep being answered meanwhile);
// * user name / password, TLS (mqtts://) against the CA of MCPGEN_MQTT_CA_FILE (embedded
//   by codegen in mqtt_ca_pem.h) or the public CA bundle.
//
// Threads: esp-mqtt's task runs on_mqtt_event (reassembly, subscribe); every publish is
// made on the worker task, so the publish property set for a reply cannot be taken by
// another publish in between (esp-mqtt keeps it until the next publish of any task).
#include "esp_port.h"

#if CONFIG_MCPGEN_TRANSPORT_MQTT

// codegen requires this transport's components only when it generates the project for it
// (src/CMakeLists.txt, src/idf_component.yml): a choice changed in menuconfig alone finds none.
#if !__has_include("mqtt_client.h")
#error "project generated for another transport: run codegen build again with MCPGEN_TRANSPORT=mqtt"
#endif

#include <stdio.h>
#include <string.h>

#include "esp_crt_bundle.h"
#include "esp_idf_version.h"
#include "esp_log.h"
#include "mqtt_ca_pem.h"
#include "mqtt_client.h"
#include "mcpgen/mqtt_conventions.h"

#if ESP_IDF_VERSION >= ESP_IDF_VERSION_VAL(5, 5, 0)
#include "esp_transport.h"
#include "lwip/sockets.h"
#define MCPGEN_MQTT_NODELAY 1
#endif

#ifndef CONFIG_MQTT_PROTOCOL_5
#error "the MQTT transport needs MQTT 5 in esp-mqtt: CONFIG_MQTT_PROTOCOL_5=y (selected by MCPGEN_TRANSPORT_MQTT)"
#endif

namespace mcpgen_esp {
namespace {

using mcpgen_mqtt::kMaxCorrelation;
using mcpgen_mqtt::kMaxTopic;

const char* const kTag = "mcpgen-mqtt";

esp_mqtt_client_handle_t g_client;
char g_up[kMaxTopic + 1];
char g_down[kMaxTopic + 1];
char g_state[kMaxTopic + 1];

// Where the replies to the message in each receive slot go (set on esp-mqtt's task when
// the message starts, read on the worker task while the core handles it: the slot
// belongs to one side at a time, handed over through the port's queues).
struct ReplyTarget {
  bool has_topic;
  uint8_t qos;
  uint16_t corr_len;
  char topic[kMaxTopic + 1];
  char corr[kMaxCorrelation];
};
ReplyTarget g_reply[CONFIG_MCPGEN_RX_SLOTS];
const ReplyTarget* g_current;  // worker task: the message being handled
bool g_skipping;  // esp-mqtt task: the message being received is not ours
// esp-mqtt keeps a pointer to the publish properties until the next publish: static,
// and emptied after each publish so that a stale pointer never adds anything.
esp_mqtt5_publish_property_config_t g_props;

void take_reply_target(ReplyTarget& t, const esp_mqtt_event_t& e) {
  t.has_topic = false;
  t.qos = static_cast<uint8_t>(e.qos > 1 ? 1 : (e.qos < 0 ? 0 : e.qos));
  t.corr_len = 0;
  const esp_mqtt5_event_property_t* p = e.property;
  if (p == nullptr || p->response_topic == nullptr) return;
  const size_t n = p->response_topic_len > 0 ? static_cast<size_t>(p->response_topic_len) : 0;
  if (!mcpgen_mqtt::usable_response_topic(p->response_topic, n)) {
    ESP_LOGW(kTag, "ignoring an unusable response topic (%u bytes)", static_cast<unsigned>(n));
    return;
  }
  memcpy(t.topic, p->response_topic, n);
  t.topic[n] = '\0';
  t.has_topic = true;
  if (p->correlation_data != nullptr && p->correlation_data_len > 0 && p->correlation_data_len <= kMaxCorrelation) {
    memcpy(t.corr, p->correlation_data, p->correlation_data_len);
    t.corr_len = p->correlation_data_len;
  }
}

void set_nodelay(esp_mqtt_client_handle_t client) {
#ifdef MCPGEN_MQTT_NODELAY
  // Replies are small and latency-bound: with Nagle's algorithm each one could wait for
  // the broker's delayed ACK (docs/mqtt.md, "Latency"). ESP-IDF < 5.5 has no way to
  // reach the client's socket; there the broker side's set_tcp_nodelay still helps.
  char schemes[2][6] = {"mqtt", "mqtts"};
  for (char* scheme : schemes) {
    esp_transport_handle_t t = esp_mqtt_client_get_transport(client, scheme);
    const int fd = t != nullptr ? esp_transport_get_socket(t) : -1;
    if (fd >= 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
  }
#else
  (void)client;
#endif
}

void on_data(const esp_mqtt_event_t& e) {
  const size_t n = e.data_len > 0 ? static_cast<size_t>(e.data_len) : 0;
  if (e.current_data_offset == 0) {  // the first chunk: it alone has the topic and properties
    g_skipping = !mcpgen_mqtt::topic_is(e.topic, e.topic_len > 0 ? static_cast<size_t>(e.topic_len) : 0, g_down);
    if (g_skipping) return;
    const int slot = rx_begin();
    if (slot >= 0) take_reply_target(g_reply[slot], e);
  }
  if (g_skipping || !rx_active()) return;
  rx_append(e.data, n);
  if (e.current_data_offset + e.data_len >= e.total_data_len) rx_end();
}

void on_mqtt_event(void*, esp_event_base_t, int32_t id, void* data) {
  const esp_mqtt_event_t* e = static_cast<const esp_mqtt_event_t*>(data);
  switch (static_cast<esp_mqtt_event_id_t>(id)) {
    case MQTT_EVENT_CONNECTED:
      ESP_LOGI(kTag, "connected to %s as %s (MQTT 5; up %s, down %s)", CONFIG_MCPGEN_BACKEND_URL, g_client_id, g_up,
               g_down);
      set_nodelay(e->client);
      if (esp_mqtt_client_subscribe(e->client, g_down, 1) < 0) ESP_LOGE(kTag, "subscribing to %s failed", g_down);
      post_connected();  // the worker publishes "online", then the hello
      break;
    case MQTT_EVENT_DISCONNECTED:
      ESP_LOGW(kTag, "disconnected (esp-mqtt reconnects)");
      post_disconnected();
      break;
    case MQTT_EVENT_DATA:
      if (e != nullptr) on_data(*e);
      break;
    case MQTT_EVENT_ERROR:
      if (e != nullptr && e->error_handle != nullptr &&
          e->error_handle->error_type == MQTT_ERROR_TYPE_CONNECTION_REFUSED) {
        ESP_LOGE(kTag, "connection refused by the broker (reason %d): check MCPGEN_MQTT_USERNAME / PASSWORD",
                 static_cast<int>(e->error_handle->connect_return_code));
      } else {
        ESP_LOGE(kTag, "error");
      }
      break;
    default: break;
  }
}

bool publish(const char* topic, const char* data, size_t len, int qos, bool retain) {
  const int id = esp_mqtt_client_publish(g_client, topic, data, static_cast<int>(len), qos, retain ? 1 : 0);
  memset(&g_props, 0, sizeof g_props);
  if (id < 0) ESP_LOGW(kTag, "publishing to %s failed (%d)", topic, id);
  return id >= 0;
}

const char* device_id() { return CONFIG_MCPGEN_MQTT_DEVICE_ID[0] != '\0' ? CONFIG_MCPGEN_MQTT_DEVICE_ID : g_device_id; }

}  // namespace

const char* transport_name() { return "mqtt"; }

bool transport_start() {
  const char* prefix =
      CONFIG_MCPGEN_MQTT_TOPIC_PREFIX[0] != '\0' ? CONFIG_MCPGEN_MQTT_TOPIC_PREFIX : mcpgen_mqtt::kDefaultPrefix;
  if (!mcpgen_mqtt::valid_topic_level(device_id())) {
    ESP_LOGE(kTag, "MCPGEN_MQTT_DEVICE_ID \"%s\" must be one MQTT topic level (no '/', '+' or '#')", device_id());
    return false;
  }
  if (!mcpgen_mqtt::valid_prefix(prefix)) {
    ESP_LOGE(kTag, "MCPGEN_MQTT_TOPIC_PREFIX \"%s\": no '+' or '#', no '/' at either end", prefix);
    return false;
  }
  if (mcpgen_mqtt::build_topic(g_up, sizeof g_up, prefix, device_id(), mcpgen_mqtt::kUp) == 0 ||
      mcpgen_mqtt::build_topic(g_down, sizeof g_down, prefix, device_id(), mcpgen_mqtt::kDown) == 0 ||
      mcpgen_mqtt::build_topic(g_state, sizeof g_state, prefix, device_id(), mcpgen_mqtt::kState) == 0) {
    ESP_LOGE(kTag, "topic prefix and device id are too long");
    return false;
  }
  if (CONFIG_MCPGEN_MQTT_PASSWORD[0] != '\0' && CONFIG_MCPGEN_MQTT_USERNAME[0] == '\0') {
    ESP_LOGE(kTag, "MCPGEN_MQTT_PASSWORD needs MCPGEN_MQTT_USERNAME");
    return false;
  }
  esp_mqtt_client_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.broker.address.uri = CONFIG_MCPGEN_BACKEND_URL;  // mqtt://host:1883 or mqtts://host:8883
  if (kMcpgenMqttCaPem[0] != '\0') {
    cfg.broker.verification.certificate = kMcpgenMqttCaPem;  // the broker's own CA
  } else {
    cfg.broker.verification.crt_bundle_attach = esp_crt_bundle_attach;  // mqtts:// with the public CAs
  }
  cfg.credentials.client_id = g_client_id;
  if (CONFIG_MCPGEN_MQTT_USERNAME[0] != '\0') cfg.credentials.username = CONFIG_MCPGEN_MQTT_USERNAME;
  if (CONFIG_MCPGEN_MQTT_PASSWORD[0] != '\0') cfg.credentials.authentication.password = CONFIG_MCPGEN_MQTT_PASSWORD;
  cfg.session.protocol_ver = MQTT_PROTOCOL_V_5;
  cfg.session.keepalive = CONFIG_MCPGEN_MQTT_KEEPALIVE;
  cfg.session.disable_keepalive = CONFIG_MCPGEN_MQTT_KEEPALIVE == 0;
  cfg.session.last_will.topic = g_state;
  cfg.session.last_will.msg = mcpgen_mqtt::kOffline;
  cfg.session.last_will.msg_len = 7;
  cfg.session.last_will.qos = 1;
  cfg.session.last_will.retain = 1;
  cfg.network.reconnect_timeout_ms = 2000;
  cfg.network.timeout_ms = 10000;
  cfg.buffer.size = 2048;  // longer messages arrive in chunks, reassembled by the port
  g_client = esp_mqtt_client_init(&cfg);
  if (g_client == nullptr) {
    ESP_LOGE(kTag, "bad configuration (URL \"%s\")", CONFIG_MCPGEN_BACKEND_URL);
    return false;
  }
  esp_mqtt_client_register_event(g_client, MQTT_EVENT_ANY, on_mqtt_event, nullptr);
  return esp_mqtt_client_start(g_client) == ESP_OK;
}

bool transport_send(const char* data, size_t len) {
  if (g_client == nullptr) return false;
  if (g_current == nullptr || !g_current->has_topic) return publish(g_up, data, len, 1, false);
  memset(&g_props, 0, sizeof g_props);
  if (g_current->corr_len > 0) {
    g_props.correlation_data = g_current->corr;
    g_props.correlation_data_len = g_current->corr_len;
    if (esp_mqtt5_client_set_publish_property(g_client, &g_props) != ESP_OK) {
      memset(&g_props, 0, sizeof g_props);
      return false;
    }
  }
  return publish(g_current->topic, data, len, g_current->qos, false);
}

void transport_connected() {
  // Presence, on every (re)connection: the retained state that the will overwrites.
  publish(g_state, mcpgen_mqtt::kOnline, strlen(mcpgen_mqtt::kOnline), 1, true);
}

size_t transport_hello(mcpgen::Server& server, char* out, size_t cap) {
#if CONFIG_MCPGEN_MQTT_HELLO
  const size_t n = server.hello("mqtt", out, cap);
  const size_t m = mcpgen_mqtt::extend_hello(out, n, cap, g_client_id, CONFIG_MCPGEN_BACKEND_TOKEN);
  if (m == 0) ESP_LOGE(kTag, "the hello does not fit the response buffer");
  return m;
#else
  (void)server;
  (void)out;
  (void)cap;
  return 0;  // hello-less: the device answers requests as they come
#endif
}

Verdict transport_begin_message(uint8_t slot, char* msg, size_t len, const char* session_id) {
  g_current = slot < CONFIG_MCPGEN_RX_SLOTS ? &g_reply[slot] : nullptr;
  if (g_current != nullptr && !g_current->has_topic && mcpgen_mqtt::is_goodbye(msg, len, session_id)) {
    return Verdict::kSessionEnded;
  }
  return Verdict::kDeliver;
}

void transport_end_message() { g_current = nullptr; }

bool transport_session_ended() { return true; }

}  // namespace mcpgen_esp

#endif  // CONFIG_MCPGEN_TRANSPORT_MQTT
