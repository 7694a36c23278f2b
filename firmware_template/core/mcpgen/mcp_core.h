// mcpgen portable MCP server core: the descriptor tables that generated code fills in,
// and the API ports call. Plain C++17: no ESP-IDF, FreeRTOS or POSIX includes, no
// exceptions, no RTTI, no heap on the request path.
#pragma once

#include <stddef.h>
#include <stdint.h>

// Bumped whenever the layout of the descriptor structs below changes. Every generated
// mcp_tools.h checks it and refuses to compile against a different core.
#define MCPGEN_CORE_VERSION 6

// The xiaozhi protocol version a device announces, in the `Protocol-Version` handshake
// header and in its hello (the reference firmware sends the same number in both).
#ifndef MCPGEN_XIAOZHI_PROTOCOL_VERSION
#define MCPGEN_XIAOZHI_PROTOCOL_VERSION 1
#endif

// Build-time buffer sizes (override with -D). A request line longer than
// MCPGEN_REQUEST_BUFFER_SIZE is answered with an error, never truncated.
#ifndef MCPGEN_REQUEST_BUFFER_SIZE
#define MCPGEN_REQUEST_BUFFER_SIZE 4096
#endif
#ifndef MCPGEN_RESPONSE_BUFFER_SIZE
#define MCPGEN_RESPONSE_BUFFER_SIZE 10240
#endif
// Scratch space handlers use for text and object results.
#ifndef MCPGEN_SCRATCH_SIZE
#define MCPGEN_SCRATCH_SIZE 2048
#endif
#ifndef MCPGEN_SESSION_ID_SIZE
#define MCPGEN_SESSION_ID_SIZE 64
#endif
#ifndef MCPGEN_VISION_URL_SIZE
#define MCPGEN_VISION_URL_SIZE 256
#endif
#ifndef MCPGEN_VISION_TOKEN_SIZE
#define MCPGEN_VISION_TOKEN_SIZE 256
#endif
// Room for one device notification queued by a handler with Context::notify
// (method + params JSON, NUL-terminated each).
#ifndef MCPGEN_NOTIFY_SIZE
#define MCPGEN_NOTIFY_SIZE 256
#endif
// Most content items one tool result may carry (`returns: [text, image, ...]`; the
// generated tables check the spec's longest list against it at compile time). Each is
// 16 bytes of the Context on a 32-bit MCU.
#ifndef MCPGEN_CONTENT_ITEMS
#define MCPGEN_CONTENT_ITEMS 4
#endif
// Maximum nesting depth of an incoming JSON message (deeper: -32700).
#ifndef MCPGEN_JSON_MAX_DEPTH
#define MCPGEN_JSON_MAX_DEPTH 32
#endif

namespace mcpgen {

enum class ParamType : uint8_t { kBoolean, kInteger, kNumber, kString, kObject };

struct ObjectDesc;
// kAudio, kResource and kContent (several items) are the rich content kinds: their items
// are kept by the Context (ContentItems) and written by content.cpp. As an item kind,
// kString is a text item.
enum class ReturnKind : uint8_t {
  kNone,
  kBoolean,
  kInteger,
  kNumber,
  kString,
  kObject,
  kImage,
  kAudio,
  kResource,
  kContent
};

// One argument of a tool. The decoded value is stored at `offset` inside the tool's
// generated args struct: bool for kBoolean, int64_t for kInteger, double for kNumber,
// const char* (NUL-terminated, pointing into the request buffer, unescaped in place)
// for kString, the named type's generated struct for kObject (always required).
struct ParamDesc {
  const char* name;
  ParamType type;
  bool required;  // false when the spec gives a default
  uint16_t offset;
  bool has_min;
  bool has_max;
  int64_t int_min;  // kInteger bounds (inclusive)
  int64_t int_max;
  double num_min;  // kNumber bounds (inclusive)
  double num_max;
  uint32_t max_length;  // kString: max length in Unicode code points; 0 = unlimited
  const char* const* enum_values;  // kString: allowed values, or nullptr
  uint16_t enum_count;
  // Default, used when the argument is absent (only the field of `type` is meaningful).
  bool default_bool;
  int64_t default_int;
  double default_num;
  const char* default_str;
  const ObjectDesc* object;  // kObject: the named type (the spec's `types:`), else nullptr
};

// A named object type of the spec (`types:`): its fields are checked like a tool's
// parameters (unknown keys refused at every level), stored at their offsets in its struct.
struct ObjectDesc {
  const char* name;
  const ParamDesc* fields;
  uint8_t field_count;
};

class Context;
class Result;
class Server;
class ContentItems;
struct ServerImpl;
struct ResourceTable;  // mcpgen/resources.h

// Generated thunk: casts `args` to the tool's struct and calls the typed handler.
typedef Result (*InvokeFn)(const void* args, Context& ctx);

struct ToolDesc {
  const char* name;
  const char* list_entry;  // exact tools/list JSON object of this tool
  uint16_t list_entry_len;
  bool user_only;
  ReturnKind returns;
  const ParamDesc* params;
  uint8_t param_count;
  uint16_t args_size;  // sizeof the args struct
  InvokeFn invoke;
};

// The layout is checked at compile time (mcp_tools.h's MCPGEN_CORE_VERSION test), so the
// tables carry no version of their own.
struct SpecDesc {
  const char* device_name;  // serverInfo.name
  const char* device_version;  // serverInfo.version
  const char* protocol_version;  // the device's own MCP protocol version
  const char* fingerprint;  // spec fingerprint, reported in initialize's _meta
  uint32_t page_size;  // max bytes of one tools/list `result` object
  const ToolDesc* tools;
  uint16_t tool_count;
  const uint16_t* by_name;  // tool indices sorted by name (UTF-8 bytes): binary search
  void* args_storage;  // aligned buffer at least as large as the largest args struct
  uint16_t args_storage_size;
  // The spec's `device.errors: jsonrpc`: arguments that break the spec are answered with
  // a JSON-RPC error -32602 carrying the same message, instead of a tool result with
  // isError: true (what stock xiaozhi backends show the model; docs/xiaozhi.md).
  bool jsonrpc_argument_errors;
  // The spec's `resources:` (mcpgen/resources.h); nullptr when it declares none.
  const ResourceTable* resources;
};

// Minimal streaming JSON writer over a fixed buffer. Never writes past `cap`; once
// full it sets overflowed() and ignores further writes. Strings are always escaped
// (control characters as \u00XX, invalid UTF-8 replaced by U+FFFD). Numbers: integers
// exactly, doubles as the shortest text that round-trips (non-finite -> null).
// JsonWriter(nullptr, 0) only measures: size() grows, nothing is stored, never overflows.
class JsonWriter {
 public:
  JsonWriter(char* buf, size_t cap);
  void reset(char* buf, size_t cap);
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(const char* k);  // writes "k": (with the comma when needed)
  void string(const char* s);
  void string(const char* s, size_t len);
  void integer(int64_t v);
  void number(double v);
  void boolean(bool v);
  void null();
  void raw(const char* json, size_t len);  // pre-serialized JSON value
  void raw_fragment(const char* text, size_t len);  // bytes as is, no comma logic
  // Inline: called around every reply; a call costs more flash than the load.
  size_t size() const { return len_; }
  bool overflowed() const { return overflow_; }
  const char* data() const { return buf_; }

 private:
  friend struct ServerImpl;  // writes replies as raw fragments around escaped strings
  friend class ResourceWriter;  // streams resource text (escaped) and base64 into the reply
  friend struct ResourceImpl;  // resources/* replies, written like ServerImpl's
  friend struct ContentImpl;  // audio (base64 as it is written) and embedded resources
  void comma();
  void put(const char* s, size_t n);
  void escaped(const char* s, size_t len);  // s JSON-escaped, without the quotes
  char* buf_;
  size_t cap_;
  size_t len_;
  bool overflow_;
  bool need_comma_;
};

struct VisionConfig {
  bool present;
  char url[MCPGEN_VISION_URL_SIZE];
  char token[MCPGEN_VISION_TOKEN_SIZE];
};

// The content items of one result (`returns: audio`, `returns: resource`, or a list such
// as `returns: [text, image, resource]`), kept by the Context until the reply is written:
// the core writes each straight into the reply buffer (audio bytes base64-encoded as they
// are written, an embedded resource read by its resource handler there and then), so no
// item is copied and nothing is allocated. Pointers must stay valid until the reply is
// written (like Result's). Items beyond MCPGEN_CONTENT_ITEMS fail the call (-32603).
//
//   mcpgen::ContentItems& items = ctx.items();
//   items.text(summary).image("image/png", kIconBase64).resource("lamp://status");
//   return mcpgen::Result::Items(ctx);
class ContentItems {
 public:
  ContentItems(const ContentItems&) = delete;
  ContentItems& operator=(const ContentItems&) = delete;
  ContentItems& text(const char* s);  // {"type":"text"}, JSON-escaped
  ContentItems& image(const char* mime_type, const char* base64_data);  // data already base64
  ContentItems& image(const char* mime_type, const void* bytes, size_t size);  // raw bytes: encoded here
  ContentItems& audio(const char* mime_type, const void* bytes, size_t size);  // raw bytes: encoded here
  ContentItems& resource(const char* uri);  // one of the spec's resources (a template's instance too)
  uint8_t count() const { return count_; }

 private:
  friend class Context;
  friend class Result;
  friend class Server;
  friend struct ServerImpl;
  friend struct ContentImpl;
  ContentItems() = default;
  ContentItems& add(ReturnKind kind, const char* a, const void* p, size_t n, bool bytes);
  struct Item {
    ReturnKind kind;  // kString (text), kImage, kAudio or kResource
    bool bytes;  // p holds n raw bytes (base64-encoded when written), else base64 text
    const char* a;  // the text, the MIME type or the URI
    const void* p;  // image: base64 text or bytes; audio: the bytes
    size_t n;  // bytes: their count
  };
  Item items_[MCPGEN_CONTENT_ITEMS];
  uint8_t count_ = 0;
  bool too_many_ = false;
  // The spec's list for the tool being called (set by its generated thunk), checked when
  // the result is written.
  const ReturnKind* declared_ = nullptr;
  uint8_t declared_count_ = 0;
  const SpecDesc* spec_ = nullptr;  // set once by the Server: its resources
  Context* ctx_ = nullptr;  // the owner, handed to resource handlers
  // content.cpp's writer and error reply, set by the calls that make a rich result: the
  // server reaches content.cpp only through them, so a firmware whose handlers return no
  // rich result does not link it (like resources.cpp through the resource table).
  void (*write_)(JsonWriter& w, const ToolDesc& tool, const ContentItems& items) = nullptr;
  size_t (*error_reply_)(Server& s, const void* request) = nullptr;
  // A failure met while writing (the reply is then replaced by an error in
  // ServerImpl::done): which, its JSON-RPC code and message length (in the scratch).
  uint8_t error_ = 0;
  int error_code_ = 0;
  size_t error_len_ = 0;
  const char* error_tool_ = nullptr;
};

// Sends one complete outgoing message over the port's transport (the port frames it,
// e.g. a line or a WebSocket text message). mcpgen::Session (mcpgen/session.h) sends
// replies through it and lends it to the Server while a message is handled, for
// Context::progress.
class Link {
 public:
  virtual bool send(const char* data, size_t len) = 0;

 protected:
  ~Link() = default;
};

// What a handler gets besides its typed args.
class Context {
 public:
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  // Starts a JSON object result in the scratch buffer; write fields, then return
  // Result::Object(). Nested objects/arrays are fine.
  JsonWriter& object();
  // Raw scratch for text results: Result::Text(ctx.scratch()) after snprintf into it.
  char* scratch();
  size_t scratch_size() const;
  const VisionConfig& vision() const;
  void* user_data() const;  // set by the port via Server::set_user_data
  // Queues one device notification (e.g. "notifications/state_changed" with params
  // "{\"newState\":\"dark\"}", or params nullptr). Both strings are copied; the port
  // sends it after the reply (Server::pending_notification). Returns false when one is
  // already queued, params_json is not valid JSON, or it does not fit MCPGEN_NOTIFY_SIZE.
  bool notify(const char* method, const char* params_json);
  // Starts an empty list of content items for Result::Items (see ContentItems).
  ContentItems& items();
  // Called by generated code (the invoke thunk of a tool with a list of content kinds):
  // the kinds the spec declares, in order; the items a handler returns must match them.
  // The list starts empty (a handler that adds none returns none).
  void declare_items(const ReturnKind* kinds, uint8_t count) {
    items_.declared_ = kinds;
    items_.declared_count_ = count;
    items_.count_ = 0;
    items_.too_many_ = false;
  }
  // MCP progress of the tools/call being served: sends notifications/progress
  // {"progressToken":<the caller's token, as it came>,"progress":..,"total":..,"message":..}
  // at once (before the reply) over the link the request came on. Only when the caller
  // asked for it with params._meta.progressToken (a string or a number); otherwise, and
  // outside a tools/call handler, nothing is sent. `total` is left out when negative (the
  // default: unknown), `message` when nullptr. Returns false, sending nothing, when no
  // token was sent, `progress` is not finite or not above the value last sent for this
  // call (MCP: progress increases), the params do not fit MCPGEN_NOTIFY_SIZE (notify's
  // budget), or the link refused the message. No heap: written in the reply buffer,
  // which is free until the handler returns.
  bool progress(double progress, double total = -1, const char* message = nullptr);
  // True when the call being served carries a progress token (progress() would send).
  bool progress_requested() const;

 private:
  friend class Server;
  friend struct ServerImpl;
  friend class Result;
  Context();
  char scratch_[MCPGEN_SCRATCH_SIZE];
  JsonWriter writer_;
  const VisionConfig* vision_;
  void* user_data_;
  char notify_[MCPGEN_NOTIFY_SIZE];  // "method\0params\0"
  bool notify_pending_;
  bool notify_has_params_;
  ContentItems items_;
  // Progress (mcpgen/progress.cpp): the request being served while its handler runs
  // (ServerImpl::Request and json::Params, nullptr otherwise), and where it is sent.
  bool progress_sent_;
  double last_progress_;
  const void* call_;
  const void* call_params_;
  const Server* server_;
  Link* link_;
  char* link_buf_;
  size_t link_cap_;
};

// What a handler returns. Pointers must stay valid until the reply is written (string
// literals, statics, or the Context scratch buffer).
class Result {
 public:
  static Result None();
  static Result Bool(bool v);
  static Result Int(int64_t v);
  static Result Number(double v);
  static Result Text(const char* s);
  static Result Object();  // the object written with Context::object()
  static Result Image(const char* mime_type, const char* base64_data);
  // `returns: audio`: the clip's raw bytes (e.g. a WAV file), base64-encoded by the core
  // straight into the reply; they must stay valid until the reply is written.
  static Result Audio(Context& ctx, const char* mime_type, const void* bytes, size_t size);
  // `returns: resource`: the spec's resource at `uri`, read by its handler into the reply.
  static Result Resource(Context& ctx, const char* uri);
  // `returns: [kinds...]`: the items added to ctx.items(), in the spec's order.
  static Result Items(Context& ctx);
  static Result Error(const char* message);  // tool failure: result with isError: true

  ReturnKind kind() const { return kind_; }
  // The handler's returned kind must match the spec's `returns` (Int is accepted for
  // number); a mismatch is answered with -32603. Errors are always accepted.
  bool is_error() const { return is_error_; }

 private:
  friend class Server;
  friend struct ServerImpl;
  Result() = default;
  ReturnKind kind_ = ReturnKind::kNone;
  bool is_error_ = false;
  const char* mime_ = nullptr;  // kImage
  // The one value a result carries (by kind_; s: text, error message or image data).
  // A union keeps Result at 16 bytes on a 32-bit MCU: every handler returns one.
  union {
    int64_t i;  // first: `{}` zeroes all 8 bytes
    double d;
    bool b;
    const char* s;
    const ContentItems* c;  // kAudio, kResource, kContent
  } v_ = {};
};

// The MCP server. One instance per connection; not thread-safe (ports serialize).
class Server {
 public:
  explicit Server(const SpecDesc& spec);

  // Handles one message: bare JSON-RPC or the xiaozhi envelope
  // {"session_id":..,"type":"mcp","payload":{..}}. `in` (len bytes, need not be
  // NUL-terminated; must have room for len+1 bytes) is modified in place. Writes the
  // reply (same framing as the request, no trailing newline) into `out` and returns
  // its length; returns 0 when there is nothing to send (notifications).
  size_t handle(char* in, size_t len, char* out, size_t out_cap);

  // Non-MCP xiaozhi messages are handled too: a peer hello ({"type":"hello",..})
  // records its session_id (see peer_hello_received); other types ("tts", "listen",
  // ...) are ignored (returns 0). Responses sent to the device (result/error, no
  // method) are ignored. Requests without an id are notifications: run, never answered.

  // Reply for a request the port had to drop because it exceeded the request buffer:
  // a JSON-RPC error -32600 with id null (enveloped when the peer uses envelopes).
  // Prefer the overload below, which finds the request's id.
  size_t oversized_reply(char* out, size_t out_cap);
  // The same, given the first prefix_len bytes of the dropped message (what the port
  // kept before its buffer filled): the error carries the request's id and envelope
  // whenever they were read whole from that part, so the caller is not left waiting.
  size_t oversized_reply(const char* prefix, size_t prefix_len, char* out, size_t out_cap);

  // A device-initiated notification, e.g. ("notifications/state_changed",
  // "{\"newState\":\"idle\"}") or ("notifications/tools/list_changed", nullptr).
  // Enveloped with the last seen session_id when the peer uses envelopes.
  // Returns 0 when params_json is not valid JSON or the buffer is too small.
  size_t notification(const char* method, const char* params_json, char* out, size_t out_cap);

  // The notification a handler queued with Context::notify during the last handle(),
  // written like notification(); 0 when none is pending. Clears it.
  size_t pending_notification(char* out, size_t out_cap);

  // The xiaozhi device hello: {"type":"hello","version":3,"features":{"mcp":true},
  // "transport":<transport>,"audio_params":{...}}.
  size_t hello(const char* transport, char* out, size_t out_cap) const;

  void set_session_id(const char* session_id);  // from the server hello
  const char* session_id() const;
  // True once a {"type":"hello"} from the peer went through handle(); the port clears
  // it per connection with reset_connection().
  bool peer_hello_received() const;
  // Forgets the per-connection state (session id, envelope mode, peer hello, vision).
  void reset_connection();
  void set_user_data(void* p);
  // Where Context::progress sends while handle() runs: the link the request came on and
  // the buffer handle() writes the reply into (free until the handler returns).
  // mcpgen::Session sets it around each message; nullptr: progress is not sent.
  void set_link(Link* link, char* buf, size_t cap);
  const VisionConfig& vision() const;
  const SpecDesc& spec() const;

 private:
  friend struct ServerImpl;  // the request handling code (server_impl.h)

  const SpecDesc& spec_;
  Context ctx_;
  VisionConfig vision_;
  char session_id_[MCPGEN_SESSION_ID_SIZE];
  bool enveloped_;
  bool peer_hello_;
};

}  // namespace mcpgen
