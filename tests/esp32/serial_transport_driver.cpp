// Runs the ESP-IDF port's real serial transport (ports/esp_idf/transport_serial.cpp) in a host
// process, over the fakes of fake_idf/ (pthreads for tasks and mutexes, stdin for the UART's
// receive side, one shared byte log for its transmit side), for test_esp32_serial_transport.py.
//
//   serial_transport_driver frames < bytes   the lines the transport hands to the port's
//                                            receive slots, then what it wrote to the UART
//   serial_transport_driver mix              4 tasks log (each line in 3 pieces) while 4 tasks
//                                            send MCP lines; prints the UART's bytes
// Here the seam functions of mcpgen_esp_port.cpp (esp_port.h: rx_*, post_connected) only
// record what they are given.
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/uart.h"
#include "esp_log.h"
#include "esp_system.h"
#include "esp_port.h"
#include "freertos/semphr.h"
#include "freertos/task.h"

// ------------------------------------------------------------------ fake FreeRTOS

struct FakeMutex {
  pthread_mutex_t mu;
  pthread_t owner;
  bool held;
};

BaseType_t xPortInIsrContext() { return 0; }

SemaphoreHandle_t xSemaphoreCreateMutex() {
  static FakeMutex m = {PTHREAD_MUTEX_INITIALIZER, pthread_t(), false};
  return &m;
}

BaseType_t xSemaphoreTake(SemaphoreHandle_t m, TickType_t) {
  pthread_mutex_lock(&m->mu);
  m->owner = pthread_self();
  __atomic_store_n(&m->held, true, __ATOMIC_SEQ_CST);
  return pdTRUE;
}

BaseType_t xSemaphoreGive(SemaphoreHandle_t m) {
  __atomic_store_n(&m->held, false, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&m->mu);
  return pdTRUE;
}

TaskHandle_t xSemaphoreGetMutexHolder(SemaphoreHandle_t m) {
  if (!__atomic_load_n(&m->held, __ATOMIC_SEQ_CST)) return nullptr;
  return reinterpret_cast<TaskHandle_t>(m->owner);
}

TaskHandle_t xTaskGetCurrentTaskHandle() { return reinterpret_cast<TaskHandle_t>(pthread_self()); }

struct TaskStart {
  TaskFunction_t fn;
  void* arg;
};

void* task_trampoline(void* p) {
  TaskStart s = *static_cast<TaskStart*>(p);
  delete static_cast<TaskStart*>(p);
  s.fn(s.arg);
  return nullptr;
}

BaseType_t xTaskCreate(TaskFunction_t fn, const char*, uint32_t, void* arg, unsigned, TaskHandle_t*) {
  pthread_t t;
  if (pthread_create(&t, nullptr, task_trampoline, new TaskStart{fn, arg}) != 0) return 0;
  pthread_detach(t);
  return pdPASS;
}

// ------------------------------------------------------------------ fake esp_log

namespace {
vprintf_like_t g_hook = nullptr;
}

vprintf_like_t esp_log_set_vprintf(vprintf_like_t func) {
  vprintf_like_t old = g_hook;
  g_hook = func;
  return old;
}

void fake_esp_log(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (g_hook != nullptr) {
    g_hook(fmt, ap);
  } else {
    vfprintf(stderr, fmt, ap);
  }
  va_end(ap);
}

uint32_t esp_get_free_heap_size(void) { return 291264; }
uint32_t esp_get_minimum_free_heap_size(void) { return 290000; }

// ------------------------------------------------------------------ fake UART

namespace {
char g_tx[1 << 22];  // everything written to the UART, in order
size_t g_tx_len;
pthread_mutex_t g_tx_mu = PTHREAD_MUTEX_INITIALIZER;
char g_rx_buf[512];  // bytes read from stdin, not yet taken by uart_read_bytes
size_t g_rx_at, g_rx_len;
pthread_mutex_t g_eof_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_eof_cv = PTHREAD_COND_INITIALIZER;
bool g_eof;
bool g_installed;
}  // namespace

esp_err_t uart_driver_install(uart_port_t, int, int tx_size, int, QueueHandle_t*, int) {
  if (tx_size != 0) return 1;  // the transport relies on writes reaching the FIFO in order
  g_installed = true;
  return ESP_OK;
}

esp_err_t uart_param_config(uart_port_t, const uart_config_t* cfg) {
  return g_installed && cfg->baud_rate == CONFIG_MCPGEN_SERIAL_BAUD ? ESP_OK : 1;
}

int uart_read_bytes(uart_port_t, void* buf, uint32_t len, TickType_t) {
  if (g_rx_at == g_rx_len) {
    const ssize_t n = read(0, g_rx_buf, sizeof g_rx_buf);
    if (n <= 0) {  // end of the input: tell main, then block like a UART with nothing to read
      pthread_mutex_lock(&g_eof_mu);
      g_eof = true;
      pthread_cond_broadcast(&g_eof_cv);
      pthread_mutex_unlock(&g_eof_mu);
      for (;;) pause();
    }
    g_rx_at = 0;
    g_rx_len = static_cast<size_t>(n);
  }
  size_t n = g_rx_len - g_rx_at < len ? g_rx_len - g_rx_at : len;
  memcpy(buf, g_rx_buf + g_rx_at, n);
  g_rx_at += n;
  return static_cast<int>(n);
}

esp_err_t uart_get_buffered_data_len(uart_port_t, size_t* len) {
  *len = g_rx_len - g_rx_at;
  return ESP_OK;
}

// Byte by byte with a yield in between: writers that are not serialised interleave.
int uart_write_bytes(uart_port_t, const void* src, size_t len) {
  const char* p = static_cast<const char*>(src);
  for (size_t i = 0; i < len; ++i) {
    pthread_mutex_lock(&g_tx_mu);
    if (g_tx_len < sizeof g_tx) g_tx[g_tx_len++] = p[i];
    pthread_mutex_unlock(&g_tx_mu);
    sched_yield();
  }
  return static_cast<int>(len);
}

// ------------------------------------------------------------------ the seam (mcpgen_esp_port.cpp's side)

namespace {
char g_msg[MCPGEN_REQUEST_BUFFER_SIZE];
size_t g_msg_len;
bool g_msg_oversized;
}  // namespace

namespace mcpgen_esp {

void post_connected() { printf("connected\n"); }
void post_disconnected() { printf("disconnected\n"); }

int rx_begin() {
  g_msg_len = 0;
  g_msg_oversized = false;
  return 0;
}

// As the port's rx_append: a message that does not fit (one byte stays for the NUL) is
// marked oversized and keeps what came before.
void rx_append(const void* data, size_t len) {
  if (g_msg_len + len + 1 > sizeof g_msg) {
    g_msg_oversized = true;
  } else {
    memcpy(g_msg + g_msg_len, data, len);
    g_msg_len += len;
  }
}

void rx_end() {
  printf("%s %zu ", g_msg_oversized ? "oversized" : "message", g_msg_len);
  for (size_t i = 0; i < g_msg_len; ++i) printf("%02x", static_cast<unsigned char>(g_msg[i]));
  printf("\n");
}

bool rx_active() { return true; }

}  // namespace mcpgen_esp

// ------------------------------------------------------------------ the test

namespace {

void wait_for_eof() {
  pthread_mutex_lock(&g_eof_mu);
  while (!g_eof) pthread_cond_wait(&g_eof_cv, &g_eof_mu);
  pthread_mutex_unlock(&g_eof_mu);
}

void dump_uart() {
  pthread_mutex_lock(&g_tx_mu);
  printf("--- uart %zu\n", g_tx_len);
  fwrite(g_tx, 1, g_tx_len, stdout);
  pthread_mutex_unlock(&g_tx_mu);
}

constexpr int kTasks = 4;
constexpr int kLines = 150;

int log_piece(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = g_hook(fmt, ap);
  va_end(ap);
  return n;
}

void* logger(void* arg) {
  const long task = reinterpret_cast<long>(arg);
  for (int i = 0; i < kLines; ++i) {
    log_piece("I (%d) ", i);  // ESP-IDF's log v2 hands a line over in pieces like these
    log_piece("task%ld: ", task);
    log_piece("line %d of %d\n", i, kLines);
  }
  return nullptr;
}

void* sender(void* arg) {
  const long task = reinterpret_cast<long>(arg);
  char msg[256];
  for (int i = 0; i < kLines; ++i) {
    int n = snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"pad\":\"%.*s\"}}", task * 1000 + i,
                     10 + (i * 7) % 120,
                     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
                     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
    if (!mcpgen_esp::transport_send(msg, static_cast<size_t>(n))) return reinterpret_cast<void*>(1);
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!mcpgen_esp::transport_start()) {
    printf("start failed\n");
    return 1;
  }
  if (strcmp(mcpgen_esp::transport_name(), "serial") != 0) return 3;
  wait_for_eof();
  if (strcmp(argv[1], "mix") == 0) {
    fake_esp_log("{%s}\n", "a log line that looks like JSON");
    pthread_t threads[2 * kTasks];
    for (long t = 0; t < kTasks; ++t) {
      pthread_create(&threads[2 * t], nullptr, logger, reinterpret_cast<void*>(t));
      pthread_create(&threads[2 * t + 1], nullptr, sender, reinterpret_cast<void*>(t));
    }
    for (pthread_t& t : threads) {
      void* failed = nullptr;
      pthread_join(t, &failed);
      if (failed != nullptr) return 4;
    }
  }
  dump_uart();
  return 0;
}
