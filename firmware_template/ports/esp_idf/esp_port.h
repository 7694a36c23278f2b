// What the transport-neutral part of the ESP-IDF port (mcpgen_esp_port.cpp: identity,
// Wi-Fi, receive buffers, the worker task that runs the core) and the transport built
// in (transport_websocket.cpp, transport_mqtt.cpp or transport_serial.cpp, chosen by the Kconfig choice
// "Transport to the backend") offer each other. Exactly one transport file defines the
// transport_* functions; the other compiles to nothing.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mcpgen/mcp_core.h"
#include "sdkconfig.h"

namespace mcpgen_esp {

// ------------------------------------------------ offered by mcpgen_esp_port.cpp

extern char g_device_id[18];  // "aa:bb:cc:dd:ee:ff", the station MAC
extern char g_client_id[37];  // a UUID kept in NVS

// Called on the transport's own task.
void post_connected();
void post_disconnected();
// Reassembly of one incoming message into a free receive buffer: rx_begin at its first
// chunk (waits for the worker to free a buffer: backpressure, not loss) returns the
// buffer's slot or -1 when none came free (the message is then dropped); rx_append
// for each chunk; rx_end after the last one hands it to the worker (a message that did
// not fit is handed over as oversized, with its first bytes, so the core can answer
// with its id).
int rx_begin();
void rx_append(const void* data, size_t len);
void rx_end();
bool rx_active();

// ------------------------------------------------ offered by the transport

// False for the serial transport: the device then starts no Wi-Fi and needs no backend.
#if CONFIG_MCPGEN_TRANSPORT_SERIAL
constexpr bool kTransportUsesWifi = false;
#else
constexpr bool kTransportUsesWifi = true;
#endif

// What the device hello names as its transport ("websocket", "mqtt").
const char* transport_name();
// Starts connecting (after Wi-Fi is up); false when the configuration is unusable.
bool transport_start();
// Sends one complete message: the reply target of the message being handled, if the
// transport has one (MQTT Response Topic), else the transport's default direction.
bool transport_send(const char* data, size_t len);
// On the worker task, once per (re)connection before the hello (MQTT: "online").
void transport_connected();
// The device hello for this transport in out (0: none, e.g. MQTT hello-less mode).
size_t transport_hello(mcpgen::Server& server, char* out, size_t cap);

enum class Verdict : uint8_t { kDeliver, kSessionEnded };
// Before the core sees the message in `slot` (msg, len bytes): sets where its replies
// go; kSessionEnded when it is the backend's goodbye (not given to the core).
Verdict transport_begin_message(uint8_t slot, char* msg, size_t len, const char* session_id);
void transport_end_message();
// No server hello in time, or a goodbye: true when the device should say hello again
// on the same connection after its backoff (MQTT), false when the transport
// reconnects instead (WebSocket).
bool transport_session_ended();

}  // namespace mcpgen_esp
