// mcpgen "xiaozhi" port: runs mcpgen typed tool handlers inside the stock xiaozhi-esp32
// firmware, registered with its own McpServer (main/mcp_server.h).
//
// Two layers, so that the logic builds like the rest of mcpgen (-fno-exceptions
// -fno-rtti) although the stock header cannot:
//
// * this header and mcpgen_xiaozhi_port.cc: no exceptions, no RTTI, and no dependency on
//   main/mcp_server.h. run_tool() hands one call's arguments to the mcpgen core
//   (mcpgen::Server over the generated kMcpSpec): the core checks them against the spec
//   (ranges, enums, max_length, numbers), decodes them into the tool's generated
//   <Camel>Args struct and calls the typed handler; run_tool() then reads the core's
//   reply into an Outcome (a value, or an error message).
// * mcpgen_xiaozhi_stock.h (included by the generated mcpgen_xiaozhi_tools.cc only): turns
//   an Outcome into the stock ReturnValue. The stock McpServer reports a failed tool only
//   when its callback throws, and main/mcp_server.h itself contains `throw` (upstream
//   builds with CONFIG_COMPILER_CXX_EXCEPTIONS=y), so that thin layer is where the one
//   throw lives; see docs/xiaozhi.md.
//
// Needs the stock firmware's cJSON and mbedtls (both already used by mcp_server.h).
#pragma once

#include <stddef.h>

#include <functional>
#include <string>

#include <cJSON.h>

#include "mcpgen/mcp_core.h"

// Reply buffer of one call of a tool returning an image (the base64 data is in it; heap,
// allocated per call). Other tools use MCPGEN_RESPONSE_BUFFER_SIZE.
#ifndef MCPGEN_XIAOZHI_IMAGE_REPLY_SIZE
#define MCPGEN_XIAOZHI_IMAGE_REPLY_SIZE (256 * 1024)
#endif

namespace mcpgen {
namespace xiaozhi {

// Writes the `arguments` members of one tools/call (key + value pairs). Called twice per
// call (once to measure, once to write): it must write the same thing both times.
using ArgsWriter = std::function<void(JsonWriter&)>;

// What one tool call produced, before it becomes a stock ReturnValue. Move-only: it owns
// `object` and `image`.
class Outcome {
 public:
  enum class Kind { kError, kBoolean, kInteger, kText, kObject, kImage };

  Outcome() = default;
  ~Outcome();
  Outcome(Outcome&& other) noexcept;
  Outcome& operator=(Outcome&& other) noexcept;
  Outcome(const Outcome&) = delete;
  Outcome& operator=(const Outcome&) = delete;

  static Outcome Error(std::string message);  // message made reply_safe
  static Outcome Boolean(bool v);
  static Outcome Integer(int v);
  static Outcome Text(std::string text);
  static Outcome Object(cJSON* object);  // takes ownership
  static Outcome Image(std::string mime_type, unsigned char* bytes, size_t size);  // takes malloc'd bytes

  Kind kind() const { return kind_; }
  bool ok() const { return kind_ != Kind::kError; }
  bool boolean() const { return boolean_; }
  int integer() const { return integer_; }
  // kError: the message; kText: the text; kImage: the MIME type.
  const std::string& text() const { return text_; }
  // kObject: the object; the caller owns it afterwards (nullptr otherwise).
  cJSON* release_object();
  // kImage: the decoded image bytes.
  const unsigned char* image_data() const { return image_; }
  size_t image_size() const { return image_size_; }
  // The notification a handler queued with Context::notify during the call ("" if none);
  // the stock layer hands it to the sink after the call.
  const std::string& notification() const { return notification_; }
  void set_notification(std::string n) { notification_ = std::move(n); }

 private:
  void reset();

  Kind kind_ = Kind::kError;
  bool boolean_ = false;
  int integer_ = 0;
  std::string text_;
  cJSON* object_ = nullptr;
  unsigned char* image_ = nullptr;
  size_t image_size_ = 0;
  std::string notification_;
};

// Runs the spec tool `name` with the arguments `write_args` writes; `returns` is the
// spec's return kind (see docs/xiaozhi.md for how each kind maps to the stock result).
// Never throws; a tool error, an argument the spec rejects, a handler returning the
// wrong kind or a failed allocation is an Outcome of kind kError.
Outcome run_tool(const char* name, ReturnKind returns, const ArgsWriter& write_args);

// A `number` parameter arrives as a stock string property (the stock Property has no
// number type). Parses the whole text with strtod into *out; on failure (not a finite
// number) returns false and sets *error to a message naming the parameter. The spec's
// range is checked by the core.
bool parse_number(const char* param, const std::string& text, double* out, std::string* error);

// The result of the generated `self.mcpgen.spec` tool (caller owns it):
// {"fingerprint":"<16 hex>","device":"<name>","version":"<version>"}.
cJSON* spec_info_json();

// Where the device's own messages go: notifications a handler queued with
// Context::notify (after the handler returned) and the spec's events
// (mcpgen::events::emit_<name>, from any task), each as one complete JSON-RPC
// notification. On the stock firmware:
//   [](const std::string& m) { Application::GetInstance().SendMcpMessage(m); }
// (SendMcpMessage queues the send on the main task under a mutex, safe from any task).
// Unset (the default): notifications are dropped and every emitter returns kNoPeer.
void set_notification_sink(std::function<void(const std::string&)> sink);

// The sink set with set_notification_sink (a copy; empty when unset).
std::function<void(const std::string&)> notification_sink();

// The mcpgen core instance the handlers run in (e.g. for core().set_user_data(p), which
// handlers read with ctx.user_data()).
Server& core();

// The lock around every use of the core (tool calls, events). Recursive: a handler may
// emit an event while its call holds it. Used by the event outlet of the stock layer.
void lock_core();
void unlock_core();

// `message` made safe for the stock McpServer::ReplyError, which pastes it into a JSON
// string without escaping: '"' -> '\'', '\\' -> '/', control characters -> ' '.
std::string reply_safe(const char* message);

// What the stock McpServer::AddCommonTools / AddUserOnlyTools look at before registering a
// tool that only some boards have (main/mcp_server.cc): the board's backlight, camera and
// LVGL display. `known` false means the glue was not told (mcpgen_register_tools(server)):
// then every stock name is taken to be registered by the stock firmware.
struct StockBoard {
  bool known = false;
  bool backlight = false;
  bool camera = false;
  bool lvgl_display = false;
};

// Whether the stock firmware registers a tool named `name` itself on `board`: false for a
// name it does not register at all, and for self.screen.set_brightness on a board without
// a backlight, self.camera.take_photo without a camera, the self.screen.* tools without an
// LVGL display. The generated glue registers the spec's tool of such a name only when this
// is false (or when built with MCPGEN_XIAOZHI_REGISTER_STOCK_NAMES=1).
bool stock_registers(const StockBoard& board, const char* name);

}  // namespace xiaozhi
}  // namespace mcpgen
