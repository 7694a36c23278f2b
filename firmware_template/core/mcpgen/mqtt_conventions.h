// The MQTT conventions of mcpgen devices (docs/mqtt.md), one copy for every port that
// speaks MQTT (ports/esp_idf on esp-mqtt, ports/host on libmosquitto): topic names, which
// Response Topics a device answers on, the xiaozhi `goodbye`, and the extra fields of the
// MQTT hello. Header-only, plain C++17 on the core's JSON reader and writer and the C
// library, so it sits in the core: tests/esp32/test_esp32_mqtt.py compiles it with the
// host g++ and checks it against the runtime's own topic names (mcpgen.mqtt_topics).
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"

namespace mcpgen_mqtt {

constexpr size_t kMaxTopic = 512;  // longest topic the device keeps (its own or a Response Topic)
constexpr size_t kMaxCorrelation = 256;  // longest Correlation Data copied into a reply
constexpr const char* kDefaultPrefix = "mcpgen";
// The topic leaves under <prefix>/<device_id>/ and the retained presence payloads of the
// state topic (the runtime's names: mcpgen.mqtt_topics).
constexpr const char* kUp = "up";  // device -> backend: hello, replies, notifications
constexpr const char* kDown = "down";  // backend -> device: hello, requests, goodbye
constexpr const char* kState = "state";  // retained presence
constexpr const char* kOnline = "online";
constexpr const char* kOffline = "offline";

// A device id is exactly one topic level: non-empty, no '/', '+' or '#'.
inline bool valid_topic_level(const char* s) {
  if (s == nullptr || *s == '\0') return false;
  for (; *s != '\0'; ++s) {
    if (*s == '/' || *s == '+' || *s == '#') return false;
  }
  return true;
}

// A prefix may have several levels ("site/7") but no wildcard, and no empty level at
// either end ("a/" would make "a//<id>/up").
inline bool valid_prefix(const char* s) {
  if (s == nullptr || *s == '\0' || *s == '/') return false;
  size_t n = strlen(s);
  return s[n - 1] != '/' && strpbrk(s, "+#") == nullptr;
}

// "<prefix>/<device_id>/<leaf>" (leaf: "up", "down", "state") into out; 0 when it does
// not fit (or exceeds kMaxTopic), else its length.
inline size_t build_topic(char* out, size_t cap, const char* prefix, const char* device_id, const char* leaf) {
  int n = snprintf(out, cap, "%s/%s/%s", prefix, device_id, leaf);
  if (n < 0 || static_cast<size_t>(n) >= cap || static_cast<size_t>(n) > kMaxTopic) {
    if (cap > 0) out[0] = '\0';
    return 0;
  }
  return static_cast<size_t>(n);
}

// True when `topic` (len bytes, not terminated) is exactly `want`.
inline bool topic_is(const char* topic, size_t len, const char* want) {
  return topic != nullptr && strlen(want) == len && memcmp(topic, want, len) == 0;
}

// Whether a request's Response Topic can be answered on: non-empty, short enough to
// keep, and a topic name (no wildcard, no NUL). Otherwise the reply goes to `up`.
inline bool usable_response_topic(const char* topic, size_t len) {
  if (topic == nullptr || len == 0 || len > kMaxTopic) return false;
  for (size_t i = 0; i < len; ++i) {
    if (topic[i] == '+' || topic[i] == '#' || topic[i] == '\0') return false;
  }
  return true;
}

// Whether "goodbye" occurs in msg[0, len): a cheap test before parsing (memmem is a
// GNU extension that newlib hides in strict modes).
inline bool mentions_goodbye(const char* msg, size_t len) {
  for (size_t i = 0; i + 7 <= len; ++i) {
    if (msg[i] == 'g' && memcmp(msg + i, "goodbye", 7) == 0) return true;
  }
  return false;
}

// A {"type":"goodbye"} from the backend ends the session (xiaozhi semantics); one that
// names another session id is stale and ignored. The message is left intact (the
// reader only records spans).
inline bool is_goodbye(char* msg, size_t len, const char* our_session) {
  if (!mentions_goodbye(msg, len)) return false;
  mcpgen::json::Value root;
  const char* perr = nullptr;
  if (!mcpgen::json::validate(msg, len, &root, &perr) || !root.is(mcpgen::json::Type::kObject)) return false;
  if (!mcpgen::json::string_equals(mcpgen::json::find(root, "type"), "goodbye")) return false;
  mcpgen::json::Value sid = mcpgen::json::find(root, "session_id");
  return !(sid.is(mcpgen::json::Type::kString) && our_session != nullptr && our_session[0] != '\0' &&
           !mcpgen::json::string_equals(sid, our_session));
}

// Turns the core's hello (`len` bytes in out, a JSON object) into the MQTT hello: adds
// "client_id" and, when token is non-empty, "token" (the backend's authenticator reads
// them: MqttGateway, MqttFleet). Returns the new length, 0 when it does not fit.
inline size_t extend_hello(char* out, size_t len, size_t cap, const char* client_id, const char* token) {
  if (len == 0 || len > cap || out[len - 1] != '}') return 0;
  mcpgen::JsonWriter w(out + len - 1, cap - (len - 1));
  w.raw_fragment(",", 1);
  w.key("client_id");
  w.string(client_id);
  if (token != nullptr && token[0] != '\0') {
    w.key("token");
    w.string(token);
  }
  w.raw_fragment("}", 1);
  return w.overflowed() ? 0 : len - 1 + w.size();
}

}  // namespace mcpgen_mqtt
