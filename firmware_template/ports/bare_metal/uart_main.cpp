// The main loop of the bare-metal UART ports (qemu_mps2, qemu_riscv_virt).
//
// The MCP UART carries the MCP stream with the stdio framing: one JSON message per line
// (bare JSON-RPC or the xiaozhi envelope), replies and device notifications likewise,
// nothing else. A line that does not fit the request buffer (MCPGEN_REQUEST_BUFFER_SIZE
// bytes including the core's NUL, so at most SIZE-1 bytes of text, as on the host
// simulator) is discarded up to its newline and answered with Server::oversized_reply.
// The debug console (board::log) gets a boot banner and, after every message, the stack and
// heap high-water marks:
//   mcpgen: msg 3 in 57 out 812 stack_hwm 1432/16384 heap 0
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "mcp_tools.h"
#include "mcpgen/events.h"
#include "mcpgen/line_reader.h"
#include "mcpgen/session.h"

namespace {

char g_request[MCPGEN_REQUEST_BUFFER_SIZE];
char g_response[MCPGEN_RESPONSE_BUFFER_SIZE];
mcpgen::Server g_server(kMcpSpec);

class UartLink : public mcpgen::Link {
 public:
  bool send(const char* data, size_t len) override {
    board::mcp_write(data, len);
    board::mcp_write("\n", 1);
    sent_ += len + 1;
    return true;
  }
  size_t sent_ = 0;
};

// Spec events leave on the MCP UART like replies. One task (the main loop, and the
// handlers it calls): the lock has nothing to exclude.
class UartEventOutlet : public mcpgen::EventOutlet {
 public:
  explicit UartEventOutlet(UartLink& link) : link_(link) {}
  void lock() override {}
  void unlock() override {}
  mcpgen::EventStatus send_locked(const char* data, size_t len) override {
    link_.send(data, len);
    return mcpgen::EventStatus::kSent;
  }

 private:
  UartLink& link_;
};

void report(uint32_t seq, size_t in_len, size_t out_len) {
  board::log("mcpgen: msg ");
  board::log_uint(seq);
  board::log(" in ");
  board::log_uint(in_len);
  board::log(" out ");
  board::log_uint(out_len);
  board::log(" stack_hwm ");
  board::log_uint(board::stack_high_water());
  board::log("/");
  board::log_uint(board::stack_size());
  board::log(" heap ");
  board::log_uint(board::heap_used());
  board::log("\n");
}

// Logs the vision endpoint the client announced in initialize, once per change (the
// same console line as the host simulator).
void log_vision_change() {
  static char last[MCPGEN_VISION_URL_SIZE] = "";
  const mcpgen::VisionConfig& v = g_server.vision();
  if (v.present && strcmp(last, v.url) != 0) {
    strncpy(last, v.url, sizeof last - 1);
    board::log("mcpgen: vision configured: url=");
    board::log(v.url);
    board::log(" token=");
    board::log_uint(strlen(v.token));
    board::log(" chars\n");
  }
}

void banner() {
  const mcpgen::SpecDesc& spec = g_server.spec();
  board::log("mcpgen: boot ");
  board::log(spec.device_name);
  board::log(" ");
  board::log(spec.device_version);
  board::log(" fingerprint ");
  board::log(spec.fingerprint);
  board::log(" tools ");
  board::log_uint(spec.tool_count);
  board::log(" stack ");
  board::log_uint(board::stack_size());
  board::log(" heap_avail ");
  board::log_uint(board::heap_size());
  board::log(" request_buffer ");
  board::log_uint(sizeof g_request);
  board::log(" stack_hwm ");
  board::log_uint(board::stack_high_water());
  board::log("\n");
}

}  // namespace

int main() {
  UartLink link;
  mcpgen::Session session(g_server, link, g_response, sizeof g_response);
// Else the core's event buffers (about 1 KB of RAM) are not linked.
#if MCPGEN_SPEC_EVENT_COUNT > 0 || MCPGEN_SPEC_RESOURCE_UPDATES > 0
  UartEventOutlet events(link);
  mcpgen::set_event_outlet(&g_server, &events);
#endif
  banner();

  uint32_t seq = 0;
  mcpgen::LineReader lines(g_request, sizeof g_request);
  for (;;) {
    const mcpgen::LineReader::Event ev = lines.push(board::mcp_read());
    if (ev == mcpgen::LineReader::Event::kNone) continue;
    size_t in_len = lines.size();
    link.sent_ = 0;
    if (ev == mcpgen::LineReader::Event::kOversized) {
      in_len = sizeof g_request;
      session.on_oversized(lines.data(), lines.size());
    } else {
      session.on_message(lines.data(), in_len);
      log_vision_change();
    }
    report(++seq, in_len, link.sent_);
  }
}
