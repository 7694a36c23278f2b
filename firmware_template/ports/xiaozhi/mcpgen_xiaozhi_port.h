// mcpgen "xiaozhi" port: runs mcpgen typed tool handlers inside the stock xiaozhi-esp32
// firmware, registered with its own McpServer (main/mcp_server.h).
//
// The generated mcpgen_xiaozhi_tools.cc registers one stock McpTool per spec tool. Its
// callback reads the stock PropertyList into typed locals and calls call_tool(), which
// hands the arguments to the mcpgen core (mcpgen::Server over the generated kMcpSpec):
// the core checks them against the spec (ranges, enums, max_length, numbers), decodes them
// into the tool's generated <Camel>Args struct and calls the typed handler; call_tool()
// then turns the mcpgen::Result into the stock ReturnValue. A tool error (Result::Error),
// an argument the spec rejects, or a handler returning the wrong kind throws
// std::runtime_error, which the stock McpServer answers with a JSON-RPC error.
//
// Needs C++ exceptions (the stock firmware builds with them) and the stock firmware's
// cJSON and mbedtls (both already used by mcp_server.h).
#pragma once

#include <functional>
#include <string>

#include "mcp_server.h"
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

// Runs the spec tool `name` with the arguments `write_args` writes; `returns` is the
// spec's return kind. Returns the stock ReturnValue (see docs/xiaozhi.md for the
// mapping); throws std::runtime_error with the core's message on any failure.
ReturnValue call_tool(const char* name, ReturnKind returns, const ArgsWriter& write_args);

// A `number` parameter arrives as a stock string property (the stock Property has no
// number type). Parses the whole text with strtod; throws std::runtime_error naming the
// parameter when it is not a finite number. The spec's range is checked by the core.
double parse_number(const char* param, const std::string& text);

// The result of the generated `self.mcpgen.spec` tool:
// {"fingerprint":"<16 hex>","device":"<name>","version":"<version>"}.
ReturnValue spec_info();

// Where notifications a handler queued with Context::notify go: called with the complete
// JSON-RPC notification after the handler returned. Unset (the default): dropped. On the
// stock firmware: [](const std::string& m) { Application::GetInstance().SendMcpMessage(m); }
// (SendMcpMessage schedules the send, so it goes out after the tool's reply).
void set_notification_sink(std::function<void(const std::string&)> sink);

// The mcpgen core instance the handlers run in (e.g. for core().set_user_data(p), which
// handlers read with ctx.user_data()).
Server& core();

// `message` made safe for the stock McpServer::ReplyError, which pastes it into a JSON
// string without escaping: '"' -> '\'', '\\' -> '/', control characters -> ' '.
std::string reply_safe(const char* message);

}  // namespace xiaozhi
}  // namespace mcpgen
