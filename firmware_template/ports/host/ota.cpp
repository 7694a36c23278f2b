// Over-the-air updates of the host simulator: see ota.h and docs/ota.md.
//
// The download is an HTTP/1.0 GET over a socket, written here: the host port links no
// HTTP client library, and an image server on the backend side serves one file with
// Content-Length. https:// URLs go through mbedtls' TLS client (libmbedtls-dev, already
// the dependency that gives SHA-256), verifying the server against --ota-ca CA.pem.
#include "ota.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elf.h>

#include "mcp_tools.h"
#include "mcpgen/ota_marker.h"
#include "tcp.h"

namespace hostport {
namespace {

const char* g_dir = nullptr;
const char* g_ca = nullptr;  // --ota-ca: the CA file https:// image servers are verified against
long g_deadline_ms = 30000;
bool g_child = false;
const int kRebootExit = 75;  // the child asks the supervisor to boot the active slot

void ota_log(const char* fmt, ...) {
  char line[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[sim] ota: %s\n", line);
  fflush(stderr);
}

struct OtaState {
  char active = 'a';
  bool pending = false;  // the active slot was just installed and has not reached the backend
  int attempts = 0;  // boots of the pending slot so far
};

void path_in_dir(char* out, size_t n, const char* name) { snprintf(out, n, "%s/%s", g_dir, name); }

void slot_path(char* out, size_t n, char slot) {
  char name[16];
  snprintf(name, sizeof name, "slot-%c", slot);
  path_in_dir(out, n, name);
}

bool load_state(OtaState* st) {
  char path[512];
  path_in_dir(path, sizeof path, "state");
  FILE* f = fopen(path, "r");
  if (f == nullptr) return false;
  char active = 0;
  int pending = 0, attempts = 0;
  int got = fscanf(f, "active=%c pending=%d attempts=%d", &active, &pending, &attempts);
  fclose(f);
  if (got != 3 || (active != 'a' && active != 'b')) return false;
  st->active = active;
  st->pending = pending != 0;
  st->attempts = attempts;
  return true;
}

// Written to a temporary file and renamed: a crash leaves the old state or the new one.
bool save_state(const OtaState& st) {
  char path[512], tmp[520];
  path_in_dir(path, sizeof path, "state");
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  if (f == nullptr) return false;
  fprintf(f, "active=%c\npending=%d\nattempts=%d\n", st.active, st.pending ? 1 : 0, st.attempts);
  bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = fclose(f) == 0 && ok;
  return ok && rename(tmp, path) == 0;
}

char other(char slot) { return slot == 'a' ? 'b' : 'a'; }

bool copy_file(const char* from, const char* to) {
  int in = open(from, O_RDONLY);
  if (in < 0) return false;
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  bool ok = out >= 0;
  char buf[65536];
  while (ok) {
    ssize_t r = read(in, buf, sizeof buf);
    if (r == 0) break;
    if (r < 0) {
      ok = errno == EINTR;
      continue;
    }
    ok = write(out, buf, static_cast<size_t>(r)) == r;
  }
  close(in);
  if (out >= 0) ok = close(out) == 0 && ok;
  return ok;
}

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

}  // namespace

bool parse_ota_arg(int argc, char** argv, int* i) {
  const char* a = argv[*i];
  bool has_value = *i + 1 < argc;
  if (strcmp(a, "--ota-dir") == 0 && has_value) {
    g_dir = argv[++*i];
  } else if (strcmp(a, "--ota-ca") == 0 && has_value) {
    g_ca = argv[++*i];
  } else if (strcmp(a, "--ota-deadline-ms") == 0 && has_value) {
    g_deadline_ms = strtol(argv[++*i], nullptr, 10);
  } else if (strcmp(a, "--ota-child") == 0) {
    g_child = true;
  } else {
    return false;
  }
  return true;
}

bool ota_supervisor_wanted() { return g_dir != nullptr && !g_child; }

// mkdir -p: every missing parent of path, then path itself.
bool make_dirs(const char* path) {
  char buf[512];
  if (snprintf(buf, sizeof buf, "%s", path) >= static_cast<int>(sizeof buf)) {
    errno = ENAMETOOLONG;
    return false;
  }
  for (char* p = buf + 1; *p != 0; ++p) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
    *p = '/';
  }
  return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

int ota_supervise(int argc, char** argv) {
  if (!make_dirs(g_dir)) {
    ota_log("cannot create --ota-dir %s: %s", g_dir, strerror(errno));
    return 2;
  }
  OtaState st;
  if (!load_state(&st)) {  // first boot: this executable becomes slot a
    char slot[512];
    slot_path(slot, sizeof slot, 'a');
    if (!copy_file("/proc/self/exe", slot) || !save_state(st)) {
      ota_log("cannot install the first image into %s", slot);
      return 2;
    }
    ota_log("installed this image into slot a");
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  // The child's argv: the slot's path, our arguments, --ota-child.
  char** child_argv = static_cast<char**>(calloc(static_cast<size_t>(argc) + 2, sizeof(char*)));
  if (child_argv == nullptr) return 2;
  for (int k = 1; k < argc; ++k) child_argv[k] = argv[k];
  child_argv[argc] = const_cast<char*>("--ota-child");
  char exe[512];
  for (;;) {
    if (!load_state(&st)) {
      ota_log("state file unreadable");
      return 2;
    }
    if (st.pending && st.attempts >= 1) {  // the new image booted once and never became valid
      ota_log("slot %c did not reach the backend: rolling back to slot %c", st.active, other(st.active));
      st.active = other(st.active);
      st.pending = false;
      st.attempts = 0;
      save_state(st);
    } else if (st.pending) {
      st.attempts = 1;
      save_state(st);
    }
    slot_path(exe, sizeof exe, st.active);
    child_argv[0] = exe;
    ota_log("booting slot %c%s", st.active, st.pending ? " (pending verification)" : "");
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
      execv(exe, child_argv);
      _exit(127);
    }
    int64_t deadline = st.pending ? now_ms() + g_deadline_ms : -1;
    int status = 0;
    bool killed = false;
    for (;;) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (g_stop) {
        kill(pid, SIGTERM);
        waitpid(pid, &status, 0);
        return 0;
      }
      if (deadline >= 0) {
        OtaState now;
        if (load_state(&now) && !now.pending) {
          deadline = -1;
        } else if (now_ms() >= deadline && !killed) {
          ota_log("slot %c: no session with the backend within %ld ms", st.active, g_deadline_ms);
          kill(pid, SIGKILL);
          killed = true;
        }
      }
      sleep_ms(50);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (code == kRebootExit) continue;
    OtaState after;
    if (load_state(&after) && after.pending) {
      ota_log("slot %c exited (code %d) before reaching the backend", after.active, code);
      continue;  // the top of the loop rolls back
    }
    return code;
  }
}

void ota_mark_valid() {
  if (g_dir == nullptr) return;
  OtaState st;
  if (load_state(&st) && st.pending) {
    st.pending = false;
    st.attempts = 0;
    if (save_state(st)) ota_log("slot %c reached the backend: marked valid", st.active);
  }
}

}  // namespace hostport

#if defined(MCPGEN_SPEC_OTA)

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

// mbedtls 2 deprecates the calls without _ret; mbedtls 3 only has those.
#if MBEDTLS_VERSION_MAJOR < 3
#define OTA_SHA256_STARTS mbedtls_sha256_starts_ret
#define OTA_SHA256_UPDATE mbedtls_sha256_update_ret
#define OTA_SHA256_FINISH mbedtls_sha256_finish_ret
#else
#define OTA_SHA256_STARTS mbedtls_sha256_starts
#define OTA_SHA256_UPDATE mbedtls_sha256_update
#define OTA_SHA256_FINISH mbedtls_sha256_finish
#endif

// What an image says about itself: the update handler finds it in a downloaded image
// and refuses one of another device, or one that does not carry the announced version.
extern "C" __attribute__((used)) const char mcpgen_ota_image_marker[] =
    MCPGEN_OTA_IMAGE_MARKER(MCPGEN_SPEC_DEVICE_NAME, MCPGEN_SPEC_DEVICE_VERSION, MCPGEN_SPEC_FINGERPRINT);

namespace hostport {
namespace {

pthread_mutex_t g_busy_mu = PTHREAD_MUTEX_INITIALIZER;
bool g_busy = false;  // an update runs, or one finished and the reboot is on its way

struct Url {
  char host[256];
  char port[8];
  char path[512];
  bool tls;
};

bool parse_http_url(const char* url, Url* u) {
  const char* p = url;
  u->tls = strncmp(p, "https://", 8) == 0;
  if (!u->tls && strncmp(p, "http://", 7) != 0) return false;
  p += u->tls ? 8 : 7;
  size_t hl = strcspn(p, ":/");
  if (hl == 0 || hl >= sizeof u->host) return false;
  memcpy(u->host, p, hl);
  u->host[hl] = 0;
  p += hl;
  snprintf(u->port, sizeof u->port, u->tls ? "443" : "80");
  if (*p == ':') {
    ++p;
    size_t pl = strspn(p, "0123456789");
    if (pl == 0 || pl >= sizeof u->port) return false;
    memcpy(u->port, p, pl);
    u->port[pl] = 0;
    p += pl;
  }
  if (*p != '/' && *p != 0) return false;
  snprintf(u->path, sizeof u->path, "%s", *p ? p : "/");
  return true;
}

int connect_to(const Url& u, char* err, size_t errn) {
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* res = nullptr;
  int rc = getaddrinfo(u.host, u.port, &hints, &res);
  if (rc != 0) {
    snprintf(err, errn, "cannot resolve %s: %s", u.host, gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (struct addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    struct timeval tv = {10, 0};  // connect and every read: a stalled server is an error, not a hang
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      snprintf(err, errn, "cannot connect to %s:%s: %s", u.host, u.port, strerror(errno));
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

// One connection to the image server: the socket, and for https:// the TLS session on it.
struct Conn {
  int fd = -1;
  bool tls = false;
  bool tls_ready = false;  // the mbedtls contexts below were initialised (freed in close_conn)
  mbedtls_ssl_context ssl;
  mbedtls_ssl_config conf;
  mbedtls_x509_crt ca;
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
};

int bio_send(void* ctx, const unsigned char* buf, size_t len) {
  ssize_t n = send(*static_cast<int*>(ctx), buf, len, MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  return errno == EINTR ? MBEDTLS_ERR_SSL_WANT_WRITE : MBEDTLS_ERR_NET_SEND_FAILED;
}

int bio_recv(void* ctx, unsigned char* buf, size_t len) {
  ssize_t n = recv(*static_cast<int*>(ctx), buf, len, 0);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EINTR) return MBEDTLS_ERR_SSL_WANT_READ;
  // SO_RCVTIMEO (10 s) ran out: a stalled server.
  return errno == EAGAIN || errno == EWOULDBLOCK ? MBEDTLS_ERR_SSL_TIMEOUT : MBEDTLS_ERR_NET_RECV_FAILED;
}

void tls_error(int rc, char* out, size_t n) { mbedtls_strerror(rc, out, n); }

// The TLS handshake on c->fd, verifying the server's certificate against --ota-ca and its
// name against the URL's host.
bool tls_open(Conn* c, const Url& u, char* err, size_t errn) {
  if (g_ca == nullptr) {
    snprintf(err, errn,
             "https://%s:%s: no CA to verify the image server with; start the simulator with "
             "--ota-ca CA.pem",
             u.host, u.port);
    return false;
  }
  mbedtls_ssl_init(&c->ssl);
  mbedtls_ssl_config_init(&c->conf);
  mbedtls_x509_crt_init(&c->ca);
  mbedtls_entropy_init(&c->entropy);
  mbedtls_ctr_drbg_init(&c->drbg);
  c->tls_ready = true;
  char why[160];
  static const unsigned char kPers[] = "mcpgen-ota";
  int rc = mbedtls_x509_crt_parse_file(&c->ca, g_ca);
  if (rc < 0) {
    tls_error(rc, why, sizeof why);
    snprintf(err, errn, "--ota-ca %s: not a readable PEM certificate file (%s)", g_ca, why);
    return false;
  }
  if ((rc = mbedtls_ctr_drbg_seed(&c->drbg, mbedtls_entropy_func, &c->entropy, kPers, sizeof kPers - 1)) != 0 ||
      (rc = mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                        MBEDTLS_SSL_PRESET_DEFAULT)) != 0) {
    tls_error(rc, why, sizeof why);
    snprintf(err, errn, "TLS set-up failed: %s", why);
    return false;
  }
  mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, nullptr);
  mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &c->drbg);
  if ((rc = mbedtls_ssl_setup(&c->ssl, &c->conf)) != 0 || (rc = mbedtls_ssl_set_hostname(&c->ssl, u.host)) != 0) {
    tls_error(rc, why, sizeof why);
    snprintf(err, errn, "TLS set-up failed: %s", why);
    return false;
  }
  mbedtls_ssl_set_bio(&c->ssl, &c->fd, bio_send, bio_recv, nullptr);
  while ((rc = mbedtls_ssl_handshake(&c->ssl)) != 0) {
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    uint32_t flags = mbedtls_ssl_get_verify_result(&c->ssl);
    if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != 0) {
      char info[256];
      mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
      for (char* q = info; *q; ++q) {
        if (*q == '\n') *q = (q[1] != 0) ? ';' : 0;
      }
      snprintf(err, errn, "TLS: the certificate of %s:%s is not trusted (CA %s): %s", u.host, u.port, g_ca, info);
    } else {
      tls_error(rc, why, sizeof why);
      snprintf(err, errn, "TLS handshake with %s:%s failed: %s", u.host, u.port, why);
    }
    return false;
  }
  return true;
}

void close_conn(Conn* c) {
  if (c->tls_ready) {
    mbedtls_ssl_close_notify(&c->ssl);
    mbedtls_ssl_free(&c->ssl);
    mbedtls_ssl_config_free(&c->conf);
    mbedtls_x509_crt_free(&c->ca);
    mbedtls_ctr_drbg_free(&c->drbg);
    mbedtls_entropy_free(&c->entropy);
    c->tls_ready = false;
  }
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

bool conn_write(Conn* c, const char* data, size_t n) {
  if (!c->tls) return send(c->fd, data, n, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
  size_t done = 0;
  while (done < n) {
    int rc = mbedtls_ssl_write(&c->ssl, reinterpret_cast<const unsigned char*>(data) + done, n - done);
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    if (rc <= 0) return false;
    done += static_cast<size_t>(rc);
  }
  return true;
}

// > 0: bytes read; 0: the server closed the connection; < 0: an error (why says which).
ssize_t conn_read(Conn* c, char* buf, size_t n, char* why, size_t whyn) {
  if (!c->tls) {
    for (;;) {
      ssize_t r = recv(c->fd, buf, n, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) snprintf(why, whyn, "%s", strerror(errno));
      return r;
    }
  }
  for (;;) {
    int rc = mbedtls_ssl_read(&c->ssl, reinterpret_cast<unsigned char*>(buf), n);
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    if (rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) return 0;
    if (rc < 0) tls_error(rc, why, whyn);
    return rc;
  }
}

// Downloads url into path, at most size + 1 bytes; fills sha (32 bytes) and *got.
bool download(const char* url, const char* path, long long size, unsigned char sha[32], long long* got, char* err,
              size_t errn) {
  Url u;
  if (!parse_http_url(url, &u)) {
    snprintf(err, errn, "url %s: expected http://host[:port]/path or https://host[:port]/path", url);
    return false;
  }
  Conn conn;
  conn.tls = u.tls;
  conn.fd = connect_to(u, err, errn);
  if (conn.fd < 0) return false;
  if (u.tls && !tls_open(&conn, u, err, errn)) {
    close_conn(&conn);
    return false;
  }
  char req[900];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n", u.path, u.host);
  if (!conn_write(&conn, req, static_cast<size_t>(n))) {
    snprintf(err, errn, "sending the request to %s failed: %s", url, strerror(errno));
    close_conn(&conn);
    return false;
  }
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (out < 0) {
    snprintf(err, errn, "cannot write %s: %s", path, strerror(errno));
    close_conn(&conn);
    return false;
  }
  mbedtls_sha256_context ctx;
  mbedtls_sha256_init(&ctx);
  OTA_SHA256_STARTS(&ctx, 0);
  char head[4096];
  size_t head_len = 0;
  bool in_body = false, ok = true;
  *got = 0;
  char buf[16384];
  for (;;) {
    char why[160];
    ssize_t r = conn_read(&conn, buf, sizeof buf, why, sizeof why);
    if (r < 0) {
      snprintf(err, errn, "download from %s stalled or failed after %lld bytes: %s", url, *got, why);
      ok = false;
      break;
    }
    if (r == 0) break;
    const char* body = buf;
    size_t body_len = static_cast<size_t>(r);
    if (!in_body) {
      size_t take = body_len < sizeof head - 1 - head_len ? body_len : sizeof head - 1 - head_len;
      memcpy(head + head_len, buf, take);
      head_len += take;
      head[head_len] = 0;
      char* end = strstr(head, "\r\n\r\n");
      if (end == nullptr) {
        if (head_len >= sizeof head - 1) {
          snprintf(err, errn, "%s: response headers longer than %zu bytes", url, sizeof head - 1);
          ok = false;
          break;
        }
        continue;
      }
      int status = 0;
      if (sscanf(head, "HTTP/%*d.%*d %d", &status) != 1 || status != 200) {
        snprintf(err, errn, "%s: the server answered HTTP status %d, expected 200", url, status);
        ok = false;
        break;
      }
      in_body = true;
      size_t header_bytes = static_cast<size_t>(end + 4 - head);
      size_t before = head_len - take;  // head bytes from earlier chunks
      body = buf + (header_bytes - before);
      body_len -= header_bytes - before;
    }
    if (*got + static_cast<long long>(body_len) > size) {
      snprintf(err, errn, "the image at %s is larger than the declared size %lld bytes", url, size);
      ok = false;
      break;
    }
    OTA_SHA256_UPDATE(&ctx, reinterpret_cast<const unsigned char*>(body), body_len);
    if (write(out, body, body_len) != static_cast<ssize_t>(body_len)) {
      snprintf(err, errn, "writing %s failed: %s", path, strerror(errno));
      ok = false;
      break;
    }
    *got += static_cast<long long>(body_len);
  }
  close_conn(&conn);
  OTA_SHA256_FINISH(&ctx, sha);
  mbedtls_sha256_free(&ctx);
  ok = close(out) == 0 && ok;
  if (ok && !in_body) {
    snprintf(err, errn, "%s: the connection closed before the response headers ended", url);
    ok = false;
  }
  if (ok && *got != size) {
    snprintf(err, errn, "truncated download: got %lld of %lld bytes from %s", *got, size, url);
    ok = false;
  }
  return ok;
}

using Marker = mcpgen_ota::Marker;

// Finds the image marker (mcpgen/ota_marker.h) in the file.
bool find_marker(const char* path, Marker* m) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return false;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = static_cast<char*>(malloc(static_cast<size_t>(n) + 1));
  bool found = false;
  if (data != nullptr && fread(data, 1, static_cast<size_t>(n), f) == static_cast<size_t>(n)) {
    data[n] = 0;
    found = mcpgen_ota::find_marker(data, static_cast<size_t>(n), m);
  }
  free(data);
  fclose(f);
  return found;
}

#if defined(MCPGEN_SPEC_OTA_SIGNED)

// ESP-IDF's signed-app block of the ECDSA scheme (what `espsecure sign_data --version 1`
// appends): a 32-bit little-endian version (0), then r and s of an ECDSA P-256 signature,
// 32 big-endian bytes each, over the SHA-256 of everything before the block.
const size_t kSigBlock = 68;
const unsigned char kPublicKey[64] = MCPGEN_SPEC_OTA_PUBLIC_KEY;  // X and Y, big-endian

// Where the executable ends: an ELF file ends with its section header table, so the bytes
// after it are the signature block (0 bytes: unsigned; fewer than 68: a cut block).
long long elf_end(const unsigned char* data, size_t n) {
  if (n < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) != 0 || data[EI_CLASS] != ELFCLASS64) return -1;
  Elf64_Ehdr eh;
  memcpy(&eh, data, sizeof eh);
  return static_cast<long long>(eh.e_shoff) + static_cast<long long>(eh.e_shnum) * eh.e_shentsize;
}

// Checks the image's signature block against the key compiled into this firmware; on a
// refusal, writes the reason into err and returns false.
bool verify_signature(const char* path, char* err, size_t errn) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) {
    snprintf(err, errn, "cannot read the downloaded image: %s", strerror(errno));
    return false;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = static_cast<unsigned char*>(malloc(n > 0 ? static_cast<size_t>(n) : 1));
  bool read_ok = data != nullptr && fread(data, 1, static_cast<size_t>(n), f) == static_cast<size_t>(n);
  fclose(f);
  if (!read_ok) {
    free(data);
    snprintf(err, errn, "cannot read the downloaded image");
    return false;
  }
  const size_t size = static_cast<size_t>(n);
  long long end = elf_end(data, size);
  long long tail = end < 0 ? -1 : static_cast<long long>(size) - end;
  bool ok = false;
  if (end < 0 || tail < 0) {
    snprintf(err, errn, "unsigned image: not a complete simulator executable, so no signature block follows it");
  } else if (tail == 0) {
    snprintf(err, errn,
             "unsigned image: no signature block; this device installs only images signed with its key "
             "(codegen ota --sign-key KEY.pem)");
  } else if (tail < static_cast<long long>(kSigBlock)) {
    snprintf(err, errn, "truncated signature: %lld of the %zu bytes of the signature block", tail, kSigBlock);
  } else if (tail > static_cast<long long>(kSigBlock)) {
    snprintf(err, errn, "bad signature: %lld bytes follow the executable, a signature block has %zu", tail, kSigBlock);
  } else {
    const unsigned char* block = data + size - kSigBlock;
    uint32_t version = static_cast<uint32_t>(block[0]) | static_cast<uint32_t>(block[1]) << 8 |
                       static_cast<uint32_t>(block[2]) << 16 | static_cast<uint32_t>(block[3]) << 24;
    unsigned char digest[32];
    mbedtls_sha256_context sha;
    mbedtls_sha256_init(&sha);
    OTA_SHA256_STARTS(&sha, 0);
    OTA_SHA256_UPDATE(&sha, data, size - kSigBlock);
    OTA_SHA256_FINISH(&sha, digest);
    mbedtls_sha256_free(&sha);
    mbedtls_ecp_group grp;
    mbedtls_ecp_point q;
    mbedtls_mpi r, s;
    mbedtls_ecp_group_init(&grp);
    mbedtls_ecp_point_init(&q);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    unsigned char point[65];
    point[0] = 0x04;  // uncompressed: X then Y
    memcpy(point + 1, kPublicKey, sizeof kPublicKey);
    int rc = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
    if (rc == 0) rc = mbedtls_ecp_point_read_binary(&grp, &q, point, sizeof point);
    if (rc == 0) rc = mbedtls_mpi_read_binary(&r, block + 4, 32);
    if (rc == 0) rc = mbedtls_mpi_read_binary(&s, block + 36, 32);
    if (version != 0) {
      snprintf(err, errn, "bad signature: the signature block has version %u, expected 0 (ECDSA P-256)", version);
    } else if (rc != 0 || mbedtls_ecdsa_verify(&grp, digest, sizeof digest, &q, &r, &s) != 0) {
      snprintf(err, errn, "bad signature: the image is not signed with this device's key");
    } else {
      ok = true;
    }
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&s);
    mbedtls_ecp_point_free(&q);
    mbedtls_ecp_group_free(&grp);
  }
  free(data);
  return ok;
}

#endif  // MCPGEN_SPEC_OTA_SIGNED

void* reboot_later(void*) {
  sleep_ms(500);  // let the reply reach the backend first
  ota_log("rebooting into the new slot");
  _exit(kRebootExit);
  return nullptr;
}

mcpgen::Result fail(mcpgen::Context& ctx, const char* passive_path, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx.scratch(), ctx.scratch_size(), fmt, ap);
  va_end(ap);
  if (passive_path != nullptr) unlink(passive_path);
  ota_log("update refused: %s", ctx.scratch());
  pthread_mutex_lock(&g_busy_mu);
  g_busy = false;
  pthread_mutex_unlock(&g_busy_mu);
  return mcpgen::Result::Error(ctx.scratch());
}

}  // namespace
}  // namespace hostport

namespace tools {

mcpgen::Result mcpgen_builtin_upgrade_firmware(const McpgenBuiltinUpgradeFirmwareArgs& args, mcpgen::Context& ctx) {
  using namespace hostport;
  if (g_dir == nullptr) {
    return mcpgen::Result::Error("OTA is off: start the simulator with --ota-dir DIR to enable updates");
  }
  if (mcpgen_ota::url_has_control(args.url)) {  // before any request: CR/LF would inject headers
    ota_log("update refused: unsafe url (a control character)");
    return mcpgen::Result::Error(
        "unsafe url: it holds a control character (CR, LF, NUL or another below 0x20, or 0x7f); nothing was "
        "requested");
  }
  pthread_mutex_lock(&g_busy_mu);
  bool busy = g_busy;
  g_busy = true;
  pthread_mutex_unlock(&g_busy_mu);
  if (busy) return mcpgen::Result::Error("an update is already in progress: wait for the device to reboot");
  OtaState st;
  if (!load_state(&st)) return fail(ctx, nullptr, "OTA state in %s is unreadable", g_dir);
  char passive[512];
  slot_path(passive, sizeof passive, other(st.active));
  ota_log("downloading %s (%lld bytes, version %s) into slot %c", args.url, static_cast<long long>(args.size),
          args.version, other(st.active));
  unsigned char sha[32];
  long long got = 0;
  char err[640];
  if (!download(args.url, passive, args.size, sha, &got, err, sizeof err)) return fail(ctx, passive, "%s", err);
  char hex[65];
  for (int k = 0; k < 32; ++k) snprintf(hex + 2 * k, 3, "%02x", sha[k]);
  if (strcasecmp(hex, args.sha256) != 0) {
    return fail(ctx, passive, "SHA-256 mismatch: the image hashes to %s, expected %s", hex, args.sha256);
  }
#if defined(MCPGEN_SPEC_OTA_SIGNED)
  if (!verify_signature(passive, err, sizeof err)) return fail(ctx, passive, "%s", err);
#endif
  Marker m;
  if (!find_marker(passive, &m)) {
    return fail(ctx, passive, "not an mcpgen image: no MCPGEN-OTA-IMAGE marker (build it with device.ota: true)");
  }
  if (strcmp(m.name, MCPGEN_SPEC_DEVICE_NAME) != 0) {
    return fail(ctx, passive, "the image is for device '%s' (spec %s), this device is '%s'", m.name, m.fingerprint,
                MCPGEN_SPEC_DEVICE_NAME);
  }
  if (strcmp(m.version, args.version) != 0) {
    return fail(ctx, passive, "the image carries version %s, the request announced %s", m.version, args.version);
  }
  if (mcpgen_ota::compare_versions(m.version, MCPGEN_SPEC_DEVICE_VERSION) < 0 && !args.allow_downgrade) {
    return fail(ctx, passive,
                "downgrade refused: the image carries version %s, this device runs %s (roll out with "
                "--allow-downgrade to install an older version)",
                m.version, MCPGEN_SPEC_DEVICE_VERSION);
  }
  OtaState next;
  next.active = other(st.active);
  next.pending = true;
  next.attempts = 0;
  if (!save_state(next)) return fail(ctx, passive, "cannot write the OTA state in %s", g_dir);
  snprintf(ctx.scratch(), ctx.scratch_size(), "installed %s %s (spec %s) into slot %c; rebooting", m.name, m.version,
           m.fingerprint, next.active);
  ota_log("%s", ctx.scratch());
  pthread_t t;
  if (pthread_create(&t, nullptr, reboot_later, nullptr) == 0) pthread_detach(t);
  return mcpgen::Result::Text(ctx.scratch());
}

}  // namespace tools

#endif  // MCPGEN_SPEC_OTA
