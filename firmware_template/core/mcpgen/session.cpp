#include "mcpgen/session.h"

namespace mcpgen {

Session::Session(Server& server, Link& link, char* out, size_t out_cap)
    : server_(server), link_(link), out_(out), out_cap_(out_cap) {}

bool Session::send_pending() {
  size_t n = server_.pending_notification(out_, out_cap_);
  return n == 0 || link_.send(out_, n);
}

bool Session::on_message(char* in, size_t len) {
  server_.set_link(&link_, out_, out_cap_);  // for Context::progress while a handler runs
  size_t n = server_.handle(in, len, out_, out_cap_);
  server_.set_link(nullptr, nullptr, 0);
  if (n > 0 && !link_.send(out_, n)) return false;
  return send_pending();
}

bool Session::on_oversized() {
  size_t n = server_.oversized_reply(out_, out_cap_);
  return n == 0 || link_.send(out_, n);
}

bool Session::on_oversized(const char* prefix, size_t prefix_len) {
  size_t n = server_.oversized_reply(prefix, prefix_len, out_, out_cap_);
  return n == 0 || link_.send(out_, n);
}

bool Session::send_hello(const char* transport) {
  size_t n = server_.hello(transport, out_, out_cap_);
  return n > 0 && link_.send(out_, n);
}

bool Session::notify(const char* method, const char* params_json) {
  size_t n = server_.notification(method, params_json, out_, out_cap_);
  return n > 0 && link_.send(out_, n);
}

}  // namespace mcpgen
