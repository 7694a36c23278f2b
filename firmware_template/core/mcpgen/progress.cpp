// MCP progress from a tool handler (Context::progress): notifications/progress for the
// tools/call being served, sent at once over the link its request came on. The token is
// looked up only here, when a handler reports: a call that reports nothing pays two
// pointer stores (mcp_server.cpp's invoke()). No heap: the message is written into the
// reply buffer, which the reply overwrites only after the handler returned.
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/server_impl.h"
#include "mcpgen/text_format.h"

namespace mcpgen {

using json::Type;
using json::Value;

namespace {

// Finite (not NaN, not +-inf), without <math.h>.
inline bool finite(double v) { return v - v == 0; }

void number(JsonWriter& w, double v) {
  char tmp[32];
  w.raw_fragment(tmp, format_double(v, tmp));
}

}  // namespace

Value ServerImpl::progress_token(const Context& c) {
  if (c.call_ == nullptr) return Value();
  const json::Params& p = *static_cast<const json::Params*>(c.call_params_);
  // find() reads the first of a repeated key, Python readers the last: no token then.
  if (!p.meta.is(Type::kObject) || json::first_duplicate(p.meta).valid()) return Value();
  Value token = json::find(p.meta, "progressToken");
  if (!token.is(Type::kString) && !token.is(Type::kNumber)) return Value();
  if (json::has_lone_surrogate(token)) return Value();  // echoed raw: strict parsers refuse it
  return token;
}

bool ServerImpl::progress(Context& c, double done, double total, const char* message) {
  if (c.link_ == nullptr || c.server_ == nullptr) return false;
  Value token = progress_token(c);
  if (!token.valid() || !finite(done)) return false;
  if (c.progress_sent_ && !(done > c.last_progress_)) return false;
  const Request& rq = *static_cast<const Request*>(c.call_);
  JsonWriter w(c.link_buf_, c.link_cap_);
  open(*c.server_, w, rq);  // the request's framing: envelope and session id as it came
  lit(w, ",\"method\":\"notifications/progress\",\"params\":");
  size_t params_start = w.size();
  lit(w, "{\"progressToken\":");
  w.raw_fragment(token.p, token.n);
  lit(w, ",\"progress\":");
  number(w, done);
  if (finite(total) && total >= 0) {
    lit(w, ",\"total\":");
    number(w, total);
  }
  if (message != nullptr) {
    lit(w, ",\"message\":");
    str(w, message);
  }
  lit(w, "}");
  if (w.size() - params_start > MCPGEN_NOTIFY_SIZE) return false;  // notify's budget
  end(w, rq);
  if (w.overflowed() || !c.link_->send(c.link_buf_, w.size())) return false;
  c.last_progress_ = done;
  c.progress_sent_ = true;
  return true;
}

bool Context::progress(double progress, double total, const char* message) {
  return ServerImpl::progress(*this, progress, total, message);
}

bool Context::progress_requested() const { return link_ != nullptr && ServerImpl::progress_token(*this).valid(); }

}  // namespace mcpgen
