// mcpgen "xiaozhi" port, stock side: turns the Outcome of mcpgen_xiaozhi_port.h into the
// stock McpServer's ReturnValue (main/mcp_server.h). Included by the generated
// mcpgen_xiaozhi_tools.cc only.
//
// The stock McpServer (McpServer::DoToolCall) answers a failed tool with a JSON-RPC error
// only when the tool's callback throws a std::exception; there is no other way to report a
// failure through it. So this is the one place of the glue that throws. It compiles with
// the stock firmware's own settings: main/mcp_server.h contains `throw` itself and needs
// C++ exceptions (upstream sdkconfig.defaults sets CONFIG_COMPILER_CXX_EXCEPTIONS=y). It
// needs no RTTI. Everything else (mcpgen_xiaozhi_port.cc, the core, the generated tables
// and your handlers) builds with -fno-exceptions -fno-rtti.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "mcp_server.h"
#include "mcpgen/events.h"
#include "mcpgen_xiaozhi_port.h"

#if !defined(__cpp_exceptions)
#error \
    "The stock xiaozhi McpServer reports tool errors only through C++ exceptions and its main/mcp_server.h throws: build the firmware with CONFIG_COMPILER_CXX_EXCEPTIONS=y, as upstream's sdkconfig.defaults does"
#endif

namespace mcpgen {
namespace xiaozhi {

// An Outcome as the stock ReturnValue; throws std::runtime_error with the message of an
// error (already made safe for the stock ReplyError, which does not escape it).
inline ReturnValue to_stock(Outcome&& outcome) {
  switch (outcome.kind()) {
    case Outcome::Kind::kError: throw std::runtime_error(outcome.text());
    case Outcome::Kind::kBoolean: return outcome.boolean();
    case Outcome::Kind::kInteger: return outcome.integer();
    case Outcome::Kind::kText: return outcome.text();
    case Outcome::Kind::kObject: return outcome.release_object();  // the stock McpTool::Call deletes it
    case Outcome::Kind::kImage:
      return new ImageContent(outcome.text(),
                              std::string(reinterpret_cast<const char*>(outcome.image_data()), outcome.image_size()));
  }
  throw std::runtime_error("internal error: unknown outcome");
}

// Runs the spec tool `name` (see run_tool), hands a queued notification to the sink, and
// returns the stock ReturnValue; throws std::runtime_error on any failure.
inline ReturnValue call_tool(const char* name, ReturnKind returns, const ArgsWriter& write_args) {
  Outcome outcome = run_tool(name, returns, write_args);
  if (!outcome.notification().empty()) {
    std::function<void(const std::string&)> sink = notification_sink();
    if (sink) {
      try {
        sink(outcome.notification());
      } catch (const std::exception&) {
        // A failing sink loses the notification, never the tool's result.
      }
    }
  }
  return to_stock(std::move(outcome));
}

// A `number` parameter's stock string property as a double; throws std::runtime_error
// naming the parameter when it is not a finite number.
inline double parse_number(const char* param, const std::string& text) {
  double value = 0;
  std::string error;
  if (!parse_number(param, text, &value, &error)) throw std::runtime_error(error);
  return value;
}

// The result of the generated `self.mcpgen.spec` tool.
inline ReturnValue spec_info() { return spec_info_json(); }

// Sends the spec's events (mcpgen::events::emit_<name>) through the notification sink,
// i.e. Application::SendMcpMessage on the stock firmware, which wraps them in the
// session's envelope. Defined here, in the unit built with exceptions, so that a sink
// that throws is caught before it could unwind through the core (built without them).
class SinkEventOutlet final : public EventOutlet {
 public:
  void lock() override { lock_core(); }
  void unlock() override { unlock_core(); }
  EventStatus send_locked(const char* data, size_t len) override {
    std::function<void(const std::string&)> sink = notification_sink();
    if (!sink) return EventStatus::kNoPeer;  // set_notification_sink was never called
    try {
      sink(std::string(data, len));
    } catch (const std::exception&) {
      return EventStatus::kSendFailed;
    }
    return EventStatus::kSent;
  }
};

// Installs the outlet above for the core the handlers run in (mcpgen_register_tools does).
inline void install_event_outlet() {
  static SinkEventOutlet outlet;
  set_event_outlet(&core(), &outlet);
}

}  // namespace xiaozhi
}  // namespace mcpgen
