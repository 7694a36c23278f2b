// resources/subscribe and resources/unsubscribe, and notifications/resources/updated for
// a subscribed client (see resource_impl.h).
#include <string.h>

#include "mcpgen/resource_impl.h"

namespace mcpgen {

namespace {

using Text = ResourceImpl::Text;
using Span = ResourceImpl::Span;
constexpr uint8_t kMaxVariables = ResourceImpl::kMaxVariables;

// Which resources (by index, the first 32) a client subscribed to on this connection, and
// the table they index (set by the first resources/subscribe).
uint32_t g_subscribed = 0;
const ResourceTable* g_subscribed_table = nullptr;

}  // namespace

// resources/subscribe and resources/unsubscribe: {} for a resource with `subscribe: true`.
int ResourceImpl::subscribe(const SpecDesc& spec, const json::Params& params, JsonWriter& w, Text& m, bool on) {
  const ResourceTable& t = *spec.resources;
  char* uri = nullptr;
  size_t n = 0;
  Span vars[kMaxVariables];
  uint8_t count = 0;
  const ResourceDesc* r = nullptr;
  if (int code = resource_of(t, params, m, &uri, &n, vars, &count, &r)) return code;
  if (!r->subscribe) {
    m.add("Invalid params: resource ").add(r->name).add(" does not support subscribe");
    return kInvalidParams;
  }
  size_t index = static_cast<size_t>(r - t.resources);
  if (index < 32) {
    uint32_t bit = uint32_t{1} << index;
    g_subscribed = on ? (g_subscribed | bit) : (g_subscribed & ~bit);
    g_subscribed_table = &t;
  }
  w.raw_fragment("{}", 2);
  return 0;
}

void resource_subscriptions_reset() { g_subscribed = 0; }

namespace {
void write_uri_params(JsonWriter& w, const void* args) {
  w.begin_object();
  w.key("uri");
  w.string(static_cast<const char*>(args));
  w.end_object();
}
}  // namespace

EventStatus resource_updated(const char* uri) {
  const ResourceTable* t = g_subscribed_table;
  if (uri == nullptr) return EventStatus::kInvalidArgument;
  if (t == nullptr || g_subscribed == 0) return EventStatus::kNoPeer;
  // A copy to match in (the matcher reads spans of a writable buffer).
  char copy[256];
  size_t n = strlen(uri);
  if (n >= sizeof copy) return EventStatus::kInvalidArgument;
  memcpy(copy, uri, n + 1);
  Span vars[kMaxVariables];
  uint8_t count = 0;
  const ResourceDesc* r = ResourceImpl::find(*t, copy, n, vars, &count);
  if (r == nullptr) return EventStatus::kInvalidArgument;
  size_t index = static_cast<size_t>(r - t->resources);
  if (index >= 32 || (g_subscribed & (uint32_t{1} << index)) == 0) return EventStatus::kNoPeer;
  return emit_event("notifications/resources/updated", &write_uri_params, uri);
}

}  // namespace mcpgen
