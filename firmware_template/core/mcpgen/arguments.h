// tools/call arguments: decoded from the request's `arguments` object into the tool's
// args struct and checked against its ParamDesc table (types, bounds, enums, lengths,
// required parameters, defaults). Part of the Server (see server_impl.h).
#pragma once

#include <stdint.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"
#include "mcpgen/server_impl.h"

namespace mcpgen {

enum class ArgsStatus : uint8_t { kOk, kInvalid, kDuplicate };

// Decodes and checks the arguments into storage (at least tool.args_size bytes); on a
// violation writes the message into m: kInvalid for a rule of the spec (a tool error
// result), kDuplicate for an argument given twice (-32602: the sender and the device
// could read different values). String arguments point into the request, unescaped in
// place.
ArgsStatus decode_args(const ToolDesc& tool, const json::Value& args, void* storage, Msg& m);

}  // namespace mcpgen
