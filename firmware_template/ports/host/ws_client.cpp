// The simulator's WebSocket client on libwebsockets (see ws_client.h for what is ours
// and what the library does).
#include "ws_client.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpgen/mcp_core.h"  // MCPGEN_RESPONSE_BUFFER_SIZE: the largest outgoing message

#if MCPGEN_HOST_WS
#include <libwebsockets.h>
#endif

namespace hostport {

bool parse_ws_url(const char* url, WsUrl* out, char* err, size_t err_cap) {
  const char* p = url;
  if (strncmp(p, "ws://", 5) != 0) {
    snprintf(err, err_cap, "unsupported URL %s (only ws:// is supported)", url);
    return false;
  }
  p += 5;
  const char* host_end = p;
  if (*p == '[') {  // [IPv6]
    host_end = strchr(p, ']');
    if (host_end == nullptr) {
      snprintf(err, err_cap, "bad IPv6 host in %s", url);
      return false;
    }
    ++p;
  } else {
    while (*host_end != '\0' && *host_end != ':' && *host_end != '/' && *host_end != '?') ++host_end;
  }
  size_t host_len = static_cast<size_t>(host_end - p);
  if (host_len == 0 || host_len >= sizeof out->host) {
    snprintf(err, err_cap, "bad host in %s", url);
    return false;
  }
  memcpy(out->host, p, host_len);
  out->host[host_len] = '\0';
  p = host_end;
  if (*p == ']') ++p;
  snprintf(out->port, sizeof out->port, "80");
  if (*p == ':') {
    ++p;
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9') ++n;
    if (n == 0 || n >= sizeof out->port) {
      snprintf(err, err_cap, "bad port in %s", url);
      return false;
    }
    memcpy(out->port, p, n);
    out->port[n] = '\0';
    p += n;
  }
  if (*p == '\0') {
    snprintf(out->path, sizeof out->path, "/");
  } else if (*p == '/' || *p == '?') {
    int w = snprintf(out->path, sizeof out->path, "%s%s", *p == '?' ? "/" : "", p);
    if (w < 0 || static_cast<size_t>(w) >= sizeof out->path) {
      snprintf(err, err_cap, "path too long in %s", url);
      return false;
    }
  } else {
    snprintf(err, err_cap, "bad URL %s", url);
    return false;
  }
  return true;
}

#if !MCPGEN_HOST_WS

struct WsClient::Impl {};

WsClient::WsClient() : impl_(nullptr) {}
WsClient::~WsClient() = default;

bool WsClient::init(char* err, size_t err_cap) {
  snprintf(err, err_cap,
           "this simulator was built without WebSocket support: install libwebsockets-dev "
           "(apt-get install libwebsockets-dev) and rebuild it");
  return false;
}

bool WsClient::run(const WsUrl&, const HttpHeader*, size_t, char*, size_t, WsEvents&, char* err, size_t err_cap) {
  return init(err, err_cap);
}

bool WsClient::send_text(const char*, size_t) { return false; }
void WsClient::set_timer(int) {}

#else  // MCPGEN_HOST_WS

namespace {

constexpr size_t kQueueSlots = 8;  // replies plus the notifications one call may raise
constexpr int kConnectTimeoutS = 5;

// Close codes a peer may send (RFC 6455 7.4.1 and the IANA registry); 1005, 1006 and
// 1015 are reserved for reporting and must never appear in a frame.
bool valid_close_code(unsigned code) {
  if (code >= 3000 && code <= 4999) return true;
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
}

struct Outgoing {
  size_t len;
  unsigned char data[LWS_PRE + MCPGEN_RESPONSE_BUFFER_SIZE];
};

}  // namespace

struct WsClient::Impl {
  lws_context* context = nullptr;
  lws* wsi = nullptr;
  // The connection being run.
  const HttpHeader* headers = nullptr;
  size_t header_count = 0;
  char* buf = nullptr;
  size_t cap = 0;
  WsEvents* events = nullptr;
  bool opened = false;
  bool done = false;
  bool timer_armed = false;  // set_timer(ms >= 0) not yet expired or cancelled
  unsigned http_status = 0;
  char error[256] = "";
  // The text message being assembled.
  bool in_text = false;
  bool oversized = false;
  size_t len = 0;
  // Outgoing messages, a ring. Any thread may queue (spec events are sent from the
  // firmware's own threads); libwebsockets itself is driven by the service thread only,
  // so another thread wakes it with lws_cancel_service and the wake-up asks for
  // writability (LWS_CALLBACK_EVENT_WAIT_CANCELLED).
  pthread_mutex_t queue_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;  // lws_write may call back
  pthread_t service_thread{};
  Outgoing queue[kQueueSlots];
  size_t head = 0;
  size_t count = 0;
};

namespace {

// Holds the outgoing queue's mutex for a scope.
class QueueLock {
 public:
  explicit QueueLock(WsClient::Impl& c) : mu_(c.queue_mu) { pthread_mutex_lock(&mu_); }
  ~QueueLock() { pthread_mutex_unlock(&mu_); }
  QueueLock(const QueueLock&) = delete;
  QueueLock& operator=(const QueueLock&) = delete;

 private:
  pthread_mutex_t& mu_;
};

}  // namespace

namespace {

WsClient::Impl g_impl;

void log_lws(int, const char* line) { fprintf(stderr, "[sim] libwebsockets: %s", line); }

// One text (or binary) fragment: appended to the message being assembled; binary
// messages (audio) are not for the MCP core and are skipped.
void on_receive(WsClient::Impl& c, lws* wsi, const char* data, size_t n) {
  if (lws_is_first_fragment(wsi)) {
    c.in_text = !lws_frame_is_binary(wsi);
    c.oversized = false;
    c.len = 0;
  }
  if (!c.in_text) return;
  if (c.oversized || n > c.cap - 1 - c.len) {  // c.len <= cap - 1: no wrap
    c.oversized = true;
  } else {
    memcpy(c.buf + c.len, data, n);
    c.len += n;
  }
  if (!lws_is_final_fragment(wsi)) return;
  c.in_text = false;
  if (c.oversized) {
    c.events->on_oversized();
  } else {
    c.buf[c.len] = '\0';
    c.events->on_text(c.buf, c.len);
  }
}

// The server's close frame: the code to answer with (RFC 6455 5.5.1, 7.4).
unsigned close_answer(const unsigned char* payload, size_t n) {
  if (n == 0) return 1000;  // no code given
  if (n == 1) return 1002;  // cannot hold a code
  unsigned code = (static_cast<unsigned>(payload[0]) << 8) | payload[1];
  return valid_close_code(code) ? code : 1002;
}

int callback(lws* wsi, lws_callback_reasons reason, void*, void* in, size_t len) {
  WsClient::Impl& c = g_impl;
  switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
      unsigned char** p = static_cast<unsigned char**>(in);
      unsigned char* end = *p + len;
      for (size_t i = 0; i < c.header_count; ++i) {
        char name[64];
        snprintf(name, sizeof name, "%s:", c.headers[i].name);
        const char* v = c.headers[i].value;
        if (lws_add_http_header_by_name(wsi, reinterpret_cast<const unsigned char*>(name),
                                        reinterpret_cast<const unsigned char*>(v), static_cast<int>(strlen(v)), p,
                                        end) != 0) {
          snprintf(c.error, sizeof c.error, "handshake request too long");
          return -1;
        }
      }
      return 0;
    }
    case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP: c.http_status = lws_http_client_http_response(wsi); return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: {
      if (c.http_status == 0) c.http_status = lws_http_client_http_response(wsi);
      const char* why = in != nullptr ? static_cast<const char*>(in) : "connection failed";
      if (c.http_status != 0 && c.http_status != 101) {
        snprintf(c.error, sizeof c.error, "handshake rejected: HTTP/1.1 %u", c.http_status);
      } else if (c.error[0] == '\0') {
        snprintf(c.error, sizeof c.error, "%s", why);
      }
      {
        QueueLock lock(c);
        c.wsi = nullptr;
      }
      c.done = true;
      return 0;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
      c.opened = true;
      c.events->on_open();
      return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE: on_receive(c, wsi, static_cast<const char*>(in), len); return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {  // another thread queued a message
      QueueLock lock(c);
      if (c.wsi != nullptr && c.count > 0) lws_callback_on_writable(c.wsi);
      return 0;
    }
    case LWS_CALLBACK_CLIENT_WRITEABLE: {
      QueueLock lock(c);
      if (c.count == 0) return 0;
      Outgoing& m = c.queue[c.head];
      int w = lws_write(wsi, m.data + LWS_PRE, m.len, LWS_WRITE_TEXT);
      if (w < static_cast<int>(m.len)) {
        snprintf(c.error, sizeof c.error, "send failed");
        return -1;
      }
      c.head = (c.head + 1) % kQueueSlots;
      --c.count;
      if (c.count > 0) lws_callback_on_writable(wsi);
      return 0;
    }
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: {
      const unsigned code = close_answer(static_cast<const unsigned char*>(in), len);
      if (code == 1002) {
        snprintf(c.error, sizeof c.error, "protocol error from server: %s",
                 len == 1 ? "1-byte close payload" : "invalid close code");
      } else {
        snprintf(c.error, sizeof c.error, "closed by server (code %u)", code);
      }
      lws_close_reason(wsi, static_cast<lws_close_status>(code), nullptr, 0);
      return -1;  // closes now, sending our close frame
    }
    case LWS_CALLBACK_TIMER:
      if (!c.timer_armed) return 0;  // cancelled (see set_timer)
      c.timer_armed = false;
      if (!c.events->on_timer()) {
        lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, nullptr, 0);
        snprintf(c.error, sizeof c.error, "closed by the device");
        return -1;
      }
      return 0;
    case LWS_CALLBACK_CLIENT_CLOSED: {
      if (c.error[0] == '\0') snprintf(c.error, sizeof c.error, "connection closed");
      QueueLock lock(c);
      c.wsi = nullptr;
      c.done = true;
      return 0;
    }
    default: return 0;
  }
}

const lws_protocols kProtocols[] = {
    {"mcpgen-sim", callback, 0, MCPGEN_REQUEST_BUFFER_SIZE, 0, nullptr, 0},
    {nullptr, nullptr, 0, 0, 0, nullptr, 0},
};

}  // namespace

WsClient::WsClient() : impl_(&g_impl) {}

WsClient::~WsClient() {
  if (impl_->context != nullptr) lws_context_destroy(impl_->context);
  impl_->context = nullptr;
}

bool WsClient::init(char* err, size_t err_cap) {
  if (impl_->context != nullptr) return true;
  // MCPGEN_SIM_LWS_LOG=<bits> turns on more of libwebsockets' log (lws-logs.h: LLL_*).
  const char* bits = getenv("MCPGEN_SIM_LWS_LOG");
  lws_set_log_level(bits != nullptr ? atoi(bits) : LLL_ERR, log_lws);
  lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = CONTEXT_PORT_NO_LISTEN;
  info.protocols = kProtocols;
  info.gid = -1;
  info.uid = -1;
  info.timeout_secs = kConnectTimeoutS;
  info.connect_timeout_secs = kConnectTimeoutS;
  impl_->context = lws_create_context(&info);
  if (impl_->context == nullptr) {
    snprintf(err, err_cap, "libwebsockets: cannot create a context");
    return false;
  }
  return true;
}

bool WsClient::run(const WsUrl& url, const HttpHeader* headers, size_t header_count, char* buf, size_t cap,
                   WsEvents& events, char* err, size_t err_cap) {
  if (!init(err, err_cap)) return false;
  Impl& c = *impl_;
  c.headers = headers;
  c.header_count = header_count;
  c.buf = buf;
  c.cap = cap;
  c.events = &events;
  c.opened = c.done = c.in_text = c.timer_armed = false;
  c.http_status = 0;
  c.error[0] = '\0';
  {
    QueueLock lock(c);
    c.head = c.count = 0;
  }
  c.service_thread = pthread_self();
  char host_header[300];
  snprintf(host_header, sizeof host_header, "%s:%s", url.host, url.port);
  lws_client_connect_info ci;
  memset(&ci, 0, sizeof ci);
  ci.context = c.context;
  ci.address = url.host;
  ci.port = atoi(url.port);
  ci.path = url.path;
  ci.host = host_header;
  ci.protocol = nullptr;  // no Sec-WebSocket-Protocol: the xiaozhi handshake has none
  ci.local_protocol_name = kProtocols[0].name;
  ci.pwsi = &c.wsi;
  if (lws_client_connect_via_info(&ci) == nullptr && !c.done) {
    snprintf(err, err_cap, "cannot connect to %s:%s", url.host, url.port);
    return false;
  }
  while (!c.done) {
    if (lws_service(c.context, 0) < 0) break;
  }
  if (!c.opened) {
    if (strncmp(c.error, "handshake rejected", 18) == 0) {
      snprintf(err, err_cap, "%s", c.error);
    } else {
      snprintf(err, err_cap, "cannot connect to %s:%s: %s", url.host, url.port, c.error);
    }
    return false;
  }
  snprintf(err, err_cap, "%s", c.error);
  return true;
}

bool WsClient::send_text(const char* data, size_t len) {
  Impl& c = *impl_;
  QueueLock lock(c);
  if (c.wsi == nullptr || c.count == kQueueSlots || len > MCPGEN_RESPONSE_BUFFER_SIZE) return false;
  Outgoing& m = c.queue[(c.head + c.count) % kQueueSlots];
  memcpy(m.data + LWS_PRE, data, len);
  m.len = len;
  bool service = pthread_equal(pthread_self(), c.service_thread);
  if (service && c.count == 0 && !lws_send_pipe_choked(c.wsi)) {
    // On the service thread with nothing queued (a reply, or a handler's progress while
    // it runs): written now, so a long handler's progress leaves as it happens instead
    // of filling the queue until the handler returns. What the socket does not take at
    // once libwebsockets keeps, and reports the pipe choked until it is sent.
    return lws_write(c.wsi, m.data + LWS_PRE, len, LWS_WRITE_TEXT) >= static_cast<int>(len);
  }
  ++c.count;
  if (service) {
    lws_callback_on_writable(c.wsi);
  } else {
    lws_cancel_service(c.context);  // the one libwebsockets call safe from another thread
  }
  return true;
}

void WsClient::set_timer(int ms) {
  // Cancelling only disarms: libwebsockets 4.1 takes LWS_SET_TIMER_USEC_CANCEL as a
  // deadline in the past and fires at once; the late callback is then ignored.
  impl_->timer_armed = ms >= 0;
  if (impl_->wsi != nullptr && ms >= 0) lws_set_timer_usecs(impl_->wsi, static_cast<lws_usec_t>(ms) * 1000);
}

#endif  // MCPGEN_HOST_WS

}  // namespace hostport
