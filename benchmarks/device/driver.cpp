// Host benchmark driver for the mcpgen device core (benchmarks/device.py builds it).
//
// Links the portable core, one spec's generated tables and its handlers, and runs
// requests through mcpgen::Server::handle:
//
//   driver allocs N     N rounds of every request below, after a warm-up round;
//                       prints JSON with malloc/calloc/realloc/free and operator
//                       new/delete counts seen *during* the measured rounds, and the
//                       progress notifications sent (count and bytes)
//   driver run KIND N   N requests of one KIND (for callgrind: every request goes
//                       through mcpgen_bench_handle_one, the --toggle-collect target)
//   driver show KIND    prints the reply to one request of KIND (on stdout) and the
//                       progress notifications sent while it ran (on stderr, a line each)
//   driver pages N      N full listings: tools/list pages (enveloped, withUserTools)
//                       following nextCursor until the last page; prints the pages
//                       of one listing (the cursor is copied between pages outside
//                       the collected function)
//
// KIND is the index of a request in the table read from the file named by the
// MCPGEN_BENCH_REQUESTS environment variable (one request per line).
//
// Allocation counting: malloc and friends are interposed here (forwarding to glibc's
// __libc_* entry points) and the global operator new/delete are replaced, so every heap
// allocation of the process, from the core, the handlers, libstdc++ or libc (e.g. a
// printf that allocates), is counted while `g_counting` is set.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#ifdef MCPGEN_BENCH_UPSTREAM
// The upstream build (benchmarks/device_upstream.py): xiaozhi-esp32's McpServer + cJSON
// with the shims of that module; upstream_tools.h registers the spec's tools.
#include <cJSON.h>

#include "application.h"
#include "mcp_server.h"
#include "upstream_tools.h"
#ifndef MCPGEN_REQUEST_BUFFER_SIZE
#define MCPGEN_REQUEST_BUFFER_SIZE 4096
#endif
#ifndef MCPGEN_RESPONSE_BUFFER_SIZE
#define MCPGEN_RESPONSE_BUFFER_SIZE 10240
#endif
#ifndef MCPGEN_NOTIFY_SIZE
#define MCPGEN_NOTIFY_SIZE 256
#endif
#else
#include "mcp_tools.h"
#include "mcpgen/mcp_core.h"
#endif

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
}

namespace {
volatile bool g_counting = false;
size_t g_mallocs = 0;
size_t g_frees = 0;
size_t g_news = 0;
size_t g_deletes = 0;
size_t g_bytes = 0;
}  // namespace

extern "C" {
void* malloc(size_t n) {
  if (g_counting) {
    ++g_mallocs;
    g_bytes += n;
  }
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  if (g_counting) {
    ++g_mallocs;
    g_bytes += a * b;
  }
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  if (g_counting) {
    ++g_mallocs;
    g_bytes += n;
  }
  return __libc_realloc(p, n);
}
void free(void* p) {
  if (g_counting && p != nullptr) ++g_frees;
  __libc_free(p);
}
}

void* operator new(size_t n) {
  if (g_counting) ++g_news;
  void* p = __libc_malloc(n ? n : 1);
  if (p == nullptr) abort();
  return p;
}
void* operator new[](size_t n) {
  if (g_counting) ++g_news;
  void* p = __libc_malloc(n ? n : 1);
  if (p == nullptr) abort();
  return p;
}
void operator delete(void* p) noexcept {
  if (g_counting && p != nullptr) ++g_deletes;
  __libc_free(p);
}
void operator delete[](void* p) noexcept {
  if (g_counting && p != nullptr) ++g_deletes;
  __libc_free(p);
}
void operator delete(void* p, size_t) noexcept {
  if (g_counting && p != nullptr) ++g_deletes;
  __libc_free(p);
}
void operator delete[](void* p, size_t) noexcept {
  if (g_counting && p != nullptr) ++g_deletes;
  __libc_free(p);
}

namespace {

constexpr int kMaxRequests = 64;  // the lamp alone sends 18 kinds: room for larger example specs
constexpr size_t kMaxRequestLen = MCPGEN_REQUEST_BUFFER_SIZE;

char g_requests[kMaxRequests][kMaxRequestLen];
size_t g_request_len[kMaxRequests];
int g_request_count = 0;

char g_in[MCPGEN_REQUEST_BUFFER_SIZE + 1];
char g_out[MCPGEN_RESPONSE_BUFFER_SIZE];
char g_notify[MCPGEN_NOTIFY_SIZE + 512];

bool load_requests() {
  const char* path = getenv("MCPGEN_BENCH_REQUESTS");
  if (path == nullptr) return false;
  FILE* f = fopen(path, "r");
  if (f == nullptr) return false;
  static char line[kMaxRequestLen + 2];
  while (g_request_count < kMaxRequests && fgets(line, sizeof line, f) != nullptr) {
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) --n;
    if (n == 0) continue;
    memcpy(g_requests[g_request_count], line, n);
    g_request_len[g_request_count] = n;
    ++g_request_count;
  }
  // More kinds than fit would be dropped without a word (their `run` then measured nothing).
  const bool all_read = fgets(line, sizeof line, f) == nullptr;
  fclose(f);
  if (!all_read) fprintf(stderr, "%s: more than %d requests\n", path, kMaxRequests);
  return all_read && g_request_count > 0;
}

}  // namespace

#ifdef MCPGEN_BENCH_UPSTREAM
size_t g_out_len = 0;

// What the stock firmware does with a message: Application::OnIncomingJson parses it
// with cJSON and hands an "mcp" payload to McpServer::ParseMessage; the reply comes back
// through Application::SendMcpMessage -> Protocol::SendMcpMessage (the envelope).
struct BenchServer {
  BenchServer() { mcpgen_bench_register_tools(McpServer::GetInstance()); }
  size_t handle(char* in, size_t len) {
    in[len] = '\0';
    g_out_len = 0;
    cJSON* root = cJSON_Parse(in);
    if (root != nullptr) {
      cJSON* type = cJSON_GetObjectItem(root, "type");
      if (cJSON_IsString(type) && strcmp(type->valuestring, "mcp") == 0) {
        cJSON* payload = cJSON_GetObjectItem(root, "payload");
        if (cJSON_IsObject(payload)) McpServer::GetInstance().ParseMessage(payload);
      }
      cJSON_Delete(root);
    }
    return g_out_len;
  }
};

Application& Application::GetInstance() {
  static Application app;
  return app;
}

// Runs at once: the stock main loop would run it right after this message.
void Application::Schedule(std::function<void()> callback) { callback(); }

void Application::SendMcpMessage(const std::string& payload) {
  Schedule([payload]() {
    std::string message =
        "{\"session_id\":\"b7e2a5c4-19d3-4f0e-9a61-3c8d2f7e5a10\",\"type\":\"mcp\",\"payload\":" + payload + "}";
    size_t n = message.size() < sizeof g_out ? message.size() : sizeof g_out - 1;
    memcpy(g_out, message.data(), n);
    g_out_len = n;
  });
}
#else
// The port's transport for Context::progress: the notifications a handler sends while
// handle() runs. It only counts them (a port's send has its own, port-specific cost);
// `show` also prints each one on stderr.
struct BenchLink final : mcpgen::Link {
  size_t messages = 0;
  size_t bytes = 0;
  bool echo = false;
  bool send(const char* data, size_t len) override {
    ++messages;
    bytes += len;
    if (echo) {
      fwrite(data, 1, len, stderr);
      fputc('\n', stderr);
    }
    return true;
  }
};

struct BenchServer {
  mcpgen::Server server{kMcpSpec};
  // Server::handle, plus fetching the notification a handler may have queued, as a
  // port does after every message.
  size_t handle(char* in, size_t len) {
    size_t n = server.handle(in, len, g_out, sizeof g_out);
    server.pending_notification(g_notify, sizeof g_notify);
    return n;
  }
};
#endif

// The one function callgrind collects (--toggle-collect=mcpgen_bench_handle_one):
// exactly one message through the server under test.
extern "C" __attribute__((noinline)) size_t mcpgen_bench_handle_one(BenchServer* server, size_t len) {
  return server->handle(g_in, len);
}

static size_t run_one(BenchServer& server, int kind) {
  size_t len = g_request_len[kind];
  memcpy(g_in, g_requests[kind], len);  // handle() unescapes strings in place
  return mcpgen_bench_handle_one(&server, len);
}

// One full tools/list walk; returns the number of pages.
static int list_all(BenchServer& server) {
  static char cursor[256];
  cursor[0] = '\0';
  int pages = 0;
  for (;;) {
    int len = snprintf(g_in, sizeof g_in,
                       "{\"session_id\":\"b7e2a5c4-19d3-4f0e-9a61-3c8d2f7e5a10\",\"type\":\"mcp\",\"payload\":"
                       "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\",\"params\":"
                       "{\"cursor\":\"%s\",\"withUserTools\":true}}}",
                       100 + pages, cursor);
    size_t n = mcpgen_bench_handle_one(&server, static_cast<size_t>(len));
    ++pages;
    g_out[n < sizeof g_out ? n : sizeof g_out - 1] = '\0';
    const char* key = strstr(g_out, "\"nextCursor\":\"");
    if (key == nullptr || pages > 100000) return pages;
    key += 14;
    size_t c = 0;
    while (key[c] != '\0' && key[c] != '"' && c + 1 < sizeof cursor) {
      cursor[c] = key[c];
      if (key[c] == '\\' && key[c + 1] != '\0' && c + 2 < sizeof cursor) {
        ++c;
        cursor[c] = key[c];
      }
      ++c;
    }
    cursor[c] = '\0';
  }
}

int main(int argc, char** argv) {
  if (argc < 2 || !load_requests()) {
    fprintf(stderr, "usage: MCPGEN_BENCH_REQUESTS=file %s allocs N | run KIND N | show KIND\n", argv[0]);
    return 2;
  }
  static BenchServer server;
#ifndef MCPGEN_BENCH_UPSTREAM
  // Where progress goes, set once outside the collected function (mcpgen::Session sets it
  // around every message), written in the reply buffer. On the stack: a static would move
  // the buffers, and with them what glibc's strncmp/memcmp cost (they depend on how close
  // to a page end the compared bytes lie), so every request's count.
  BenchLink link;
  server.server.set_link(&link, g_out, sizeof g_out);
#endif
  // The session starts like a real one: initialize, then notifications/initialized are
  // expected as the first two lines of the request file (kinds 0 and 1).
  if (strcmp(argv[1], "show") == 0 && argc >= 3) {
    int kind = atoi(argv[2]);
    if (kind < 0 || kind >= g_request_count) return 2;
#ifndef MCPGEN_BENCH_UPSTREAM
    link.echo = true;  // progress notifications on stderr, the reply on stdout
#endif
    size_t n = run_one(server, kind);
    fwrite(g_out, 1, n, stdout);
    fputc('\n', stdout);
    return 0;
  }
  if (strcmp(argv[1], "run") == 0 && argc >= 4) {
    int kind = atoi(argv[2]);
    long iters = atol(argv[3]);
    if (kind < 0 || kind >= g_request_count) return 2;
    size_t total = 0;
    for (long i = 0; i < iters; ++i) total += run_one(server, kind);
    printf("{\"kind\":%d,\"iterations\":%ld,\"reply_bytes\":%zu}\n", kind, iters, iters ? total / iters : 0);
    return 0;
  }
  if (strcmp(argv[1], "pages") == 0 && argc >= 3) {
    long iters = atol(argv[2]);
    int pages = 0;
    for (long i = 0; i < iters; ++i) pages = list_all(server);
    printf("{\"pages\":%d}\n", pages);
    return 0;
  }
  if (strcmp(argv[1], "allocs") == 0 && argc >= 3) {
    long iters = atol(argv[2]);
    for (int k = 0; k < g_request_count; ++k) run_one(server, k);  // warm-up round
    // Probe: the counters must see one malloc/free and one new/delete made on purpose.
    g_counting = true;
    void* volatile probe = malloc(16);
    free(probe);
    int* volatile probe_new = new int(1);
    delete probe_new;
    g_counting = false;
    printf("{\"probe\":{\"malloc\":%zu,\"free\":%zu,\"new\":%zu,\"delete\":%zu},", g_mallocs, g_frees, g_news,
           g_deletes);
    printf("\"requests\":%d,\"iterations\":%ld,\"per_kind\":[", g_request_count, iters);
    for (int k = 0; k < g_request_count; ++k) {
      g_mallocs = g_frees = g_news = g_deletes = g_bytes = 0;
      size_t replies = 0;
      size_t sent = 0, sent_bytes = 0;  // progress notifications (the upstream build has none)
#ifndef MCPGEN_BENCH_UPSTREAM
      link.messages = link.bytes = 0;
#endif
      g_counting = true;
      for (long i = 0; i < iters; ++i) replies += run_one(server, k) > 0 ? 1 : 0;
      g_counting = false;
#ifndef MCPGEN_BENCH_UPSTREAM
      sent = link.messages;
      sent_bytes = link.bytes;
#endif
      printf(
          "%s{\"kind\":%d,\"malloc\":%zu,\"free\":%zu,\"new\":%zu,\"delete\":%zu,\"bytes\":%zu,"
          "\"replies\":%zu,\"sent\":%zu,\"sent_bytes\":%zu}",
          k ? "," : "", k, g_mallocs, g_frees, g_news, g_deletes, g_bytes, replies, sent, sent_bytes);
    }
    printf("]}\n");
    return 0;
  }
  fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
