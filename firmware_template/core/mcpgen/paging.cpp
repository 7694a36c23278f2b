// tools/list pages and their cursors (paging.h).
#include "mcpgen/paging.h"

#include <string.h>

namespace mcpgen {

namespace {

using json::Type;
using json::Value;

// The cursor is kCursorLen lowercase hex digits: the index of the next page's first
// tool (4 digits), then a check (8) derived from that index, the tool count and the spec
// fingerprint. The page is found by indexing (a page costs the same wherever it
// starts); clients treat the text as opaque. A cursor this device did not give out
// for this tool set -- stale (another firmware or spec), forged, out of range -- fails
// the comparison with the text the device would have written and gets -32602.
void cursor_text(const SpecDesc& spec, uint32_t index, char* out) {
  // FNV-1a started from the index and count: for one spec, distinct indices give
  // distinct checks (each step is a bijection of the 32-bit state).
  uint32_t h = (2166136261u ^ index) + (uint32_t{spec.tool_count} << 16);
  for (const char* p = spec.fingerprint; *p != '\0'; ++p) h = (h ^ static_cast<uint8_t>(*p)) * 16777619u;
  for (int i = 11; i >= 0; --i) {
    uint32_t& v = i >= 4 ? h : index;
    out[i] = json::detail::kHexDigits[v & 15];
    v >>= 4;
  }
}

}  // namespace

size_t tools_list(Server& s, const ServerImpl::Request& rq, const json::Params& p) {
  const SpecDesc& spec = s.spec();
  const Value& cursor = p.cursor;
  const Value& with_user = p.with_user_tools;
  if (cursor.valid() && !cursor.is(Type::kString) && !cursor.is(Type::kNull)) {
    return ServerImpl::error(s, rq, kInvalidParams, "cursor must be a string");
  }
  if (with_user.valid() && !with_user.is(Type::kBool) && !with_user.is(Type::kNull)) {
    return ServerImpl::error(s, rq, kInvalidParams, "withUserTools must be a boolean");
  }
  bool user = with_user.is_true();
  uint32_t start = 0;
  char text[kCursorLen];
  if (cursor.is(Type::kString) && cursor.n > 2) {
    size_t n = 0;
    const char* c = text_of(cursor, &n);
    // The index from the first 4 digits (0x10000, out of range, when one is not hex);
    // then the whole text must be the one the device writes for that index.
    if (n == kCursorLen) start = json::detail::hex4(c);
    if (start < spec.tool_count) cursor_text(spec, start, text);
    if (n != kCursorLen || start >= spec.tool_count || memcmp(text, c, kCursorLen) != 0) {
      Msg m = ServerImpl::head(s, kInvalidParams);
      m.add("unknown cursor \"").quote(c, n, kQuoteLimit).add("\"");
      return ServerImpl::error(s, rq, kInvalidParams, m);
    }
  }
  auto visible = [&](uint32_t i) { return user || !spec.tools[i].user_only; };
  // The page: `{"tools":[` + entries + `]}`, or `],"nextCursor":"<cursor>"}` when another
  // visible tool follows; entries are written as long as that still fits page_size.
  constexpr size_t kMore = 15 + 1 + kCursorLen + 1 + 1;  // ],"nextCursor": "..." }
  JsonWriter w(rq.out, rq.cap);
  ServerImpl::begin(s, w, rq);
  lit(w, ",\"result\":{\"tools\":[");
  size_t size = 10;  // {"tools":[
  uint32_t end_at = 0;  // first tool not on this page (the next cursor), 0: last page
  uint32_t i = start;
  while (i < spec.tool_count && !visible(i)) ++i;
  bool first = true;
  while (i < spec.tool_count) {
    uint32_t nxt = i + 1;
    while (nxt < spec.tool_count && !visible(nxt)) ++nxt;
    size_t add = (first ? 0 : 1) + spec.tools[i].list_entry_len;
    if (size + add + (nxt < spec.tool_count ? kMore : 2) > spec.page_size) {
      if (first) {
        Msg m = ServerImpl::head(s, kInternalError);
        m.add("tool ", spec.tools[i].name, " does not fit in a tools/list page of ")
            .add_int(spec.page_size)
            .add(" bytes");
        return ServerImpl::error(s, rq, kInternalError, m);
      }
      end_at = i;
      break;
    }
    if (!first) lit(w, ",");
    first = false;
    w.raw_fragment(spec.tools[i].list_entry, spec.tools[i].list_entry_len);
    size += add;
    i = nxt;
  }
  lit(w, "]");
  if (end_at != 0) {
    lit(w, ",\"nextCursor\":\"");
    cursor_text(spec, end_at, text);
    w.raw_fragment(text, kCursorLen);
    lit(w, "\"");
  }
  lit(w, "}");
  return ServerImpl::finish(s, rq, w);
}

}  // namespace mcpgen
