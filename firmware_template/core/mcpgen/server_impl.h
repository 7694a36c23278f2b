// Inside the Server (not for ports or handlers): what the parts of the request handling
// share. The parts, one job each:
//
//   reply.cpp      the reply frame (xiaozhi envelope, JSON-RPC head, id) and error replies
//   arguments.cpp  tools/call arguments: decoded and checked against the ParamDesc tables
//   paging.cpp     tools/list pages and their opaque cursors
//   mcp_server.cpp dispatch: framing of one message, the methods, the Server's public API
//
// ServerImpl is one struct because it is the Server's one friend (mcp_core.h): every part
// that reads the Server's private state is a static member of it.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/mcp_core.h"

namespace mcpgen {

// The JSON-RPC error codes the core answers with (src/mcpgen/jsonrpc.py holds the same;
// tests/spec/test_protocol_constants.py compares them).
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
};

// Error messages quote at most this many bytes of a value from the request (cut at a
// character boundary, then "..."): a 3 MB argument never comes back as a 3 MB error.
constexpr size_t kQuoteLimit = 64;

// Bounded text builder for error messages (lives in the Context scratch buffer). The
// longer members are defined in reply.cpp, once for every part.
class Msg {
 public:
  Msg(char* buf, size_t cap) : buf_(buf), cap_(cap), len_(0) { buf_[0] = '\0'; }
  Msg& add(const char* s);
  // Two or three pieces in one call: a message is mostly literal, name, literal, and
  // each call costs flash at every error site.
  __attribute__((noinline)) Msg& add(const char* a, const char* b, const char* c = nullptr);
  Msg& add(const char* s, size_t n);
  // A value quoted from the request, cut at `limit` bytes.
  Msg& quote(const char* s, size_t n, size_t limit);
  Msg& add_int(int64_t v);
  Msg& add_num(double v);
  void clear() {
    len_ = 0;
    buf_[0] = '\0';
  }
  // Back to the first n bytes (n <= size()): drops what a nested level added.
  void truncate(size_t n) {
    len_ = n;
    buf_[n] = '\0';
  }
  const char* str() const { return buf_; }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_;
};

// Bytes of a string literal (without its NUL) as a raw fragment.
template <size_t N>
inline void lit(JsonWriter& w, const char (&s)[N]) {
  w.raw_fragment(s, N - 1);
}

// A string value equals a literal (decoded text; raw bytes when it has no escape). The
// common case, no escape, compares in line: the literal's length is known here, so the
// compare is a word or two ("mcp", "2.0" and the method names of every message).
template <size_t N>
inline bool eq(const json::Value& v, const char (&lit)[N]) {
  if (v.type != json::Type::kString) return false;
  if (!v.esc) return v.n - 2 == N - 1 && json::detail::same_bytes(v.p + 1, lit, N - 1);
  return json::string_equals_slow(v, lit, N - 1);
}

// The decoded text of a string value: its raw bytes when it has no escape, else
// unescaped in place (so: only for values that are not walked again).
inline const char* text_of(const json::Value& v, size_t* len) {
  if (!v.esc) {
    *len = v.n - 2;
    return v.p + 1;
  }
  return json::unescape(v, len);
}

struct ServerImpl {
  struct Request {
    json::Value id;  // string or number token; invalid: reply with null
    json::Value session;  // the envelope's session_id token, if any
    bool enveloped = false;
    // Where the reply goes: carried here so the many reply and error helpers take few
    // arguments (all in registers on a 32-bit MCU).
    char* out = nullptr;
    size_t cap = 0;
  };

  // ---------------------------------------------------------------- reply.cpp
  // Replies are written as raw fragments of fixed JSON text with the variable parts
  // escaped in between (str) or copied as they came (ids, session tokens): no comma
  // bookkeeping on the hot path.
  static void str(JsonWriter& w, const char* s, size_t n) {
    w.need_comma_ = false;
    w.string(s, n);
  }
  static void str(JsonWriter& w, const char* s) { str(w, s, strlen(s)); }
  // Opens any outgoing JSON-RPC message: the xiaozhi envelope when rq.enveloped, then
  // {"jsonrpc":"2.0".
  __attribute__((noinline)) static void open(const Server& s, JsonWriter& w, const Request& rq);
  // Opens a reply to rq (up to its "id").
  static void begin(const Server& s, JsonWriter& w, const Request& rq);
  // Closes the JSON-RPC object and the envelope.
  static void end(JsonWriter& w, const Request& rq) { w.raw_fragment("}}", rq.enveloped ? 2 : 1); }
  static size_t error(const Server& s, const Request& rq, int code, const char* msg, size_t msg_len);
  static size_t error(const Server& s, const Request& rq, int code, const Msg& m) {
    return error(s, rq, code, m.str(), m.size());
  }
  // "<the code's prefix><msg>" (built in the scratch buffer, so msg must not point there).
  static size_t error(Server& s, const Request& rq, int code, const char* msg);
  // "<prefix>"<the value's text, cut at kQuoteLimit>""; used for -32600/-32602 errors.
  static size_t quoted_error(Server& s, const Request& rq, int code, const char* prefix, const json::Value& v);
  // Completes a reply: the writer's text, or -32603 when it did not fit.
  static size_t finish(Server& s, const Request& rq, JsonWriter& w) {
    end(w, rq);
    return done(s, rq, w);
  }
  // A reply written to its end: its length, or -32603 when it did not fit.
  static size_t done(Server& s, const Request& rq, JsonWriter& w);
  // An empty message in the scratch buffer.
  __attribute__((noinline)) static Msg scratch_msg(Server& s);
  // An error message in the scratch buffer, started with the JSON-RPC name of its code
  // (one of ErrorCode: "Invalid params: ", ...).
  __attribute__((noinline)) static Msg head(Server& s, int code);

  // ---------------------------------------------------------------- mcp_server.cpp
  static size_t handle(Server& s, char* in, size_t len, char* out, size_t cap);
  static size_t oversized(Server& s, const char* prefix, size_t n, char* out, size_t cap);
  // handle()'s steps (each: nullptr or false when the message ends there, *n its reply),
  // always inlined like tools/call's below.
  __attribute__((always_inline)) static inline const json::Rpc* frame(Server& s, char* in, size_t len, Request& rq,
                                                                      json::Message& m, size_t* n);
  __attribute__((always_inline)) static inline bool check_id(Server& s, Request& rq, const json::Rpc& rpc,
                                                             bool* notification, size_t* n);
  __attribute__((always_inline)) static inline bool check_rpc(Server& s, const Request& rq, const json::Message& m,
                                                              const json::Rpc& rpc, bool notification, size_t* n);
  __attribute__((always_inline)) static inline size_t dispatch(Server& s, Request& rq, const json::Rpc& rpc,
                                                               bool notification);
  // The methods handle() dispatches to: inline (defined and used in mcp_server.cpp only),
  // so the compiler weighs them as it did when they were one function.
  static inline size_t initialize(Server& s, Request& rq, const json::Params& p);
  static inline size_t tools_call(Server& s, Request& rq, const json::Params& p, const json::Value& params);
  // tools/call's steps: the tool found, its arguments decoded, its handler run (or nullptr
  // and the error reply's length in *n); then the handler's Result checked and written.
  // Always inlined: steps of one function for the reader, not calls for the device (as
  // calls they cost a tools/call about 30 instructions).
  __attribute__((always_inline)) static inline const ToolDesc* invoke(Server& s, Request& rq, const json::Params& p,
                                                                      const json::Value& params, Result* r, size_t* n);
  __attribute__((always_inline)) static inline size_t write_result(Server& s, const Request& rq, const ToolDesc& tool,
                                                                   const Result& r);
  static inline size_t result_object(Server& s, const Request& rq, const ToolDesc& tool, size_t* n);
  static void write_content(JsonWriter& w, const ToolDesc& tool, const Result& r, const char* obj, size_t obj_len);
  static size_t tool_error_result(Server& s, const Request& rq, const char* msg, size_t n);

  // ---------------------------------------------------------------- content.cpp
  // The items of an audio, embedded resource or multi-item result (ContentItems), each
  // straight into the reply. A failure (items that differ from the spec's list, a resource
  // that cannot be read) is noted in the items and ends the writer (overflowed), so the
  // reply's one overflow check, done(), turns it into items_error(): the tools/call path
  // of every other result gains no test.
  static void write_items(JsonWriter& w, const ToolDesc& tool, const ContentItems& items);
  static size_t items_error(Server& s, const void* request);  // request: the Request
  static inline size_t resources(Server& s, Request& rq, const json::Value& method, const json::Params& p);

  // ---------------------------------------------------------------- progress.cpp
  // The progress token of the call being served (string or number, as it came), or an
  // invalid Value when there is none (or it is unusable: see Context::progress).
  static json::Value progress_token(const Context& c);
  static bool progress(Context& c, double done, double total, const char* message);
};

}  // namespace mcpgen
