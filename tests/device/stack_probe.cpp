// Measures the peak stack of Server::handle per message by stack painting: each
// message is handled on a thread whose stack is a painted static buffer; the deepest
// overwritten byte gives the peak. A no-op thread gives the baseline (glibc keeps its
// thread control block at the top of a user-provided stack), which is subtracted.
// Messages come one per line on stdin; prints "<bytes> <first 40 chars>" per message.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mcp_tools.h"
#include "mcpgen/mcp_core.h"

namespace {

mcpgen::Server g_server(kMcpSpec);
char g_in[MCPGEN_REQUEST_BUFFER_SIZE];
char g_out[MCPGEN_RESPONSE_BUFFER_SIZE];
size_t g_in_len = 0;
alignas(64) unsigned char g_stack[256 * 1024];
const unsigned char kPaint = 0xA5;

void* handle_one(void*) {
  size_t n = g_server.handle(g_in, g_in_len, g_out, sizeof g_out);
  g_out[n] = '\0';
  return nullptr;
}

void* noop(void*) { return nullptr; }

size_t peak_of(void* (*fn)(void*)) {
  memset(g_stack, kPaint, sizeof g_stack);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, g_stack, sizeof g_stack);
  pthread_t t;
  if (pthread_create(&t, &attr, fn, nullptr) != 0) return 0;
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  size_t i = 0;
  while (i < sizeof g_stack && g_stack[i] == kPaint) ++i;
  return sizeof g_stack - i;
}

}  // namespace

int main() {
  size_t baseline = peak_of(noop);
  char line[MCPGEN_REQUEST_BUFFER_SIZE];
  while (fgets(line, sizeof line, stdin) != nullptr) {
    size_t n = strcspn(line, "\n");
    line[n] = '\0';
    memcpy(g_in, line, n + 1);
    g_in_len = n;
    size_t peak = peak_of(handle_one);
    printf("%zu %.40s\n", peak > baseline ? peak - baseline : 0, g_out);
  }
  return 0;
}
