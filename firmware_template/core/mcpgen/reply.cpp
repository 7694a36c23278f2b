// The frame of every reply the Server writes (the xiaozhi envelope, {"jsonrpc":"2.0",
// the id) and the error replies with their messages (see server_impl.h).
#include <string.h>

#include "mcpgen/server_impl.h"
#include "mcpgen/text_format.h"

namespace mcpgen {

using json::Type;
using json::Value;

// ---------------------------------------------------------------- Msg

Msg& Msg::add(const char* s) { return add(s, strlen(s)); }

Msg& Msg::add(const char* a, const char* b, const char* c) {
  add(a).add(b);
  return c != nullptr ? add(c) : *this;
}

Msg& Msg::add(const char* s, size_t n) {
  if (n > cap_ - 1 - len_) n = cap_ - 1 - len_;
  memcpy(buf_ + len_, s, n);
  len_ += n;
  buf_[len_] = '\0';
  return *this;
}

Msg& Msg::quote(const char* s, size_t n, size_t limit) {
  if (n <= limit) return add(s, n);
  while (limit > 0 && (static_cast<unsigned char>(s[limit]) & 0xC0) == 0x80) --limit;
  return add(s, limit).add("...");
}

Msg& Msg::add_int(int64_t v) {
  char tmp[21];
  return add(tmp, format_int64(v, tmp));
}

Msg& Msg::add_num(double v) {
  char tmp[32];
  return add(tmp, format_double(v, tmp));
}

// ---------------------------------------------------------------- the frame

namespace {

// The start of the xiaozhi envelope up to its "type": {"session_id":<the request's
// token, else the connection's id>, (or just { without a session id).
void envelope_head(const char* session_id, JsonWriter& w, const ServerImpl::Request& rq) {
  if (rq.session.is(Type::kString)) {
    lit(w, "{\"session_id\":");
    w.raw_fragment(rq.session.p, rq.session.n);
    lit(w, ",");
  } else if (session_id[0] != '\0') {
    lit(w, "{\"session_id\":");
    ServerImpl::str(w, session_id);
    lit(w, ",");
  } else {
    lit(w, "{");
  }
}

void integer(JsonWriter& w, int64_t v) {
  char tmp[21];
  w.raw_fragment(tmp, format_int64(v, tmp));
}

}  // namespace

void ServerImpl::open(const Server& s, JsonWriter& w, const Request& rq) {
  if (rq.enveloped) {
    envelope_head(s.session_id_, w, rq);
    lit(w, "\"type\":\"mcp\",\"payload\":{\"jsonrpc\":\"2.0\"");
  } else {
    lit(w, "{\"jsonrpc\":\"2.0\"");
  }
}

void ServerImpl::begin(const Server& s, JsonWriter& w, const Request& rq) {
  open(s, w, rq);
  lit(w, ",\"id\":");
  if (rq.id.valid()) {
    w.raw_fragment(rq.id.p, rq.id.n);
  } else {
    lit(w, "null");
  }
}

// ---------------------------------------------------------------- errors

size_t ServerImpl::error(const Server& s, const Request& rq, int code, const char* msg, size_t msg_len) {
  JsonWriter w(rq.out, rq.cap);
  begin(s, w, rq);
  lit(w, ",\"error\":{\"code\":");
  integer(w, code);
  lit(w, ",\"message\":");
  str(w, msg, msg_len);
  lit(w, "}");
  end(w, rq);
  if (!w.overflowed()) return w.size();
  // It did not fit the output buffer: a short -32603 with the request's id instead, so
  // the caller never waits out a timeout for a reply dropped silently.
  static const char kTooSmall[] = "Internal error: response buffer too small";
  if (msg == kTooSmall) return 0;
  return error(s, rq, kInternalError, kTooSmall, sizeof kTooSmall - 1);
}

size_t ServerImpl::error(Server& s, const Request& rq, int code, const char* msg) {
  Msg m = head(s, code);
  m.add(msg);
  return error(s, rq, code, m);
}

size_t ServerImpl::done(Server& s, const Request& rq, JsonWriter& w) {
  if (!w.overflowed()) return w.size();
  if (s.ctx_.items_.error_ != 0) return s.ctx_.items_.error_reply_(s, &rq);  // content.cpp ended the writer
  Msg m = head(s, kInternalError);
  m.add("response buffer too small for the reply (")
      .add_int(static_cast<int64_t>(rq.cap))
      .add(" bytes; raise MCPGEN_RESPONSE_BUFFER_SIZE)");
  return error(s, rq, kInternalError, m);
}

// Out of line (like head): error paths are many and cold, so each costs one call.
Msg ServerImpl::scratch_msg(Server& s) { return Msg(s.ctx_.scratch_, sizeof s.ctx_.scratch_); }

// One copy of each prefix for every message.
Msg ServerImpl::head(Server& s, int code) {
  static const char* const kPrefix[] = {
      "Invalid Request: ", "Method not found: ", "Invalid params: ", "Internal error: ", "Parse error: "};
  unsigned i = static_cast<unsigned>(kInvalidRequest - code);  // -32600..-32603 -> 0..3
  Msg m = scratch_msg(s);
  m.add(kPrefix[i < 4 ? i : 4]);
  return m;
}

size_t ServerImpl::quoted_error(Server& s, const Request& rq, int code, const char* prefix, const Value& v) {
  size_t n = 0;
  const char* t = text_of(v, &n);
  Msg m = head(s, code);
  m.add(prefix, "\"").quote(t, n, kQuoteLimit).add("\"");
  return error(s, rq, code, m);
}

}  // namespace mcpgen
