// tools/call arguments: decoded from the request's `arguments` object into the tool's
// args struct and checked against its ParamDesc table (types, bounds, enums, lengths,
// required parameters, defaults). Part of the Server (see server_impl.h).
#pragma once

#include <stdint.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"
#include "mcpgen/server_impl.h"

namespace mcpgen {

enum class ArgsStatus : uint8_t { kOk, kInvalid, kDuplicate };

// Decodes and checks the arguments into storage (at least tool.args_size bytes); on a
// violation writes the message into m (empty when called): kInvalid for a rule of the spec (a tool error
// result), kDuplicate for an argument given twice (-32602: the sender and the device
// could read different values). String arguments point into the request, unescaped in
// place.
// The keys of one JSON object against a table of parameters, decoded into base: a tool's
// arguments (m empty), or the fields of a named type (m: the message's prefix so far).
ArgsStatus decode_fields(const ParamDesc* params, uint8_t count, const json::Value& obj, char* base, Msg& m);

// In line (the storage zeroed, then the tool's level of decode_fields): tools/call makes one
// call into arguments.cpp, as before named types, not two.
inline ArgsStatus decode_args(const ToolDesc& tool, const json::Value& args, void* storage, Msg& m) {
  memset(storage, 0, tool.args_size);
  return decode_fields(tool.params, tool.param_count, args, static_cast<char*>(storage), m);
}

}  // namespace mcpgen
