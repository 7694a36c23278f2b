#include "mqtt_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/session.h"

namespace hostport {
namespace {

// MQTT 3.1.1 control packet types (high nibble of the first byte).
enum : uint8_t {
  kConnect = 1,
  kConnack = 2,
  kPublish = 3,
  kPuback = 4,
  kPubrec = 5,
  kPubrel = 6,
  kPubcomp = 7,
  kSubscribe = 8,
  kSuback = 9,
  kPingreq = 12,
  kPingresp = 13,
  kDisconnect = 14,
};

const size_t kMaxTopic = 512;
const int kPacketTimeoutMs = 10000;  // the rest of a packet once its first byte arrived

// Encodes an MQTT "remaining length" (1-4 bytes); returns the byte count.
size_t put_varint(uint8_t* p, uint32_t v) {
  size_t n = 0;
  do {
    uint8_t b = static_cast<uint8_t>(v % 128);
    v /= 128;
    if (v > 0) b |= 0x80;
    p[n++] = b;
  } while (v > 0);
  return n;
}

// Appends a length-prefixed UTF-8 string; false when it does not fit.
bool put_str(uint8_t* buf, size_t cap, size_t* pos, const char* s, size_t n) {
  // Written as a subtraction of known-good values so no sum can wrap (issue 18).
  if (n > 0xFFFF || *pos > cap || cap - *pos < 2 + n) return false;
  buf[(*pos)++] = static_cast<uint8_t>(n >> 8);
  buf[(*pos)++] = static_cast<uint8_t>(n);
  memcpy(buf + *pos, s, n);
  *pos += n;
  return true;
}

const char* connack_reason(uint8_t rc) {
  switch (rc) {
    case 1:
      return "unacceptable protocol version";
    case 2:
      return "client identifier rejected";
    case 3:
      return "server unavailable";
    case 4:
      return "bad user name or password";
    case 5:
      return "not authorized";
    default:
      return "unknown reason";
  }
}

}  // namespace

MqttClient::MqttClient()
    : TcpStream("connection closed by the broker"),
      packet_id_(0),
      keepalive_s_(0),
      last_send_ms_(0),
      ping_sent_ms_(-1),
      unacked_(0),
      sub_id_(0),
      sub_done_(false),
      sub_rc_(0x80) {}

uint16_t MqttClient::next_packet_id() {
  if (++packet_id_ == 0) packet_id_ = 1;
  return packet_id_;
}

bool MqttClient::send(const void* data, size_t len, bool more) {
  if (!send_all(data, len, more)) return false;
  last_send_ms_ = now_ms();
  return true;
}

bool MqttClient::send_control(uint8_t type_flags, const uint8_t* body, size_t body_len) {
  uint8_t head[5];
  head[0] = type_flags;
  size_t hn = 1 + put_varint(head + 1, static_cast<uint32_t>(body_len));
  if (body_len == 0) return send(head, hn, false);
  return send(head, hn, true) && send(body, body_len, false);
}

// Reads a packet's fixed header (the caller saw data waiting).
bool MqttClient::read_packet_head(uint8_t* type, uint32_t* remaining_len) {
  int64_t deadline = now_ms() + kPacketTimeoutMs;
  if (read_exact(type, 1, deadline) != 1) {
    if (fd_ >= 0) fail("timed out inside a packet");
    return false;
  }
  uint32_t value = 0, mult = 1;
  for (int i = 0; i < 4; ++i) {
    uint8_t b;
    if (read_exact(&b, 1, deadline) != 1) {
      if (fd_ >= 0) fail("timed out inside a packet");
      return false;
    }
    value += (b & 0x7Fu) * mult;
    if ((b & 0x80) == 0) {
      *remaining_len = value;
      return true;
    }
    mult *= 128;
  }
  fail("malformed remaining length");
  return false;
}

bool MqttClient::connect(const MqttConnectOptions& opt, int timeout_ms, char* err, size_t err_cap) {
  close_socket();
  unacked_ = 0;
  ping_sent_ms_ = -1;
  error_[0] = '\0';
  int64_t deadline = now_ms() + timeout_ms;

  // The CONNECT packet body first: nothing is sent when it does not fit.
  uint8_t body[2048];
  size_t n = 0;
  const bool will = opt.will_topic != nullptr;
  const bool user = opt.username != nullptr;
  const bool pass = user && opt.password != nullptr;
  bool ok = put_str(body, sizeof body, &n, "MQTT", 4) && n + 4 <= sizeof body;
  if (ok) {
    body[n++] = 4;  // protocol level 3.1.1
    uint8_t flags = 0x02;  // clean session
    if (will) flags |= static_cast<uint8_t>(0x04 | ((opt.will_qos & 3) << 3) | (opt.will_retain ? 0x20 : 0));
    if (user) flags |= 0x80;
    if (pass) flags |= 0x40;
    body[n++] = flags;
    body[n++] = static_cast<uint8_t>(opt.keepalive_s >> 8);
    body[n++] = static_cast<uint8_t>(opt.keepalive_s);
    ok = put_str(body, sizeof body, &n, opt.client_id, strlen(opt.client_id));
  }
  if (ok && will) {
    ok = put_str(body, sizeof body, &n, opt.will_topic, strlen(opt.will_topic)) &&
         put_str(body, sizeof body, &n, opt.will_payload, strlen(opt.will_payload));
  }
  if (ok && user) ok = put_str(body, sizeof body, &n, opt.username, strlen(opt.username));
  if (ok && pass) ok = put_str(body, sizeof body, &n, opt.password, strlen(opt.password));
  if (!ok) {
    snprintf(err, err_cap, "CONNECT packet too large");
    return false;
  }

  if (!open(opt.host, opt.port, err, err_cap)) return false;
  keepalive_s_ = opt.keepalive_s;

  if (!send_control(kConnect << 4, body, n)) {
    snprintf(err, err_cap, "sending CONNECT failed: %s", error_);
    return false;
  }
  int w = wait_readable(deadline);
  uint8_t type = 0;
  uint32_t rl = 0;
  uint8_t ack[2];
  if (w <= 0 || !read_packet_head(&type, &rl)) {
    snprintf(err, err_cap, "no CONNACK: %s", w == 0 ? "timed out" : error_);
    if (fd_ >= 0) fail("no CONNACK");
    return false;
  }
  if ((type >> 4) != kConnack || rl != 2 || read_exact(ack, 2, deadline) != 1) {
    snprintf(err, err_cap, "bad CONNACK from the broker");
    if (fd_ >= 0) fail("bad CONNACK");
    return false;
  }
  if (ack[1] != 0) {
    snprintf(err, err_cap, "connection refused by the broker: %s (code %u)", connack_reason(ack[1]), ack[1]);
    fail("connection refused");
    return false;
  }
  return true;
}

bool MqttClient::subscribe(const char* topic_filter, uint8_t qos, int timeout_ms) {
  if (fd_ < 0) return false;
  uint8_t body[2 + 2 + kMaxTopic + 1];
  size_t n = 0;
  uint16_t id = next_packet_id();
  body[n++] = static_cast<uint8_t>(id >> 8);
  body[n++] = static_cast<uint8_t>(id);
  if (!put_str(body, sizeof body - 1, &n, topic_filter, strlen(topic_filter))) {
    snprintf(error_, sizeof error_, "topic filter too long");
    return false;
  }
  body[n++] = qos > 1 ? 1 : qos;
  sub_id_ = id;
  sub_done_ = false;
  sub_rc_ = 0x80;
  if (!send_control(static_cast<uint8_t>(kSubscribe << 4 | 0x02), body, n)) return false;
  int64_t deadline = now_ms() + timeout_ms;
  char topic[8];
  char payload[8];
  while (!sub_done_) {
    size_t len = 0;
    Step s = step(topic, sizeof topic, payload, sizeof payload, &len, deadline);
    if (s == Step::kError) return false;
    if (s == Step::kTimeout) {
      snprintf(error_, sizeof error_, "no SUBACK");
      return false;
    }
    // a PUBLISH before our SUBACK cannot be for this subscription: dropped
  }
  if (sub_rc_ == 0x80) {
    snprintf(error_, sizeof error_, "subscription to %s refused by the broker", topic_filter);
    return false;
  }
  return true;
}

bool MqttClient::publish(const char* topic, const char* data, size_t len, uint8_t qos, bool retain) {
  if (fd_ < 0) return false;
  size_t tl = strlen(topic);
  if (tl > kMaxTopic) {
    snprintf(error_, sizeof error_, "topic too long");
    return false;
  }
  qos = qos > 1 ? 1 : qos;
  uint64_t rl = 2 + tl + (qos > 0 ? 2 : 0) + static_cast<uint64_t>(len);
  if (rl > 268435455u) {
    snprintf(error_, sizeof error_, "message too large for MQTT");
    return false;
  }
  uint8_t head[5 + 2 + kMaxTopic + 2];
  size_t hn = 0;
  head[hn++] = static_cast<uint8_t>(kPublish << 4 | qos << 1 | (retain ? 1 : 0));
  hn += put_varint(head + hn, static_cast<uint32_t>(rl));
  put_str(head, sizeof head, &hn, topic, tl);
  if (qos > 0) {
    uint16_t id = next_packet_id();
    head[hn++] = static_cast<uint8_t>(id >> 8);
    head[hn++] = static_cast<uint8_t>(id);
  }
  if (!send(head, hn, len > 0) || (len > 0 && !send(data, len, false))) return false;
  if (qos > 0) ++unacked_;
  return true;
}

MqttClient::Step MqttClient::step(char* topic, size_t topic_cap, char* buf, size_t cap, size_t* len,
                                  int64_t deadline_ms) {
  if (fd_ < 0) return Step::kError;
  // Keepalive: a PINGREQ after 3/4 of the interval without sending anything; the link
  // is dead when its PINGRESP has not come within a whole interval.
  int64_t wake = deadline_ms;
  if (keepalive_s_ > 0) {
    const int64_t interval = static_cast<int64_t>(keepalive_s_) * 1000;
    int64_t now = now_ms();
    if (ping_sent_ms_ >= 0 && now - ping_sent_ms_ >= interval) {
      fail("no PINGRESP from the broker within the keepalive interval");
      return Step::kError;
    }
    if (ping_sent_ms_ < 0 && now - last_send_ms_ >= interval * 3 / 4) {
      if (!send_control(kPingreq << 4, nullptr, 0)) return Step::kError;
      ping_sent_ms_ = now_ms();
    }
    int64_t event = ping_sent_ms_ >= 0 ? ping_sent_ms_ + interval : last_send_ms_ + interval * 3 / 4;
    if (wake < 0 || event < wake) wake = event;
  }
  int w = wait_readable(wake);
  if (w < 0) return Step::kError;
  if (w == 0) {
    return deadline_ms >= 0 && now_ms() >= deadline_ms ? Step::kTimeout : Step::kControl;
  }
  uint8_t type = 0;
  uint32_t rl = 0;
  if (!read_packet_head(&type, &rl)) return Step::kError;
  const int64_t deadline = now_ms() + kPacketTimeoutMs;
  auto read = [&](void* dst, size_t n) -> bool {
    if (read_exact(dst, n, deadline) == 1) return true;
    if (fd_ >= 0) fail("timed out inside a packet");
    return false;
  };
  switch (type >> 4) {
    case kPublish: {
      uint8_t qos = (type >> 1) & 3;
      if (qos > 1) {  // we never subscribe with QoS 2
        fail("unexpected QoS 2 message");
        return Step::kError;
      }
      uint8_t tlen[2];
      if (rl < 2) {
        fail("malformed PUBLISH");
        return Step::kError;
      }
      if (!read(tlen, 2)) return Step::kError;
      size_t tl = static_cast<size_t>(tlen[0]) << 8 | tlen[1];
      size_t header = 2 + tl + (qos > 0 ? 2 : 0);
      if (header > rl) {
        fail("malformed PUBLISH");
        return Step::kError;
      }
      bool topic_fits = tl < topic_cap;  // room for the NUL; no tl + 1 that could wrap
      if (!read(topic_fits ? topic : nullptr, tl)) return Step::kError;
      if (topic_fits) topic[tl] = '\0';
      uint16_t id = 0;
      if (qos > 0) {
        uint8_t idb[2];
        if (!read(idb, 2)) return Step::kError;
        id = static_cast<uint16_t>(idb[0] << 8 | idb[1]);
      }
      size_t plen = rl - header;
      bool fits = plen < cap;
      if (!read(fits ? buf : nullptr, plen)) return Step::kError;
      if (fits) buf[plen] = '\0';
      *len = plen;
      if (qos > 0) {
        uint8_t ack[2] = {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)};
        if (!send_control(kPuback << 4, ack, 2)) return Step::kError;
      }
      if (!topic_fits) return Step::kControl;  // not a topic we subscribed to
      return fits ? Step::kPublish : Step::kOversized;
    }
    case kPuback: {
      uint8_t idb[2];
      if (rl != 2) {
        fail("malformed PUBACK");
        return Step::kError;
      }
      if (!read(idb, 2)) return Step::kError;
      if (unacked_ > 0) --unacked_;
      return Step::kControl;
    }
    case kSuback: {
      uint8_t idb[2];
      if (rl < 3) {
        fail("malformed SUBACK");
        return Step::kError;
      }
      if (!read(idb, 2)) return Step::kError;
      uint8_t rc = 0x80;
      if (!read(&rc, 1) || (rl > 3 && !read(nullptr, rl - 3))) return Step::kError;
      if (static_cast<uint16_t>(idb[0] << 8 | idb[1]) == sub_id_) {
        sub_done_ = true;
        sub_rc_ = rc;
      }
      return Step::kControl;
    }
    case kPingresp:
      if (rl != 0 && !read(nullptr, rl)) return Step::kError;
      ping_sent_ms_ = -1;
      return Step::kControl;
    case kPubrec:
    case kPubrel:
    case kPubcomp:
    case kConnack:
    default:
      // Nothing we asked for (QoS 2 flows, a second CONNACK, ...): skip it.
      if (rl > 0 && !read(nullptr, rl)) return Step::kError;
      return Step::kControl;
  }
}

MqttClient::Recv MqttClient::receive(char* topic, size_t topic_cap, char* buf, size_t cap, size_t* len,
                                     int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    if (fd_ < 0) return Recv::kClosed;
    Step s = step(topic, topic_cap, buf, cap, len, deadline);
    switch (s) {
      case Step::kPublish:
        return Recv::kMessage;
      case Step::kOversized:
        return Recv::kOversized;
      case Step::kTimeout:
        return Recv::kTimeout;
      case Step::kError:
        return Recv::kError;
      case Step::kControl:
        break;
    }
  }
}

void MqttClient::disconnect() {
  if (fd_ < 0) return;
  send_control(kDisconnect << 4, nullptr, 0);
  close_socket();
}

void MqttClient::abort() { close_socket(); }

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

// ------------------------------------------------------------------ device mode

namespace {

const int kMinBackoffMs = 200, kMaxBackoffMs = 5000;  // the same as the WebSocket mode
const int kConnectTimeoutMs = 5000;

struct Topics {
  char up[kMaxTopic + 1];
  char down[kMaxTopic + 1];
  char state[kMaxTopic + 1];
};

class MqttLink : public mcpgen::Link {
 public:
  MqttLink(MqttClient& client, const char* topic) : client_(client), topic_(topic) {}
  bool send(const char* data, size_t len) override { return client_.publish(topic_, data, len, 1, false); }

 private:
  MqttClient& client_;
  const char* topic_;
};

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
};

// A {"type":"goodbye"} from the backend ends the session (xiaozhi semantics): one for
// another session id is stale and ignored. Read-only: the message is left intact.
bool is_goodbye(char* msg, size_t len, const char* our_session) {
  if (memmem(msg, len, "goodbye", 7) == nullptr) return false;
  mcpgen::json::Value root;
  const char* perr = nullptr;
  if (!mcpgen::json::validate(msg, len, &root, &perr) || !root.is(mcpgen::json::Type::kObject)) return false;
  if (!mcpgen::json::string_equals(mcpgen::json::find(root, "type"), "goodbye")) return false;
  mcpgen::json::Value sid = mcpgen::json::find(root, "session_id");
  return !(sid.is(mcpgen::json::Type::kString) && our_session[0] != '\0' &&
           !mcpgen::json::string_equals(sid, our_session));
}

// The core's device hello with transport "mqtt", plus "client_id" and (when given)
// "token" so a backend can authenticate the device beyond the broker's credentials.
size_t build_hello(Ctx& c) {
  size_t n = c.server.hello("mqtt", c.out, c.out_cap);
  if (n == 0 || c.out[n - 1] != '}') return 0;
  mcpgen::JsonWriter w(c.out + n - 1, c.out_cap - (n - 1));
  w.raw_fragment(",", 1);
  w.key("client_id");
  w.string(c.opt.client_id);
  if (c.opt.token != nullptr) {
    w.key("token");
    w.string(c.opt.token);
  }
  w.raw_fragment("}", 1);
  return w.overflowed() ? 0 : n - 1 + w.size();
}

// Waits ms while keeping the link alive (pings); incoming messages are dropped.
bool idle(Ctx& c, MqttClient& mq, int ms) {
  const int64_t until = now_ms() + ms;
  char topic[kMaxTopic + 1];
  for (;;) {
    size_t len = 0;
    int left = remaining_ms(until);
    MqttClient::Recv r = mq.receive(topic, sizeof topic, c.in, c.in_cap, &len, left);
    if (r == MqttClient::Recv::kTimeout) return true;
    if (r == MqttClient::Recv::kClosed || r == MqttClient::Recv::kError) {
      c.log("mqtt: connection lost: %s", mq.last_error());
      return false;
    }
  }
}

// One broker connection: sessions (hello -> server hello -> MCP) until the link drops.
// Returns true when some session got as far as the server hello.
bool run_connection(Ctx& c, MqttClient& mq) {
  MqttConnectOptions co;
  co.host = c.host;
  co.port = c.port;
  co.client_id = c.opt.client_id;
  co.username = c.opt.username;
  co.password = c.opt.password;
  co.keepalive_s = static_cast<uint16_t>(c.opt.keepalive_s);
  co.will_topic = c.topics.state;
  co.will_payload = "offline";
  co.will_qos = 1;
  co.will_retain = true;
  char err[256];
  if (!mq.connect(co, kConnectTimeoutMs, err, sizeof err)) {
    c.log("mqtt: %s", err);
    return false;
  }
  if (!mq.subscribe(c.topics.down, 1, kConnectTimeoutMs)) {
    c.log("mqtt: subscribing to %s failed: %s", c.topics.down, mq.last_error());
    mq.abort();
    return false;
  }
  if (!mq.publish(c.topics.state, "online", 6, 1, true)) {
    c.log("mqtt: publishing the online state failed: %s", mq.last_error());
    return false;
  }
  c.log("mqtt: connected to %s:%s as %s (up %s, down %s)", c.host, c.port, c.opt.client_id, c.topics.up,
        c.topics.down);

  MqttLink link(mq, c.topics.up);
  int backoff = kMinBackoffMs;
  bool any_session = false;
  char topic[kMaxTopic + 1];
  for (;;) {
    c.server.reset_connection();
    mcpgen::Session session(c.server, link, c.out, c.out_cap);
    size_t hn = build_hello(c);
    if (hn == 0) {
      c.log("mqtt: the hello does not fit the response buffer");
      return any_session;
    }
    if (!link.send(c.out, hn)) {
      c.log("mqtt: sending hello failed: %s", mq.last_error());
      return any_session;
    }
    bool hello_seen = false;
    int hello_timeout = c.opt.hello_timeout_ms;
    for (;;) {
      size_t len = 0;
      MqttClient::Recv r = mq.receive(topic, sizeof topic, c.in, c.in_cap, &len, hello_seen ? -1 : hello_timeout);
      if (r == MqttClient::Recv::kTimeout) {
        c.log("mqtt: no server hello within %d ms", c.opt.hello_timeout_ms);
        break;
      }
      if (r == MqttClient::Recv::kClosed || r == MqttClient::Recv::kError) {
        c.log("mqtt: connection lost: %s", mq.last_error());
        return any_session;
      }
      if (strcmp(topic, c.topics.down) != 0) continue;
      if (r == MqttClient::Recv::kOversized) {
        c.log("mqtt: dropped a message longer than %zu bytes", c.in_cap - 1);
        if (!session.on_oversized()) return any_session;
        continue;
      }
      if (is_goodbye(c.in, len, c.server.session_id())) {
        c.log("mqtt: goodbye from the server (session %s)", c.server.session_id());
        break;
      }
      if (!session.on_message(c.in, len)) {
        c.log("mqtt: publish failed: %s", mq.last_error());
        return any_session;
      }
      if (!hello_seen && c.server.peer_hello_received()) {
        hello_seen = any_session = true;
        backoff = kMinBackoffMs;
        c.log("mqtt: server hello, session_id=%s", c.server.session_id());
      }
      if (c.after_message != nullptr) c.after_message();
    }
    c.log("mqtt: new hello in %d ms", backoff);
    if (!idle(c, mq, backoff)) return any_session;
    backoff = backoff * 2 > kMaxBackoffMs ? kMaxBackoffMs : backoff * 2;
  }
}

bool valid_topic_level(const char* s) {
  if (s == nullptr || *s == '\0') return false;
  for (; *s != '\0'; ++s) {
    if (*s == '/' || *s == '+' || *s == '#') return false;
  }
  return true;
}

}  // namespace

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
  } else {
    return false;
  }
  ++*i;
  return true;
}

int run_mqtt_device(const MqttDeviceOptions& opt, mcpgen::Server& server, char* in, size_t in_cap, char* out,
                    size_t out_cap, LogFn log, void (*after_message)()) {
  if (!valid_topic_level(opt.device_id)) {
    log("mqtt: the device id must be a non-empty MQTT topic level (no '/', '+' or '#'): %s",
        opt.device_id != nullptr ? opt.device_id : "");
    return 2;
  }
  if (opt.topic_prefix == nullptr || *opt.topic_prefix == '\0' || strpbrk(opt.topic_prefix, "+#") != nullptr) {
    log("mqtt: bad --topic-prefix (must be non-empty, without '+' or '#')");
    return 2;
  }
  if (opt.keepalive_s < 0 || opt.keepalive_s > 65535) {
    log("mqtt: --keepalive must be 0..65535 seconds");
    return 2;
  }
  if (opt.password != nullptr && opt.username == nullptr) {
    log("mqtt: --password needs --username (MQTT 3.1.1)");
    return 2;
  }
  Topics topics;
  int a = snprintf(topics.up, sizeof topics.up, "%s/%s/up", opt.topic_prefix, opt.device_id);
  int b = snprintf(topics.down, sizeof topics.down, "%s/%s/down", opt.topic_prefix, opt.device_id);
  int s = snprintf(topics.state, sizeof topics.state, "%s/%s/state", opt.topic_prefix, opt.device_id);
  if (a < 0 || b < 0 || s < 0 || static_cast<size_t>(s) >= sizeof topics.state ||
      static_cast<size_t>(b) >= sizeof topics.down) {
    log("mqtt: topic prefix and device id are too long");
    return 2;
  }
  Ctx c{opt, server, in, in_cap, out, out_cap, log, after_message, topics, {}, {}};
  char err[256];
  if (!parse_host_port(opt.broker, c.host, sizeof c.host, c.port, sizeof c.port, err, sizeof err)) {
    log("mqtt: %s", err);
    return 2;
  }
  log("%s %s (spec %s): device %s, client %s, broker %s:%s", server.spec().device_name,
      server.spec().device_version, server.spec().fingerprint, opt.device_id, opt.client_id, c.host, c.port);
  MqttClient mq;
  int backoff = kMinBackoffMs;
  long reconnects = 0;
  for (;;) {
    bool had_session = run_connection(c, mq);
    mq.abort();
    if (had_session) backoff = kMinBackoffMs;
    if (opt.max_reconnects >= 0 && reconnects >= opt.max_reconnects) {
      log("mqtt: giving up after %ld reconnects", reconnects);
      return had_session ? 0 : 1;
    }
    ++reconnects;
    log("mqtt: reconnecting in %d ms (attempt %ld)", backoff, reconnects);
    sleep_ms(backoff);
    backoff = backoff * 2 > kMaxBackoffMs ? kMaxBackoffMs : backoff * 2;
  }
}

}  // namespace hostport
