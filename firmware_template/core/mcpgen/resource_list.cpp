// resources/list and resources/templates/list: one page per request in the spec's byte
// budget, with an opaque cursor to the next (see resource_impl.h).
#include <string.h>

#include "mcpgen/resource_impl.h"

namespace mcpgen {

namespace {

using json::Type;
using json::Value;
using Text = ResourceImpl::Text;
constexpr size_t kCursorLen = ResourceImpl::kCursorLen;

// The check part of a cursor: FNV-1a over the index, the count, the kind of list and the
// spec fingerprint, so a tools/list cursor (or another spec's) is never accepted here.
void cursor_text(const SpecDesc& spec, bool templates, uint32_t index, char* out) {
  uint32_t h =
      (2166136261u ^ index) + (uint32_t{spec.resources->count} << 16) + (templates ? 0x7E000000u : 0x52000000u);
  for (const char* p = spec.fingerprint; *p != '\0'; ++p) h = (h ^ static_cast<uint8_t>(*p)) * 16777619u;
  for (int i = 11; i >= 0; --i) {
    uint32_t& v = i >= 4 ? h : index;
    out[i] = json::detail::kHexDigits[v & 15];
    v >>= 4;
  }
}

// The index the page starts at: 0, or the one params.cursor names (checked against the
// cursor this device would give out); -1 with the message in m for a bad cursor.
int32_t page_start(const SpecDesc& spec, bool templates, const json::Params& params, Text& m) {
  const ResourceTable& t = *spec.resources;
  const Value& cursor = params.cursor;
  if (cursor.valid() && !cursor.is(Type::kString) && !cursor.is(Type::kNull)) {
    m.add("Invalid params: cursor must be a string");
    return -1;
  }
  uint32_t start = 0;
  char text[kCursorLen];
  if (cursor.is(Type::kString) && cursor.n > 2) {
    size_t n = 0;
    const char* c = ResourceImpl::text_of(cursor, &n);
    start = n == kCursorLen ? json::detail::hex4(c) : 0x10000;
    if (start < t.count) cursor_text(spec, templates, start, text);
    if (start >= t.count || memcmp(text, c, kCursorLen) != 0) {
      m.add("Invalid params: unknown cursor ").quote(c, n);
      return -1;
    }
  }
  return static_cast<int32_t>(start);
}

}  // namespace

// One page: {"resources":[ or {"resourceTemplates":[, the entries while they fit
// page_size, then ] or ],"nextCursor":"<cursor>"} (the same budget as tools/list).
int ResourceImpl::list(const SpecDesc& spec, bool templates, const json::Params& params, JsonWriter& w, Text& m) {
  const ResourceTable& t = *spec.resources;
  int32_t first_index = page_start(spec, templates, params, m);
  if (first_index < 0) return kInvalidParams;
  uint32_t start = static_cast<uint32_t>(first_index);
  char text[kCursorLen];
  auto listed = [&](uint32_t i) { return t.resources[i].is_template == templates; };
  // {"resources":[ or {"resourceTemplates":[, entries while they fit page_size, then
  // ] or ],"nextCursor":"<cursor>"} (the same budget as tools/list).
  const char* head = templates ? "{\"resourceTemplates\":[" : "{\"resources\":[";
  size_t size = strlen(head);
  constexpr size_t kMore = 15 + 1 + kCursorLen + 1 + 1;
  w.raw_fragment(head, size);
  uint32_t i = start;
  while (i < t.count && !listed(i)) ++i;
  uint32_t end_at = 0;
  bool first = true;
  while (i < t.count) {
    uint32_t nxt = i + 1;
    while (nxt < t.count && !listed(nxt)) ++nxt;
    const ResourceDesc& r = t.resources[i];
    size_t add = (first ? 0 : 1) + r.list_entry_len;
    if (size + add + (nxt < t.count ? kMore : 2) > spec.page_size) {
      if (first) {
        m.add("Internal error: resource ").add(r.name).add(" does not fit in a list page of ").num(spec.page_size);
        return kInternalError;
      }
      end_at = i;
      break;
    }
    if (!first) w.raw_fragment(",", 1);
    first = false;
    w.raw_fragment(r.list_entry, r.list_entry_len);
    size += add;
    i = nxt;
  }
  w.raw_fragment("]", 1);
  if (end_at != 0) {
    w.raw_fragment(",\"nextCursor\":\"", 15);
    cursor_text(spec, templates, end_at, text);
    w.raw_fragment(text, kCursorLen);
    w.raw_fragment("\"", 1);
  }
  w.raw_fragment("}", 1);
  return 0;
}

}  // namespace mcpgen
