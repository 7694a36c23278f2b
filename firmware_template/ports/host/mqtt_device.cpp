// The simulator's --mqtt device mode on libmosquitto (see mqtt_device.h, docs/mqtt.md).
//
// libmosquitto runs in the caller's thread (mosquitto_loop), so the message callback
// can hand each request straight to the core's Session; replies go out from inside the
// callback and are written by the next loop turn. The core's request path stays free
// of heap use; libmosquitto itself allocates per packet, which is the port's business.
#include "mqtt_device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/mqtt_conventions.h"
#include "mcpgen/session.h"
#include "event_outlet.h"
#include "tcp.h"
#include "ota.h"  // a new image is valid once the server hello arrives

#if MCPGEN_HOST_MQTT
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif

namespace hostport {

bool parse_host_port(const char* text, char* host, size_t host_cap, char* port, size_t port_cap, char* err,
                     size_t err_cap) {
  const char* p = text;
  const char* host_end;
  if (*p == '[') {
    ++p;
    host_end = strchr(p, ']');
    if (host_end == nullptr) {
      snprintf(err, err_cap, "bad IPv6 host in %s", text);
      return false;
    }
  } else {
    host_end = strrchr(p, ':');
    if (host_end == nullptr) host_end = p + strlen(p);
  }
  size_t hl = static_cast<size_t>(host_end - p);
  if (hl == 0 || hl >= host_cap) {
    snprintf(err, err_cap, "bad host in %s (expected HOST:PORT)", text);
    return false;
  }
  memcpy(host, p, hl);
  host[hl] = '\0';
  const char* q = host_end + (*host_end == ']' ? 1 : 0);
  if (*q == '\0') {
    snprintf(port, port_cap, "1883");
    return true;
  }
  if (*q != ':') {
    snprintf(err, err_cap, "bad broker address %s (expected HOST:PORT)", text);
    return false;
  }
  ++q;
  size_t pl = strlen(q);
  bool digits = pl > 0 && pl < port_cap && pl <= 5;
  for (size_t i = 0; digits && i < pl; ++i) digits = q[i] >= '0' && q[i] <= '9';
  if (!digits || atoi(q) <= 0 || atoi(q) > 65535) {
    snprintf(err, err_cap, "bad port in %s", text);
    return false;
  }
  memcpy(port, q, pl + 1);
  return true;
}

bool parse_mqtt_arg(int argc, char** argv, int* i, MqttDeviceOptions* opt) {
  const char* a = argv[*i];
  if (*i + 1 >= argc) return false;
  const char* v = argv[*i + 1];
  if (strcmp(a, "--token") == 0) {
    opt->token = v;
    return false;  // observed only: the WebSocket options take it too
  }
  if (strcmp(a, "--mqtt") == 0) {
    opt->broker = v;
  } else if (strcmp(a, "--username") == 0) {
    opt->username = v;
  } else if (strcmp(a, "--password") == 0) {
    opt->password = v;
  } else if (strcmp(a, "--topic-prefix") == 0) {
    opt->topic_prefix = v;
  } else if (strcmp(a, "--keepalive") == 0) {
    opt->keepalive_s = atoi(v);
  } else if (strcmp(a, "--cafile") == 0) {
    opt->cafile = v;
  } else {
    return false;
  }
  ++*i;
  return true;
}

#if !MCPGEN_HOST_MQTT

int run_mqtt_device(const MqttDeviceOptions&, mcpgen::Server&, char*, size_t, char*, size_t, LogFn log, void (*)()) {
  log("mqtt: this simulator was built without MQTT support: install libmosquitto-dev "
      "(apt-get install libmosquitto-dev) and rebuild it");
  return 2;
}

#else  // MCPGEN_HOST_MQTT

namespace {

const int kMinBackoffMs = 200, kMaxBackoffMs = 5000;  // the same as the WebSocket mode
const int kConnectTimeoutMs = 5000;
using mcpgen_mqtt::kMaxCorrelation;
using mcpgen_mqtt::kMaxTopic;

struct Topics {
  char up[kMaxTopic + 1];
  char down[kMaxTopic + 1];
  char state[kMaxTopic + 1];
};

// Everything the libmosquitto callbacks need (passed as their user data).
struct Ctx {
  const MqttDeviceOptions& opt;
  mcpgen::Server& server;
  char* in;
  size_t in_cap;
  char* out;
  size_t out_cap;
  LogFn log;
  void (*after_message)();
  const Topics& topics;
  char host[256];
  char port[8];
  mosquitto* mosq = nullptr;
  int connack = -1;  // -1: no CONNACK yet; else its reason code
  mcpgen::Session* session = nullptr;  // null before the first hello: incoming messages are dropped
  bool hello_seen = false;
  bool goodbye = false;
  bool broken = false;  // a publish failed: the link is unusable
  // Where the reply to the message being handled goes: the request's Response Topic
  // (with its Correlation Data) or, when it had none, the up topic.
  const char* reply_topic = nullptr;
  int reply_qos = 1;
  mosquitto_property* reply_props = nullptr;
};

class MqttLink : public mcpgen::Link {
 public:
  explicit MqttLink(Ctx& c) : c_(c) {}
  bool send(const char* data, size_t len) override {
    const char* topic = c_.reply_topic != nullptr ? c_.reply_topic : c_.topics.up;
    int qos = c_.reply_topic != nullptr ? c_.reply_qos : 1;
    int rc = mosquitto_publish_v5(c_.mosq, nullptr, topic, static_cast<int>(len), data, qos, false,
                                  c_.reply_topic != nullptr ? c_.reply_props : nullptr);
    if (rc != MOSQ_ERR_SUCCESS) {
      c_.log("mqtt: publishing to %s failed: %s", topic, mosquitto_strerror(rc));
      c_.broken = true;
      return false;
    }
    return true;
  }

 private:
  Ctx& c_;
};

// Spec events go to the device's own up topic, never to a request's Response Topic
// (a handler may emit one while a request with a Response Topic is being answered).
class MqttEventLink : public mcpgen::Link {
 public:
  explicit MqttEventLink(Ctx& c) : c_(c) {}
  bool send(const char* data, size_t len) override {
    return mosquitto_publish_v5(c_.mosq, nullptr, c_.topics.up, static_cast<int>(len), data, 1, false, nullptr) ==
           MOSQ_ERR_SUCCESS;
  }

 private:
  Ctx& c_;
};

// Reads the request's Response Topic and Correlation Data into c.reply_*; false when
// it has none (or they are unusable: then the reply goes to the up topic).
bool take_reply_target(Ctx& c, const mosquitto_property* props, char* topic_buf) {
  char* rt = nullptr;
  if (mosquitto_property_read_string(props, MQTT_PROP_RESPONSE_TOPIC, &rt, false) == nullptr || rt == nullptr) {
    return false;
  }
  size_t n = strlen(rt);
  bool ok = mcpgen_mqtt::usable_response_topic(rt, n);
  if (ok) memcpy(topic_buf, rt, n + 1);
  free(rt);
  if (!ok) {
    c.log("mqtt: ignoring an unusable response topic (%zu bytes)", n);
    return false;
  }
  void* corr = nullptr;
  uint16_t corr_len = 0;
  if (mosquitto_property_read_binary(props, MQTT_PROP_CORRELATION_DATA, &corr, &corr_len, false) != nullptr &&
      corr != nullptr) {
    if (corr_len <= kMaxCorrelation) {
      mosquitto_property_add_binary(&c.reply_props, MQTT_PROP_CORRELATION_DATA, corr, corr_len);
    }
    free(corr);
  }
  c.reply_topic = topic_buf;
  return true;
}

void on_connect(mosquitto*, void* user, int rc, int, const mosquitto_property*) {
  static_cast<Ctx*>(user)->connack = rc;
}

void on_message(mosquitto*, void* user, const mosquitto_message* m, const mosquitto_property* props) {
  Ctx& c = *static_cast<Ctx*>(user);
  if (c.session == nullptr || c.broken) return;  // not connected yet, or the link broke: dropped
  if (m->topic == nullptr || strcmp(m->topic, c.topics.down) != 0) return;
  static char reply_topic[kMaxTopic + 1];
  c.reply_topic = nullptr;
  c.reply_qos = m->qos > 1 ? 1 : m->qos;
  take_reply_target(c, props, reply_topic);
  size_t len = m->payloadlen > 0 ? static_cast<size_t>(m->payloadlen) : 0;
  if (len + 1 > c.in_cap) {
    c.log("mqtt: dropped a message longer than %zu bytes", c.in_cap - 1);
    // The part that fits tells the reply's id and session, as on the other ports.
    size_t kept = c.in_cap - 1;
    memcpy(c.in, m->payload, kept);
    c.in[kept] = '\0';
    hostport::SendLock lock;
    c.session->on_oversized(c.in, kept);
  } else {
    memcpy(c.in, m->payload, len);
    c.in[len] = '\0';
    if (c.reply_topic == nullptr && mcpgen_mqtt::is_goodbye(c.in, len, c.server.session_id())) {
      c.log("mqtt: goodbye from the server (session %s)", c.server.session_id());
      c.goodbye = true;
    } else {
      hostport::SendLock lock;
      c.session->on_message(c.in, len);
      if (!c.hello_seen && c.server.peer_hello_received()) {
        c.hello_seen = true;
        c.log("mqtt: server hello, session_id=%s", c.server.session_id());
        ota_mark_valid();  // a pending new image reached the backend (ota.h)
      }
      if (c.after_message != nullptr) c.after_message();
    }
  }
  mosquitto_property_free_all(&c.reply_props);
  c.reply_topic = nullptr;
}

// The core's device hello with transport "mqtt", plus "client_id" and (when given)
// "token" so a backend can authenticate the device beyond the broker's credentials.
size_t build_hello(Ctx& c) {
  size_t n = c.server.hello("mqtt", c.out, c.out_cap);
  return mcpgen_mqtt::extend_hello(c.out, n, c.out_cap, c.opt.client_id, c.opt.token);
}

// Runs the network loop until deadline_ms (or, with deadline_ms < 0, until `done`
// says so). Returns false when the broker link is gone.
bool pump(Ctx& c, int64_t deadline_ms, bool (*done)(const Ctx&)) {
  for (;;) {
    if (done != nullptr && done(c)) return true;
    int wait = 1000;
    if (deadline_ms >= 0) {
      wait = remaining_ms(deadline_ms);
      if (wait <= 0) return true;
      if (wait > 1000) wait = 1000;
    }
    int rc = mosquitto_loop(c.mosq, wait, 1);
    if (rc != MOSQ_ERR_SUCCESS || c.broken) {
      c.log("mqtt: connection lost: %s", c.broken ? "publish failed" : mosquitto_strerror(rc));
      return false;
    }
  }
}

bool session_turned(const Ctx& c) { return c.goodbye || c.hello_seen; }
bool session_ended(const Ctx& c) { return c.goodbye; }
bool connack_seen(const Ctx& c) { return c.connack >= 0; }

// One broker connection: sessions (hello -> server hello -> MCP) until the link drops.
// Returns true when some session got as far as the server hello.
bool run_connection(Ctx& c) {
  c.connack = -1;
  c.broken = false;
  int port = atoi(c.port);
  int rc = mosquitto_connect_bind_v5(c.mosq, c.host, port, c.opt.keepalive_s, nullptr, nullptr);
  if (rc != MOSQ_ERR_SUCCESS) {
    c.log("mqtt: cannot connect to %s:%s: %s", c.host, c.port,
          rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc));
    return false;
  }
  if (!pump(c, now_ms() + kConnectTimeoutMs, connack_seen) || c.connack < 0) {
    if (c.connack < 0) c.log("mqtt: no CONNACK from %s:%s within %d ms", c.host, c.port, kConnectTimeoutMs);
    if (c.connack <= 0) return false;
  }
  if (c.connack != 0) {
    c.log("mqtt: connection refused by the broker: %s", mosquitto_reason_string(c.connack));
    return false;
  }
  rc = mosquitto_subscribe_v5(c.mosq, nullptr, c.topics.down, 1, 0, nullptr);
  if (rc == MOSQ_ERR_SUCCESS) {
    rc = mosquitto_publish_v5(c.mosq, nullptr, c.topics.state, static_cast<int>(strlen(mcpgen_mqtt::kOnline)),
                              mcpgen_mqtt::kOnline, 1, true, nullptr);
  }
  if (rc != MOSQ_ERR_SUCCESS) {
    c.log("mqtt: subscribing to %s / publishing the online state failed: %s", c.topics.down, mosquitto_strerror(rc));
    return false;
  }
  c.log("mqtt: connected to %s:%s as %s (MQTT 5; up %s, down %s)", c.host, c.port, c.opt.client_id, c.topics.up,
        c.topics.down);

  MqttLink link(c);
  MqttEventLink event_link(c);
  hostport::EventLinkScope events(event_link);
  int backoff = kMinBackoffMs;
  bool any_session = false;
  for (;;) {
    {
      hostport::SendLock lock;
      c.server.reset_connection();
    }
    mcpgen::Session session(c.server, link, c.out, c.out_cap);
    c.hello_seen = c.goodbye = false;
    size_t hn = build_hello(c);
    if (hn == 0) {
      c.log("mqtt: the hello does not fit the response buffer");
      return any_session;
    }
    if (!link.send(c.out, hn)) return any_session;
    c.session = &session;
    bool alive = pump(c, now_ms() + c.opt.hello_timeout_ms, session_turned);
    if (alive && !c.goodbye && !c.hello_seen) {
      c.log("mqtt: no server hello within %d ms", c.opt.hello_timeout_ms);
    } else if (alive && c.hello_seen) {
      any_session = true;
      backoff = kMinBackoffMs;
      alive = pump(c, -1, session_ended);
    }
    if (!alive) {
      c.session = nullptr;
      return any_session;
    }
    // Requests keep being answered while waiting to say hello again: fleet workers
    // call the device whether or not some backend took its hello (docs/mqtt.md).
    c.log("mqtt: new hello in %d ms", backoff);
    alive = pump(c, now_ms() + backoff, nullptr);
    c.session = nullptr;
    if (!alive) return any_session;
    backoff = backoff * 2 > kMaxBackoffMs ? kMaxBackoffMs : backoff * 2;
  }
}

// Sets up the libmosquitto client: MQTT 5, TCP_NODELAY (replies are small and
// latency-bound: Nagle would hold each one back for the broker's delayed ACK),
// credentials, TLS and the Last Will.
bool configure(Ctx& c) {
  mosquitto* m = c.mosq;
  int rc = mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
  if (rc == MOSQ_ERR_SUCCESS && c.opt.username != nullptr) {
    rc = mosquitto_username_pw_set(m, c.opt.username, c.opt.password);
  }
  if (rc == MOSQ_ERR_SUCCESS && c.opt.cafile != nullptr) {
    rc = mosquitto_tls_set(m, c.opt.cafile, nullptr, nullptr, nullptr, nullptr);
  }
  if (rc == MOSQ_ERR_SUCCESS) {
    rc = mosquitto_will_set_v5(m, c.topics.state, static_cast<int>(strlen(mcpgen_mqtt::kOffline)),
                               mcpgen_mqtt::kOffline, 1, true, nullptr);
  }
  if (rc != MOSQ_ERR_SUCCESS) {
    c.log("mqtt: setting up the client failed: %s", mosquitto_strerror(rc));
    return false;
  }
  mosquitto_connect_v5_callback_set(m, on_connect);
  mosquitto_message_v5_callback_set(m, on_message);
  return true;
}

}  // namespace

int run_mqtt_device(const MqttDeviceOptions& opt, mcpgen::Server& server, char* in, size_t in_cap, char* out,
                    size_t out_cap, LogFn log, void (*after_message)()) {
  if (!mcpgen_mqtt::valid_topic_level(opt.device_id)) {
    log("mqtt: the device id must be a non-empty MQTT topic level (no '/', '+' or '#'): %s",
        opt.device_id != nullptr ? opt.device_id : "");
    return 2;
  }
  if (!mcpgen_mqtt::valid_prefix(opt.topic_prefix)) {
    log("mqtt: bad --topic-prefix (must be non-empty, without '+' or '#', and not begin or end with '/')");
    return 2;
  }
  if (opt.keepalive_s != 0 && (opt.keepalive_s < 5 || opt.keepalive_s > 65535)) {
    log("mqtt: --keepalive must be 0 (off) or 5..65535 seconds");
    return 2;
  }
  if (opt.password != nullptr && opt.username == nullptr) {
    log("mqtt: --password needs --username");
    return 2;
  }
  Topics topics;
  if (mcpgen_mqtt::build_topic(topics.up, sizeof topics.up, opt.topic_prefix, opt.device_id, mcpgen_mqtt::kUp) == 0 ||
      mcpgen_mqtt::build_topic(topics.down, sizeof topics.down, opt.topic_prefix, opt.device_id, mcpgen_mqtt::kDown) ==
          0 ||
      mcpgen_mqtt::build_topic(topics.state, sizeof topics.state, opt.topic_prefix, opt.device_id,
                               mcpgen_mqtt::kState) == 0) {
    log("mqtt: topic prefix and device id are too long");
    return 2;
  }
  Ctx c{opt, server, in, in_cap, out, out_cap, log, after_message, topics, {}, {}};
  char err[256];
  if (!parse_host_port(opt.broker, c.host, sizeof c.host, c.port, sizeof c.port, err, sizeof err)) {
    log("mqtt: %s", err);
    return 2;
  }
  log("%s %s (spec %s): device %s, client %s, broker %s:%s", server.spec().device_name, server.spec().device_version,
      server.spec().fingerprint, opt.device_id, opt.client_id, c.host, c.port);
  mosquitto_lib_init();
  c.mosq = mosquitto_new(opt.client_id, true, &c);
  if (c.mosq == nullptr || !configure(c)) {
    log("mqtt: cannot create the MQTT client");
    return 1;
  }
  int backoff = kMinBackoffMs;
  long reconnects = 0;
  int code = 0;
  for (;;) {
    bool had_session = run_connection(c);
    if (had_session) backoff = kMinBackoffMs;
    if (opt.max_reconnects >= 0 && reconnects >= opt.max_reconnects) {
      log("mqtt: giving up after %ld reconnects", reconnects);
      code = had_session ? 0 : 1;
      break;
    }
    ++reconnects;
    log("mqtt: reconnecting in %d ms (attempt %ld)", backoff, reconnects);
    sleep_ms(backoff);
    backoff = backoff * 2 > kMaxBackoffMs ? kMaxBackoffMs : backoff * 2;
  }
  mosquitto_destroy(c.mosq);
  mosquitto_lib_cleanup();
  return code;
}

#endif  // MCPGEN_HOST_MQTT

}  // namespace hostport
