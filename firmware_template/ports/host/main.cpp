// The host port: the generated tools + the portable core as a device simulator process.
//
//   sim --stdio                       newline-delimited MCP on stdin/stdout (logs: stderr)
//   sim --ws ws://host:port/path      connect like a xiaozhi device over WebSocket
//       [--token-file FILE] [--device-id ID] [--client-id UUID] [--max-reconnects N]
//       [--hello-timeout-ms MS]
// The WebSocket mode reconnects with exponential backoff (0.2 s doubling to 5 s, reset
// after a session that got the server hello); --max-reconnects N gives up after N.
//   sim --mqtt HOST:PORT              the same over MQTT 5 on libmosquitto (mqtt_device.h,
//       [--device-id ID] [--client-id ID] [--username U] [--password-file F] [--token-file F]   docs/mqtt.md)
//       [--topic-prefix P] [--keepalive S] [--cafile CA.pem] [--max-reconnects N]
//       [--hello-timeout-ms MS]
//   ... --ota-dir DIR [--ota-deadline-ms MS] [--ota-ca CA.pem]   with --ws or --mqtt: over-the-air updates into two
//       slots under DIR, supervised and rolled back (ota.h, docs/ota.md)
//
// Secrets: --token-file FILE or MCPGEN_BACKEND_TOKEN, --password-file FILE or MCPGEN_MQTT_PASSWORD
// (--token T and --password P still work, with a warning: other local users can read argv).
//
// All buffers are static (MCPGEN_REQUEST_BUFFER_SIZE / MCPGEN_RESPONSE_BUFFER_SIZE).
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_tools.h"
#include "mcpgen/line_reader.h"
#include "mcpgen/mcp_core.h"
#include "mcpgen/session.h"
#include "event_outlet.h"  // spec events from any thread
#include "mqtt_device.h"  // --mqtt mode
#include "ota.h"  // --ota-dir: over-the-air updates (docs/ota.md)
#include "tcp.h"
#include "ws_client.h"

namespace {

char g_request[MCPGEN_REQUEST_BUFFER_SIZE];
char g_response[MCPGEN_RESPONSE_BUFFER_SIZE];
mcpgen::Server g_server(kMcpSpec);

void log_line(const char* fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = static_cast<size_t>(n) < sizeof line - 1 ? static_cast<size_t>(n) : sizeof line - 2;
  line[len++] = '\n';
  fputs("[sim] ", stderr);
  fwrite(line, 1, len, stderr);
  fflush(stderr);
}

// Logs the vision endpoint the client announced in initialize, once per change.
void log_vision_change() {
  static char last[MCPGEN_VISION_URL_SIZE] = "";
  const mcpgen::VisionConfig& v = g_server.vision();
  if (v.present && strcmp(last, v.url) != 0) {
    snprintf(last, sizeof last, "%s", v.url);
    log_line("vision configured: url=%s token=%zu chars", v.url, strlen(v.token));
  }
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// ------------------------------------------------------------------ stdio

class StdoutLink : public mcpgen::Link {
 public:
  bool send(const char* data, size_t len) override {
    // The reply buffer is ours between calls: append the newline in place when it fits.
    if (data == g_response && len < sizeof g_response) {
      g_response[len] = '\n';
      return write_all(1, data, len + 1);
    }
    return write_all(1, data, len) && write_all(1, "\n", 1);
  }
};

int run_stdio() {
  StdoutLink link;
  mcpgen::Session session(g_server, link, g_response, sizeof g_response);
  hostport::EventLinkScope events(link);
  log_line("%s %s (spec %s): serving MCP on stdio", kMcpSpec.device_name, kMcpSpec.device_version,
           kMcpSpec.fingerprint);
  mcpgen::LineReader lines(g_request, sizeof g_request);
  // Handles what the reader made of the bytes so far; false ends the session.
  auto deliver = [&](mcpgen::LineReader::Event ev) {
    hostport::SendLock lock;
    if (ev == mcpgen::LineReader::Event::kOversized) {
      log_line("dropped a message longer than %d bytes", MCPGEN_REQUEST_BUFFER_SIZE - 1);
      return session.on_oversized(lines.data(), lines.size());
    }
    return session.on_message(lines.data(), lines.size());
  };
  char chunk[1024];
  for (;;) {
    ssize_t r = read(0, chunk, sizeof chunk);
    if (r < 0) {
      if (errno == EINTR) continue;
      log_line("stdin: %s", strerror(errno));
      return 1;
    }
    if (r == 0) break;
    size_t at = 0;
    while (at < static_cast<size_t>(r)) {
      size_t used = 0;
      const mcpgen::LineReader::Event ev = lines.feed(chunk + at, static_cast<size_t>(r) - at, &used);
      at += used;
      if (ev == mcpgen::LineReader::Event::kNone) continue;
      if (!deliver(ev)) return 1;
      log_vision_change();
    }
  }
  const mcpgen::LineReader::Event last = lines.finish();  // a last line without a newline
  if (last != mcpgen::LineReader::Event::kNone) deliver(last);
  log_line("stdin closed");
  return 0;
}

// ------------------------------------------------------------------ websocket

struct WsOptions {
  const char* url = nullptr;
  const char* token = "test-token";
  const char* device_id = "02:4d:43:50:47:4e";
  const char* client_id = nullptr;  // random UUID when not given
  long max_reconnects = -1;  // -1: forever
  int hello_timeout_ms = 10000;
};

// One WebSocket connection of the device: hello exchange, then MCP until it drops.
class WsDevice : public hostport::WsEvents, public mcpgen::Link {
 public:
  WsDevice(const WsOptions& opt, hostport::WsClient& ws)
      : opt_(opt), ws_(ws), session_(g_server, *this, g_response, sizeof g_response) {}

  bool send(const char* data, size_t len) override { return ws_.send_text(data, len); }

  // Session calls hold the process's send lock: spec events may be sent from other
  // threads at any time (event_outlet.h).
  void on_open() override {
    log_line("websocket: connected to %s", opt_.url);
    hostport::SendLock lock;
    g_server.reset_connection();
    if (!session_.send_hello("websocket")) log_line("websocket: sending hello failed");
    ws_.set_timer(opt_.hello_timeout_ms);
  }

  void on_text(char* msg, size_t len) override {
    bool sent;
    {
      hostport::SendLock lock;
      sent = session_.on_message(msg, len);
    }
    if (!sent) log_line("websocket: send failed (queue full or connection gone)");
    if (!hello_seen_ && g_server.peer_hello_received()) {
      hello_seen_ = true;
      ws_.set_timer(-1);
      log_line("websocket: server hello, session_id=%s", g_server.session_id());
      hostport::ota_mark_valid();  // a pending new image reached the backend
    }
    log_vision_change();
  }

  void on_oversized() override {
    log_line("websocket: dropped a message longer than %d bytes", MCPGEN_REQUEST_BUFFER_SIZE - 1);
    hostport::SendLock lock;
    session_.on_oversized();
  }

  bool on_timer() override {
    log_line("websocket: no server hello within %d ms", opt_.hello_timeout_ms);
    return false;
  }

  bool hello_seen() const { return hello_seen_; }

 private:
  const WsOptions& opt_;
  hostport::WsClient& ws_;
  mcpgen::Session session_;
  bool hello_seen_ = false;
};

// One connection: handshake, hello exchange, then MCP until it drops. Returns true
// when the session got as far as the server hello.
bool run_ws_connection(const WsOptions& opt, const hostport::WsUrl& url, hostport::WsClient& ws) {
  char auth[512];
  snprintf(auth, sizeof auth, "Bearer %s", opt.token);
  char protocol_version[12];
  snprintf(protocol_version, sizeof protocol_version, "%d", MCPGEN_XIAOZHI_PROTOCOL_VERSION);
  const hostport::HttpHeader headers[] = {
      {"Authorization", auth},
      {"Protocol-Version", protocol_version},
      {"Device-Id", opt.device_id},
      {"Client-Id", opt.client_id},
  };
  WsDevice device(opt, ws);
  hostport::EventLinkScope events(device);
  char err[256];
  if (!ws.run(url, headers, sizeof headers / sizeof headers[0], g_request, sizeof g_request, device, err, sizeof err)) {
    log_line("websocket: %s", err);
    return false;
  }
  log_line("websocket: connection lost: %s", err);
  return device.hello_seen();
}

int run_ws(const WsOptions& opt) {
  hostport::WsUrl url;
  char err[256];
  if (!hostport::parse_ws_url(opt.url, &url, err, sizeof err)) {
    log_line("%s", err);
    return 2;
  }
  hostport::WsClient ws;
  if (!ws.init(err, sizeof err)) {
    log_line("websocket: %s", err);
    return 2;
  }
  log_line("%s %s (spec %s): device %s, client %s", kMcpSpec.device_name, kMcpSpec.device_version, kMcpSpec.fingerprint,
           opt.device_id, opt.client_id);
  const int kMinBackoffMs = 200, kMaxBackoffMs = 5000;
  int backoff = kMinBackoffMs;
  long reconnects = 0;
  for (;;) {
    bool had_session = run_ws_connection(opt, url, ws);
    if (had_session) backoff = kMinBackoffMs;
    if (opt.max_reconnects >= 0 && reconnects >= opt.max_reconnects) {
      log_line("websocket: giving up after %ld reconnects", reconnects);
      return had_session ? 0 : 1;
    }
    ++reconnects;
    log_line("websocket: reconnecting in %d ms (attempt %ld)", backoff, reconnects);
    hostport::sleep_ms(backoff);
    backoff = backoff * 2 > kMaxBackoffMs ? kMaxBackoffMs : backoff * 2;
  }
}

void make_uuid(char out[37]) {
  uint8_t b[16];
  hostport::random_bytes(b, sizeof b);
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
           b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

// A secret option (--token, --password). On the command line every local user can read it
// (ps), so it also comes from a file (--token-file) or the environment variable the ESP32
// build reads for the same setting; a command-line value still works, with a warning.
struct SecretOption {
  const char* option;  // "--token"
  const char* env;  // "MCPGEN_BACKEND_TOKEN"
  const char* given = nullptr;  // --token VALUE
  const char* file = nullptr;  // --token-file FILE
  char buf[1024];
};

// Sets *value to the secret (unchanged when none is given: the caller's default) and
// returns true, or says why it cannot be used (naming the file or variable) and returns false.
bool resolve_secret(SecretOption& s, const char** value) {
  if (s.given != nullptr && s.file != nullptr) {
    fprintf(stderr, "error: %s and %s-file are both given: keep only %s-file\n", s.option, s.option, s.option);
    return false;
  }
  if (s.given != nullptr) {
    fprintf(stderr,
            "warning: %s on the command line can be read by every local user (ps); use %s-file FILE or the %s "
            "environment variable\n",
            s.option, s.option, s.env);
    *value = s.given;
    return true;
  }
  if (s.file != nullptr) {
    FILE* f = fopen(s.file, "rb");
    if (f == nullptr) {
      fprintf(stderr, "error: %s-file %s: %s; write the secret to it (chmod 600 %s) or set %s\n", s.option, s.file,
              strerror(errno), s.file, s.env);
      return false;
    }
    struct stat st;
    bool others_read = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) != 0;
    size_t n = fread(s.buf, 1, sizeof s.buf, f);
    fclose(f);
    if (n == sizeof s.buf) {
      fprintf(stderr, "error: %s-file %s: longer than %zu bytes; expected one line\n", s.option, s.file,
              sizeof s.buf - 1);
      return false;
    }
    while (n > 0 && (s.buf[n - 1] == '\n' || s.buf[n - 1] == '\r')) --n;  // the line end `echo` adds
    s.buf[n] = '\0';
    if (n == 0 || strlen(s.buf) != n) {
      fprintf(stderr, "error: %s-file %s: %s; expected the secret on one line\n", s.option, s.file,
              n == 0 ? "the file is empty" : "it holds a NUL byte");
      return false;
    }
    if (others_read) {
      fprintf(stderr, "warning: %s-file %s is readable by every local user; make it private: chmod 600 %s\n", s.option,
              s.file, s.file);
    }
    *value = s.buf;
    return true;
  }
  const char* env = getenv(s.env);
  if (env != nullptr && env[0] == '\0') {
    fprintf(stderr, "error: the environment variable %s is set but empty; set it to the secret or unset it\n", s.env);
    return false;
  }
  if (env != nullptr) *value = env;
  return true;
}

void usage(FILE* f) {
  fprintf(f,
          "usage: %s-sim --stdio\n"
          "       %s-sim --ws ws://host:port/path [--token-file FILE] [--device-id ID] [--client-id UUID]\n"
          "              [--max-reconnects N] [--hello-timeout-ms MS]\n"
          "       %s-sim --mqtt HOST:PORT [--device-id ID] [--client-id ID] [--username U] [--password-file FILE]\n"
          "              [--token-file FILE] [--topic-prefix P] [--keepalive S] [--cafile CA.pem]\n"
          "              [--max-reconnects N] [--hello-timeout-ms MS]\n"
          "       secrets: --token-file FILE or MCPGEN_BACKEND_TOKEN, --password-file FILE or MCPGEN_MQTT_PASSWORD\n"
          "              (--token T and --password P work too, but other local users can read a command line)\n"
          "       ... [--ota-dir DIR] [--ota-deadline-ms MS] [--ota-ca CA.pem]   over-the-air updates\n"
          "              (docs/ota.md; --ota-ca: the CA of https:// image servers)\n"
          "       %s-sim --version\n",
          kMcpSpec.device_name, kMcpSpec.device_name, kMcpSpec.device_name, kMcpSpec.device_name);
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  mcpgen::set_event_outlet(&g_server, &hostport::event_outlet());
  bool stdio = false;
  WsOptions ws;
  static char uuid[37];
  hostport::MqttDeviceOptions mqtt;  // --mqtt mode
  static SecretOption token{"--token", "MCPGEN_BACKEND_TOKEN", nullptr, nullptr, {}};
  static SecretOption password{"--password", "MCPGEN_MQTT_PASSWORD", nullptr, nullptr, {}};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    bool has_value = i + 1 < argc;
    if (hostport::parse_mqtt_arg(argc, argv, &i, &mqtt)) {  // --mqtt mode options (observes --token)
    } else if (hostport::parse_ota_arg(argc, argv, &i)) {  // --ota-dir DIR [--ota-deadline-ms MS]
    } else if (strcmp(a, "--stdio") == 0) {
      stdio = true;
    } else if (strcmp(a, "--ws") == 0 && has_value) {
      ws.url = argv[++i];
    } else if (strcmp(a, "--token") == 0 && has_value) {
      token.given = argv[++i];
    } else if (strcmp(a, "--token-file") == 0 && has_value) {
      token.file = argv[++i];
    } else if (strcmp(a, "--password-file") == 0 && has_value) {
      password.file = argv[++i];
    } else if (strcmp(a, "--device-id") == 0 && has_value) {
      ws.device_id = argv[++i];
    } else if (strcmp(a, "--client-id") == 0 && has_value) {
      ws.client_id = argv[++i];
    } else if (strcmp(a, "--max-reconnects") == 0 && has_value) {
      ws.max_reconnects = strtol(argv[++i], nullptr, 10);
    } else if (strcmp(a, "--hello-timeout-ms") == 0 && has_value) {
      ws.hello_timeout_ms = static_cast<int>(strtol(argv[++i], nullptr, 10));
    } else if (strcmp(a, "--version") == 0) {
      printf("%s %s spec %s core %d\n", kMcpSpec.device_name, kMcpSpec.device_version, kMcpSpec.fingerprint,
             MCPGEN_CORE_VERSION);
      return 0;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "unknown or incomplete argument: %s\n", a);
      usage(stderr);
      return 2;
    }
  }
  if ((stdio ? 1 : 0) + (ws.url != nullptr ? 1 : 0) + (mqtt.broker != nullptr ? 1 : 0) != 1) {
    usage(stderr);
    return 2;
  }
  if (stdio) return run_stdio();
#if !MCPGEN_HOST_WS
  if (ws.url != nullptr) {  // before anything starts (the OTA supervisor would run it first)
    fprintf(stderr,
            "error: --ws: this simulator was built without WebSocket support (libwebsockets-dev was not "
            "installed when it was built): install libwebsockets-dev (apt-get install libwebsockets-dev) "
            "and rebuild it (codegen build SPEC --target host); --stdio and --mqtt work as built\n");
    return 2;
  }
#endif
  password.given = mqtt.password;  // --password was taken by parse_mqtt_arg
  const char* default_token = ws.token;
  if (!resolve_secret(token, &ws.token) || !resolve_secret(password, &mqtt.password)) return 2;
  mqtt.token = ws.token != default_token ? ws.token : nullptr;  // the MQTT hello has none by default
  if (hostport::ota_supervisor_wanted()) return hostport::ota_supervise(argc, argv);
  if (ws.client_id == nullptr) {
    make_uuid(uuid);
    ws.client_id = uuid;
  }
  if (mqtt.broker != nullptr) {  // --mqtt mode: shares the device identity options with --ws
    mqtt.device_id = ws.device_id;
    mqtt.client_id = ws.client_id;
    mqtt.max_reconnects = ws.max_reconnects;
    mqtt.hello_timeout_ms = ws.hello_timeout_ms;
    return hostport::run_mqtt_device(mqtt, g_server, g_request, sizeof g_request, g_response, sizeof g_response,
                                     log_line, log_vision_change);
  }
  return run_ws(ws);
}
