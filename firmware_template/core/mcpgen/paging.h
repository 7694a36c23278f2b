// tools/list: one page of the tool list per request, in the spec's byte budget
// (SpecDesc::page_size), with an opaque cursor to the next page. Part of the Server (see
// server_impl.h).
#pragma once

#include <stddef.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"
#include "mcpgen/server_impl.h"

namespace mcpgen {

// The cursor is kCursorLen lowercase hex digits (== CURSOR_LEN in codegen/spec/mcp_json.py).
constexpr size_t kCursorLen = 12;

// The reply to tools/list (params.cursor, params.withUserTools) written into rq.out: its
// length.
size_t tools_list(Server& s, const ServerImpl::Request& rq, const json::Params& p);

}  // namespace mcpgen
