// The serial transport of the ESP-IDF port (Kconfig "Transport to the backend" = Serial):
// MCP over the USB cable with no network, in the stdio framing of the MCP spec: one JSON
// message per line each way (bare JSON-RPC; the host's `codegen bridge --serial PORT` or
// `runtime.connect_serial` sends initialize, so the device says no hello). The port is
// UART0 or USB-Serial-JTAG (Kconfig "Serial"); lines are framed by the core's LineReader.
//
// Keeping the device's log apart from the MCP stream (docs/firmware.md, "Serial
// transport"): MCP lines are JSON objects, so they start with '{'; the host side treats
// every other line (boot ROM output, ESP_LOG lines) as log. When the console shares the
// MCP port, ESP_LOG output is taken over (esp_log_set_vprintf): each log line is collected
// whole and written through the same driver and under the same lock as the MCP replies,
// so a log line can never land inside an MCP line (nor start with '{'). When the console
// is on another port, the log stays there and never touches the MCP port.
#include "esp_port.h"

#if CONFIG_MCPGEN_TRANSPORT_SERIAL

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "esp_log.h"
#include "esp_system.h"
#include "freertos/FreeRTOS.h"
#include "freertos/semphr.h"
#include "freertos/task.h"
#include "mcpgen/line_reader.h"

#if CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG
#include "driver/usb_serial_jtag.h"
#else
#include "driver/uart.h"
#endif

namespace mcpgen_esp {
namespace {

const char* const kTag = "mcpgen-serial";

#if CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG
#if defined(CONFIG_ESP_CONSOLE_USB_SERIAL_JTAG) || defined(CONFIG_ESP_CONSOLE_SECONDARY_USB_SERIAL_JTAG)
constexpr bool kSharesConsole = true;
#else
constexpr bool kSharesConsole = false;
#endif
#else
#if defined(CONFIG_ESP_CONSOLE_UART) && CONFIG_ESP_CONSOLE_UART_NUM == 0
constexpr bool kSharesConsole = true;
#else
constexpr bool kSharesConsole = false;
#endif
constexpr uart_port_t kUart = UART_NUM_0;
#endif

#if CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG
const char* const kPortName = "USB-Serial-JTAG";
#else
const char* const kPortName = "UART0";
#endif
constexpr int kRxBufferSize = 512;
constexpr int kTxBufferSize = 512;  // USB-Serial-JTAG only: the UART driver writes into the FIFO

// One lock for everything written to the port: MCP replies and events (worker task, any
// task through the event outlet) and, when shared, log lines.
SemaphoreHandle_t g_port_lock;
// The line being received; its complete lines are handed to the worker through the
// port's receive slots (esp_port.h), so the next line is read while one is handled.
char g_line[MCPGEN_REQUEST_BUFFER_SIZE];

// --- the driver (nothing else writes to the port) ---

bool driver_install() {
#if CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG
  usb_serial_jtag_driver_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.tx_buffer_size = kTxBufferSize;
  cfg.rx_buffer_size = kRxBufferSize;
  return usb_serial_jtag_driver_install(&cfg) == ESP_OK;
#else
  uart_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.baud_rate = CONFIG_MCPGEN_SERIAL_BAUD;
  cfg.data_bits = UART_DATA_8_BITS;
  cfg.parity = UART_PARITY_DISABLE;
  cfg.stop_bits = UART_STOP_BITS_1;
  cfg.flow_ctrl = UART_HW_FLOWCTRL_DISABLE;
  cfg.source_clk = UART_SCLK_DEFAULT;
  // No TX ring buffer: uart_write_bytes returns once the bytes are in the FIFO, in order.
  return uart_driver_install(kUart, kRxBufferSize * 2, 0, 0, nullptr, 0) == ESP_OK &&
         uart_param_config(kUart, &cfg) == ESP_OK;
#endif
}

int driver_read(char* buf, size_t cap) {
#if CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG
  return usb_serial_jtag_read_bytes(buf, static_cast<uint32_t>(cap), portMAX_DELAY);
#else
  // uart_read_bytes waits for all `cap` bytes: wait for one, then take what has arrived.
  int n = uart_read_bytes(kUart, buf, 1, portMAX_DELAY);
  size_t more = 0;
  if (n == 1 && uart_get_buffered_data_len(kUart, &more) == ESP_OK && more > 0) {
    const int m = uart_read_bytes(kUart, buf + 1, static_cast<uint32_t>(more < cap - 1 ? more : cap - 1), 0);
    if (m > 0) n += m;
  }
  return n;
#endif
}

// `wait`: how long USB-Serial-JTAG may wait for room (no host reading: its buffer stays full).
bool driver_write(const char* data, size_t len, TickType_t wait) {
  while (len > 0) {
#if CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG
    const int n = usb_serial_jtag_write_bytes(data, len, wait);
#else
    (void)wait;  // the UART drains at its baud rate whether anyone listens or not
    const int n = uart_write_bytes(kUart, data, len);
#endif
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// --- ESP_LOG on the shared port: whole lines, under the port lock ---

constexpr TickType_t kReplyWait = pdMS_TO_TICKS(1000);
constexpr TickType_t kLogWait = pdMS_TO_TICKS(10);  // a log line is dropped rather than held up

char g_log_line[256];  // the log line being collected (port lock held)
size_t g_log_len;

void write_log_line(const char* line, size_t len) {
  if (line[0] == '{') driver_write("# ", 2, kLogWait);  // an MCP line starts with '{': a log line never does
  driver_write(line, len, kLogWait);
}

// ESP-IDF may hand one log line over in several pieces (the level, the timestamp, the
// message): they are collected in g_log_line and each line is written once its newline
// came (a longer one is cut at the buffer's size).
int log_vprintf(const char* fmt, va_list ap) {
  if (g_port_lock == nullptr || xPortInIsrContext()) return 0;
  // A log made while this task writes to the port (a driver error) would wait for itself.
  if (xSemaphoreGetMutexHolder(g_port_lock) == xTaskGetCurrentTaskHandle()) return 0;
  xSemaphoreTake(g_port_lock, portMAX_DELAY);
  const size_t was = g_log_len;
  // At most sizeof - 1 bytes in all: the last byte is for the newline of a line cut short.
  const int n = vsnprintf(g_log_line + was, sizeof g_log_line - was, fmt, ap);
  size_t len = was;
  if (n > 0) {
    const size_t took = static_cast<size_t>(n);  // what vsnprintf wanted; it stored less when cut
    len += took < sizeof g_log_line - was ? took : sizeof g_log_line - was - 1;
  }
  size_t start = 0;
  for (size_t i = was; i < len; ++i) {
    if (g_log_line[i] != '\n') continue;
    write_log_line(g_log_line + start, i + 1 - start);
    start = i + 1;
  }
  len -= start;
  memmove(g_log_line, g_log_line + start, len);
  if (len == sizeof g_log_line - 1) {  // full without a newline: written as a line of its own
    g_log_line[len++] = '\n';
    write_log_line(g_log_line, len);
    len = 0;
  }
  g_log_len = len;
  xSemaphoreGive(g_port_lock);
  return n;
}

// --- the reader task ---

void deliver(const char* line, size_t len, bool oversized) {
  if (rx_begin() < 0) return;  // no receive slot came free: rx_begin logged the drop
  rx_append(line, len);
  // An oversized line keeps its first bytes (the core answers with its id): one byte more
  // than the slot takes marks the message oversized in rx_append.
  if (oversized) rx_append("", 1);
  rx_end();
}

void reader_task(void*) {
  mcpgen::LineReader lines(g_line, sizeof g_line);
  char chunk[128];
  post_connected();  // the link is the cable: it is up from the start
  for (;;) {
    const int r = driver_read(chunk, sizeof chunk);
    if (r <= 0) continue;
    size_t at = 0;
    while (at < static_cast<size_t>(r)) {
      size_t used = 0;
      const mcpgen::LineReader::Event ev = lines.feed(chunk + at, static_cast<size_t>(r) - at, &used);
      at += used;
      if (ev != mcpgen::LineReader::Event::kNone) {
        deliver(lines.data(), lines.size(), ev == mcpgen::LineReader::Event::kOversized);
      }
    }
  }
}

}  // namespace

const char* transport_name() { return "serial"; }

bool transport_start() {
  g_port_lock = xSemaphoreCreateMutex();
  if (g_port_lock == nullptr || !driver_install()) {
    ESP_LOGE(kTag, "could not install the %s driver", kPortName);
    return false;
  }
  // The heap figures at startup (after the driver took its buffers, before the reader task
  // took its stack): what a board owner compares between builds and against a later log.
  ESP_LOGI(kTag, "MCP on %s: one JSON message per line; free heap %u bytes (minimum %u)", kPortName,
           static_cast<unsigned>(esp_get_free_heap_size()), static_cast<unsigned>(esp_get_minimum_free_heap_size()));
  if (kSharesConsole) esp_log_set_vprintf(log_vprintf);
  return xTaskCreate(reader_task, "mcpgen-serial", 4096, nullptr, 5, nullptr) == pdPASS;
}

bool transport_send(const char* data, size_t len) {
  if (g_port_lock == nullptr) return false;
  xSemaphoreTake(g_port_lock, portMAX_DELAY);
  const bool ok = driver_write(data, len, kReplyWait) && driver_write("\n", 1, kReplyWait);
  xSemaphoreGive(g_port_lock);
  return ok;
}

void transport_connected() {}

// The host opens the session with initialize (the stdio framing has no hello).
size_t transport_hello(mcpgen::Server&, char*, size_t) { return 0; }

Verdict transport_begin_message(uint8_t, char*, size_t, const char*) { return Verdict::kDeliver; }

void transport_end_message() {}

bool transport_session_ended() { return false; }

}  // namespace mcpgen_esp

#endif  // CONFIG_MCPGEN_TRANSPORT_SERIAL
