// The host simulator's `--mqtt HOST:PORT` device mode (docs/mqtt.md) on libmosquitto
// (Debian libmosquitto-dev), speaking MQTT 5.
//
// Topics: publishes to <prefix>/<device_id>/up, subscribes to <prefix>/<device_id>/down,
// and keeps <prefix>/<device_id>/state = "online" (retained) while connected, "offline"
// (retained) as its Last Will. A request that carries the MQTT 5 Response Topic and
// Correlation Data properties is answered on that Response Topic with the same
// Correlation Data (how fleet workers call any device, runtime/links/mqtt/fleet.py); a request
// without them is answered on the up topic (xiaozhi conventions, MqttGateway).
//
// The topic names and the Response Topic, goodbye and hello rules are the core's
// mcpgen/mqtt_conventions.h, the same header the ESP-IDF port uses.
//
// Built only when the compiler finds <mosquitto.h> (codegen/targets/host.py defines
// MCPGEN_HOST_MQTT=1 and links -lmosquitto); otherwise --mqtt says which package is
// missing and exits 2.
#pragma once

#include <stddef.h>

#include "mcpgen/mcp_core.h"
#include "mcpgen/mqtt_conventions.h"

namespace hostport {

struct MqttDeviceOptions {
  const char* broker = nullptr;  // HOST:PORT; set by --mqtt
  const char* device_id = nullptr;
  const char* client_id = nullptr;  // the MQTT client identifier
  const char* username = nullptr;
  const char* password = nullptr;
  const char* token = nullptr;  // sent in the hello as "token" when given (--token)
  const char* topic_prefix = mcpgen_mqtt::kDefaultPrefix;
  int keepalive_s = 60;
  long max_reconnects = -1;  // -1: forever
  int hello_timeout_ms = 10000;
  const char* cafile = nullptr;  // --cafile: TLS to the broker, verified with this CA
};

using LogFn = void (*)(const char* fmt, ...);

// Consumes argv[*i] (and its value) when it is an MQTT-mode option (--mqtt,
// --username, --password, --topic-prefix, --keepalive, --cafile) and returns true.
// `--token` is only observed (returns false): the caller's other modes consume it too.
bool parse_mqtt_arg(int argc, char** argv, int* i, MqttDeviceOptions* opt);

// Splits HOST:PORT (or [IPv6]:PORT; the port defaults to 1883) into its parts.
bool parse_host_port(const char* text, char* host, size_t host_cap, char* port, size_t port_cap, char* err,
                     size_t err_cap);

// Runs the device over MQTT until --max-reconnects is exhausted (forever by default).
// `in`/`out` are the port's request/response buffers; `after_message` (may be null)
// runs after every handled message. Returns the process exit code.
int run_mqtt_device(const MqttDeviceOptions& opt, mcpgen::Server& server, char* in, size_t in_cap, char* out,
                    size_t out_cap, LogFn log, void (*after_message)());

}  // namespace hostport
