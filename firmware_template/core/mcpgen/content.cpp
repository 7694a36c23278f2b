// Rich content of a tool result (mcp_core.h, ContentItems): audio clips, embedded
// resources and results of several items. Every item is written straight into the reply
// buffer: audio bytes are base64-encoded as they are written (no copy of the clip, no
// heap), an embedded resource is read by its resource handler there and then
// (resources.cpp, through the spec's table, so a spec without resources links none of it).
#include <string.h>

#include "mcpgen/mcp_core.h"
#include "mcpgen/resources.h"
#include "mcpgen/server_impl.h"

namespace mcpgen {

namespace {

// ContentItems::error_: why write_items() ended the writer.
enum ItemsError : uint8_t { kNoError, kTooMany, kMismatch, kNoResources, kResourceFailed };

const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const char* item_name(ReturnKind k) {
  switch (k) {
    case ReturnKind::kString: return "text";
    case ReturnKind::kImage: return "image";
    case ReturnKind::kAudio: return "audio";
    case ReturnKind::kResource: return "resource";
    default: return "?";
  }
}

}  // namespace

// ---------------------------------------------------------------- making a result

ContentItems& Context::items() {
  items_.count_ = 0;
  items_.too_many_ = false;
  items_.write_ = &ServerImpl::write_items;
  items_.error_reply_ = &ServerImpl::items_error;
  return items_;
}

Result Result::Audio(Context& ctx, const char* mime_type, const void* bytes, size_t size) {
  Result r;
  r.kind_ = ReturnKind::kAudio;
  r.v_.c = &ctx.items().audio(mime_type, bytes, size);
  return r;
}

Result Result::Resource(Context& ctx, const char* uri) {
  Result r;
  r.kind_ = ReturnKind::kResource;
  r.v_.c = &ctx.items().resource(uri);
  return r;
}

Result Result::Items(Context& ctx) {
  Result r;
  r.kind_ = ReturnKind::kContent;
  ContentItems& items = ctx.items_;
  items.write_ = &ServerImpl::write_items;  // also when the handler never called ctx.items()
  items.error_reply_ = &ServerImpl::items_error;
  r.v_.c = &items;
  return r;
}

// ---------------------------------------------------------------- ContentItems

ContentItems& ContentItems::add(ReturnKind kind, const char* a, const void* p, size_t n, bool bytes) {
  if (count_ >= MCPGEN_CONTENT_ITEMS) {
    too_many_ = true;
    return *this;
  }
  items_[count_++] = Item{kind, bytes, a, p, p != nullptr ? n : 0};
  return *this;
}

ContentItems& ContentItems::text(const char* s) {
  return add(ReturnKind::kString, s != nullptr ? s : "", nullptr, 0, false);
}

ContentItems& ContentItems::image(const char* mime_type, const char* base64_data) {
  return add(ReturnKind::kImage, mime_type, base64_data != nullptr ? base64_data : "", 0, false);
}

ContentItems& ContentItems::image(const char* mime_type, const void* bytes, size_t size) {
  return add(ReturnKind::kImage, mime_type, bytes, size, true);
}

ContentItems& ContentItems::audio(const char* mime_type, const void* bytes, size_t size) {
  return add(ReturnKind::kAudio, mime_type, bytes, size, true);
}

ContentItems& ContentItems::resource(const char* uri) { return add(ReturnKind::kResource, uri, nullptr, 0, false); }

// ---------------------------------------------------------------- writing

struct ContentImpl {
  // n bytes as base64, in runs of 64 characters through the writer (which stops at the
  // end of the reply buffer: a clip too large for it overflows like any other reply).
  static void base64(JsonWriter& w, const uint8_t* p, size_t n) {
    char run[64];
    size_t k = 0;
    for (; n >= 3 && !w.overflow_; p += 3, n -= 3) {
      run[k] = kBase64[p[0] >> 2];
      run[k + 1] = kBase64[((p[0] & 3) << 4) | (p[1] >> 4)];
      run[k + 2] = kBase64[((p[1] & 15) << 2) | (p[2] >> 6)];
      run[k + 3] = kBase64[p[2] & 63];
      k += 4;
      if (k == sizeof run) {
        w.put(run, k);
        k = 0;
      }
    }
    if (n > 0) {
      uint8_t b = n > 1 ? p[1] : 0;
      run[k] = kBase64[p[0] >> 2];
      run[k + 1] = kBase64[((p[0] & 3) << 4) | (b >> 4)];
      run[k + 2] = n > 1 ? kBase64[(b & 15) << 2] : '=';
      run[k + 3] = '=';
      k += 4;
    }
    if (k > 0) w.put(run, k);
  }

  // Notes the failure and ends the writer: ServerImpl::done() answers with the error.
  static void fail(JsonWriter& w, ContentItems& c, uint8_t error) {
    c.error_ = error;
    w.overflow_ = true;
  }

  static bool as_declared(const ContentItems& c) {
    if (c.count_ != c.declared_count_) return false;
    for (uint8_t i = 0; i < c.count_; ++i) {
      if (c.items_[i].kind != c.declared_[i]) return false;
    }
    return true;
  }

  static void kinds(Msg& m, const ReturnKind* k, const ContentItems::Item* items, uint8_t n) {
    m.add("[");
    for (uint8_t i = 0; i < n; ++i) {
      if (i != 0) m.add(", ");
      m.add(item_name(k != nullptr ? k[i] : items[i].kind));
    }
    m.add("]");
  }
};

void ServerImpl::write_items(JsonWriter& w, const ToolDesc& tool, const ContentItems& items) {
  ContentItems& c = const_cast<ContentItems&>(items);  // a failure is noted in it
  c.error_tool_ = tool.name;
  if (c.too_many_) return ContentImpl::fail(w, c, kTooMany);
  if (tool.returns == ReturnKind::kContent && !ContentImpl::as_declared(c)) {
    return ContentImpl::fail(w, c, kMismatch);
  }
  for (uint8_t i = 0; i < c.count_; ++i) {
    const ContentItems::Item& it = c.items_[i];
    if (i != 0) lit(w, ",");
    const char* mime = it.a != nullptr ? it.a : "application/octet-stream";
    switch (it.kind) {
      case ReturnKind::kString:
        lit(w, "{\"type\":\"text\",\"text\":");
        str(w, it.a);
        lit(w, "}");
        break;
      case ReturnKind::kImage:
      case ReturnKind::kAudio:
        if (it.kind == ReturnKind::kImage) {
          lit(w, "{\"type\":\"image\",\"data\":");
        } else {
          lit(w, "{\"type\":\"audio\",\"data\":");
        }
        if (it.bytes) {
          lit(w, "\"");
          ContentImpl::base64(w, static_cast<const uint8_t*>(it.p), it.n);
          lit(w, "\"");
        } else {
          str(w, static_cast<const char*>(it.p));
        }
        lit(w, ",\"mimeType\":");
        str(w, mime);
        lit(w, "}");
        break;
      case ReturnKind::kResource: {
        const SpecDesc& spec = *c.spec_;
        // (embed is null when no tool of the spec returns a resource: then no list does.)
        if (spec.resources == nullptr || spec.resources->embed == nullptr) {
          return ContentImpl::fail(w, c, kNoResources);
        }
        Context& ctx = *c.ctx_;
        size_t n = 0;
        int code = spec.resources->embed(spec, it.a, w, ctx, ctx.scratch_, sizeof ctx.scratch_, &n);
        if (code != 0) {
          c.error_code_ = code;
          c.error_len_ = n;
          return ContentImpl::fail(w, c, kResourceFailed);
        }
        break;
      }
      default: break;
    }
  }
}

size_t ServerImpl::items_error(Server& s, const void* request) {
  const Request& rq = *static_cast<const Request*>(request);
  ContentItems& c = s.ctx_.items_;
  uint8_t e = c.error_;
  c.error_ = kNoError;
  if (e == kResourceFailed) return error(s, rq, c.error_code_, s.ctx_.scratch_, c.error_len_);
  Msg m = head(s, kInternalError);
  m.add("handler of ", c.error_tool_);
  if (e == kTooMany) {
    m.add(" added more content items than MCPGEN_CONTENT_ITEMS (").add_int(MCPGEN_CONTENT_ITEMS).add(")");
  } else if (e == kNoResources) {
    m.add(" returned a resource item, but the spec declares no tool that returns one");
  } else {
    m.add(" returned the items ");
    ContentImpl::kinds(m, nullptr, c.items_, c.count_);
    m.add(", the spec declares ");
    ContentImpl::kinds(m, c.declared_, nullptr, c.declared_count_);
  }
  return error(s, rq, kInternalError, m);
}

}  // namespace mcpgen
