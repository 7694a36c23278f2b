// Device resources declared in the spec's `resources:` section: MCP resources/list,
// resources/templates/list and resources/read. The generated mcp_tools.h declares one
// typed handler per resource,
//
//   mcpgen::ReadStatus resources::read_status(mcpgen::ResourceWriter& out, mcpgen::Context& ctx);
//   mcpgen::ReadStatus resources::read_log(const ResourceArgs_log& args, mcpgen::ResourceWriter& out,
//                                          mcpgen::Context& ctx);
//
// (template variables decoded and checked like tool arguments). The handler writes the
// content with ResourceWriter: text is JSON-escaped, bytes are base64-encoded, both
// straight into the reply buffer (no heap, no second buffer). No libc formatting.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcpgen/events.h"
#include "mcpgen/mcp_core.h"

namespace mcpgen {

enum class ReadStatus : uint8_t {
  kOk,
  kNotFound,  // no such instance (e.g. a log day with no data): MCP error -32002
  kFailed,  // the device could not read it now: -32603
};

// Where a resource handler writes its content (text or bytes, by the spec's `content`).
// Call text() for a text resource, bytes() for a binary one (the other kind is refused
// and the read fails with -32603). Text chunks must hold whole UTF-8 characters (a
// character cut between two calls becomes U+FFFD). Content beyond the spec's max_size,
// or beyond the reply buffer, fails the read with a short error carrying the id.
class ResourceWriter {
 public:
  ResourceWriter(const ResourceWriter&) = delete;
  ResourceWriter& operator=(const ResourceWriter&) = delete;
  void text(const char* s) { text(s, s != nullptr ? strlen(s) : 0); }
  void text(const char* s, size_t n);
  void bytes(const void* data, size_t n);
  size_t size() const { return size_; }  // content bytes written so far (before encoding)

 private:
  friend struct ResourceImpl;
  ResourceWriter(JsonWriter& w, bool binary, uint32_t max_size) : w_(w), max_size_(max_size), binary_(binary) {}
  void finish();
  JsonWriter& w_;
  uint32_t max_size_;  // 0: no bound
  size_t size_ = 0;
  bool binary_;
  bool wrong_kind_ = false;
  bool too_large_ = false;
  uint8_t pending_n_ = 0;  // bytes waiting for a whole base64 group of 3
  uint8_t pending_[2] = {0, 0};
};

// Generated thunk: casts `args` to the resource's struct and calls the typed handler.
typedef ReadStatus (*ReadFn)(const void* args, ResourceWriter& out, Context& ctx);

struct ResourceDesc {
  const char* name;  // the spec's key
  const char* uri;  // the fixed URI, or the RFC 6570 level 1 template
  const char* mime_type;
  const char* list_entry;  // exact resources/list (or templates/list) JSON object
  uint16_t list_entry_len;
  bool is_template;
  bool binary;
  bool subscribe;  // the spec's `subscribe: true`: resources/subscribe accepted
  uint32_t max_size;  // bytes of content; 0: no bound
  const ParamDesc* params;  // the template's variables, sorted by name
  uint8_t param_count;
  ReadFn read;
};

namespace json {
struct Value;
struct Params;
}  // namespace json

// resources_request's type: the server reaches the resources code only through the
// table's pointers, so a spec without resources does not link it (about 4.9 KB of
// Cortex-M3 text).
typedef int (*ResourceRequestFn)(const SpecDesc& spec, const json::Value& method, const json::Params& params,
                                 JsonWriter& w, Context& ctx, char* msg, size_t msg_cap, size_t* msg_len);

// resource_embed's type: a tool result that carries one of the resources (`returns:
// resource`, or a resource item of a list) reaches it through the table like the rest.
typedef int (*ResourceEmbedFn)(const SpecDesc& spec, const char* uri, JsonWriter& w, Context& ctx, char* msg,
                               size_t msg_cap, size_t* msg_len);

struct ResourceTable {
  const ResourceDesc* resources;  // in the spec's order
  uint16_t count;
  uint16_t fixed_count;  // how many have a fixed URI (resources/list)
  bool any_subscribe;  // initialize announces resources.subscribe
  void* args_storage;  // aligned, at least as large as the largest args struct
  ResourceRequestFn request;  // &resource_request
  void (*reset)();  // &resource_subscriptions_reset
  ResourceEmbedFn embed;  // &resource_embed
};

// Tells a subscribed client that the resource at `uri` changed: sends
// {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"<uri>"}}
// through the port's event outlet (mcpgen/events.h: any task, under the port's lock).
// Returns kNoPeer (nothing sent) when no client subscribed to a resource matching `uri`
// on this connection, kInvalidArgument when `uri` is no resource of the spec.
EventStatus resource_updated(const char* uri);

// Called by the server (mcp_server.cpp), through the table, for the resources/* methods:
// writes `,"result":<value>` into w; on failure returns the JSON-RPC error code and leaves
// its whole message (prefix included) in msg[0, *msg_len). `params` are the members the
// request walk located (json::Params: uri, cursor).
void resource_subscriptions_reset();  // per connection (Server::reset_connection)
int resource_request(const SpecDesc& spec, const json::Value& method, const json::Params& params, JsonWriter& w,
                     Context& ctx, char* msg, size_t msg_cap, size_t* msg_len);
// Writes the MCP content item {"type":"resource","resource":{"uri","mimeType","text"|"blob"}}
// of the resource at `uri` (its handler called like for resources/read); on failure returns
// the JSON-RPC error code and leaves its message in msg[0, *msg_len).
int resource_embed(const SpecDesc& spec, const char* uri, JsonWriter& w, Context& ctx, char* msg, size_t msg_cap,
                   size_t* msg_len);

}  // namespace mcpgen
