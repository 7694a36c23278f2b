// MQTT for the host simulator: a minimal MQTT 3.1.1 client over POSIX sockets
// (MqttClient) and the simulator's `--mqtt HOST:PORT` device mode (run_mqtt_device).
//
// Client: CONNECT (clean session, keepalive, optional user name / password, optional
// will), SUBSCRIBE with QoS 0/1 (waits for the SUBACK), PUBLISH with QoS 0/1 (QoS 1
// publishes are counted until their PUBACK; nothing is retransmitted: every connection
// is a clean session), PINGREQ when the link was idle for 3/4 of the keepalive (a
// missing PINGRESP within the keepalive ends the link), incoming QoS 1 PUBLISH is
// acknowledged with PUBACK, DISCONNECT. No heap: messages land in the caller's buffer.
//
// Device mode (docs/mqtt.md): publishes to <prefix>/<device_id>/up, subscribes to
// <prefix>/<device_id>/down, and keeps <prefix>/<device_id>/state = "online" (retained)
// while connected, "offline" (retained) as its last will.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mcpgen/mcp_core.h"
#include "tcp.h"

namespace hostport {

struct MqttConnectOptions {
  const char* host = nullptr;
  const char* port = "1883";
  const char* client_id = "";
  const char* username = nullptr;  // null: not sent
  const char* password = nullptr;  // null: not sent (needs a user name)
  uint16_t keepalive_s = 60;       // 0 disables keepalive pings
  const char* will_topic = nullptr;  // null: no will
  const char* will_payload = "";
  uint8_t will_qos = 1;
  bool will_retain = true;
};

class MqttClient : public TcpStream {
 public:
  enum class Recv { kMessage, kOversized, kTimeout, kClosed, kError };

  MqttClient();

  // TCP connect + CONNECT, waits for the CONNACK. On failure writes a reason into err
  // (including the broker's refusal reason, e.g. "bad user name or password").
  bool connect(const MqttConnectOptions& opt, int timeout_ms, char* err, size_t err_cap);
  // SUBSCRIBE one topic filter with QoS 0 or 1; true when the SUBACK grants it.
  bool subscribe(const char* topic_filter, uint8_t qos, int timeout_ms);
  // PUBLISH with QoS 0 or 1 (a QoS 1 publish stays counted in unacked() until its PUBACK).
  bool publish(const char* topic, const char* data, size_t len, uint8_t qos, bool retain);

  // Waits for one incoming PUBLISH: its topic goes into topic (NUL-terminated, up to
  // topic_cap-1 bytes; longer topics are dropped) and its payload into buf (up to cap-1
  // bytes, NUL appended). A longer payload is read to its end and reported as
  // kOversized (*len = its size). PUBACK, SUBACK, PINGRESP and keepalive pings are
  // handled in between. timeout_ms < 0 waits forever.
  Recv receive(char* topic, size_t topic_cap, char* buf, size_t cap, size_t* len, int timeout_ms);

  void disconnect();  // sends DISCONNECT (the broker then drops the will) and closes
  void abort();       // closes the socket without DISCONNECT (the broker sends the will)
  uint32_t unacked() const { return unacked_; }

 private:
  enum class Step { kPublish, kOversized, kControl, kTimeout, kError };
  Step step(char* topic, size_t topic_cap, char* buf, size_t cap, size_t* len, int64_t deadline_ms);
  bool send(const void* data, size_t len, bool more);  // send_all, noting the time for keepalive
  bool send_control(uint8_t type_flags, const uint8_t* body, size_t body_len);
  bool read_packet_head(uint8_t* type, uint32_t* remaining);
  uint16_t next_packet_id();

  uint16_t packet_id_;
  uint16_t keepalive_s_;
  int64_t last_send_ms_;
  int64_t ping_sent_ms_;  // -1: no PINGREQ outstanding
  uint32_t unacked_;
  uint16_t sub_id_;
  bool sub_done_;
  uint8_t sub_rc_;
};

// Splits HOST:PORT (or [IPv6]:PORT; the port defaults to 1883) into its parts.
bool parse_host_port(const char* text, char* host, size_t host_cap, char* port, size_t port_cap, char* err,
                     size_t err_cap);

// ------------------------------------------------------------------ device mode

struct MqttDeviceOptions {
  const char* broker = nullptr;  // HOST:PORT; set by --mqtt
  const char* device_id = nullptr;
  const char* client_id = nullptr;  // the MQTT client identifier
  const char* username = nullptr;
  const char* password = nullptr;
  const char* token = nullptr;  // sent in the hello as "token" when given (--token)
  const char* topic_prefix = "mcpgen";
  int keepalive_s = 60;
  long max_reconnects = -1;  // -1: forever
  int hello_timeout_ms = 10000;
};

using LogFn = void (*)(const char* fmt, ...);

// Consumes argv[*i] (and its value) when it is an MQTT-mode option (--mqtt,
// --username, --password, --topic-prefix, --keepalive) and returns true. `--token` is
// only observed (returns false): the caller's other modes consume it too.
bool parse_mqtt_arg(int argc, char** argv, int* i, MqttDeviceOptions* opt);

// Runs the device over MQTT until --max-reconnects is exhausted (forever by default).
// `in`/`out` are the port's request/response buffers; `after_message` (may be null)
// runs after every handled message. Returns the process exit code.
int run_mqtt_device(const MqttDeviceOptions& opt, mcpgen::Server& server, char* in, size_t in_cap, char* out,
                    size_t out_cap, LogFn log, void (*after_message)());

}  // namespace hostport
