// The resources code's internal parts, shared by its files as server_impl.h is by the
// Server's (resources.h is the public side). Included only by the core's resources.cpp
// and resource_*.cpp: never by ports, handlers or generated code.
//
// | file | job |
// | resources.cpp | dispatch of resources/*, resources/read and the embedded read (the
// |   content of one resource written into a reply) |
// | resource_uri.cpp | a URI matched against the table, its template variables decoded |
// | resource_list.cpp | resources/list and resources/templates/list pages and cursors |
// | resource_subscribe.cpp | resources/(un)subscribe and notifications/resources/updated |
// | resource_writer.cpp | ResourceWriter: text escaped and bytes base64-encoded into the reply |
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcpgen/json_reader.h"
#include "mcpgen/resources.h"
#include "mcpgen/text_format.h"

namespace mcpgen {

struct ResourceImpl {
  static constexpr int kInvalidParams = -32602;
  static constexpr int kMethodNotFound = -32601;
  static constexpr int kInternalError = -32603;
  static constexpr int kResourceNotFound = -32002;  // MCP: "Resource not found"
  static constexpr size_t kCursorLen = 12;  // like tools/list: 4 hex digits of index + 8 of check
  static constexpr size_t kQuoteLimit = 64;
  static constexpr uint8_t kMaxVariables = 8;  // == MAX_TEMPLATE_VARIABLES in codegen's rules

  // An error message built in the caller's buffer, cut (never overrun) when it is full.
  struct Text {
    char* p;
    size_t cap;
    size_t n = 0;
    Text(char* buf, size_t c) : p(buf), cap(c) {}
    Text& add(const char* s, size_t len) {
      if (len > cap - 1 - n) len = cap - 1 - n;
      memcpy(p + n, s, len);
      n += len;
      p[n] = '\0';
      return *this;
    }
    Text& add(const char* s) { return add(s, strlen(s)); }
    Text& quote(const char* s, size_t len) {
      add("\"");
      if (len > kQuoteLimit) {
        add(s, kQuoteLimit).add("...");
      } else {
        add(s, len);
      }
      return add("\"");
    }
    Text& num(int64_t v) {
      char tmp[21];
      return add(tmp, format_int64(v, tmp));
    }
  };

  // A template variable's value in the URI, and its name in the template (noted by the
  // matcher, which passes over it anyway).
  struct Span {
    char* p;
    size_t n;
    const char* name;
    size_t name_len;
  };

  // The decoded text of a string value: its raw bytes when it has no escape, else
  // unescaped in place.
  static const char* text_of(const json::Value& v, size_t* len) {
    if (!v.esc) {
      *len = v.n - 2;
      return v.p + 1;
    }
    return json::unescape(v, len);
  }

  // Counts n more bytes of content: false (the chunk is dropped) when they exceed the
  // resource's max_size or the read already failed.
  static bool admit(ResourceWriter& out, size_t n) {
    if (out.max_size_ != 0 && n > out.max_size_ - out.size_) out.too_large_ = true;
    if (out.too_large_ || out.wrong_kind_ || out.w_.overflowed()) return false;
    out.size_ += n;
    return true;
  }

  // An escaped string between raw fragments (no comma bookkeeping, like ServerImpl::str).
  static void str(JsonWriter& w, const char* s, size_t n) {
    w.need_comma_ = false;
    w.string(s, n);
  }

  // n bytes at the end of the reply for the caller to fill (JsonWriter::put() without
  // the copy): nullptr when they do not fit (the writer overflows, as put() would) or
  // when measuring (they are only counted). Here, not in json_writer.cpp, so the writer
  // every tool reply uses compiles as before.
  static char* room(JsonWriter& w, size_t n) {
    if (w.overflow_) return nullptr;
    if (w.buf_ == nullptr) {
      w.len_ += n;
      return nullptr;
    }
    if (n > w.cap_ - w.len_) {
      w.overflow_ = true;
      return nullptr;
    }
    char* o = w.buf_ + w.len_;
    w.len_ += n;
    return o;
  }

  // A fixed piece of a read's reply: room() and a copy of a constant size, which the
  // compiler does inline (raw_fragment() pays a call of memcpy for these few bytes).
  template <size_t N>
  static void piece(JsonWriter& w, const char (&s)[N]) {
    if (char* o = room(w, N - 1)) memcpy(o, s, N - 1);
  }

  // ---------------------------------------------------------------- resources.cpp
  // resources/read: the resource found by params.uri, the reply's head, its content.
  static int read(const SpecDesc& spec, const json::Params& params, JsonWriter& w, Context& ctx, Text& m);
  // The content of resource rd (after its opening quote): the template's variables
  // decoded, the handler called, its status checked. resources/read and embedded
  // resources share it (always inlined into both, in resources.cpp).
  __attribute__((always_inline)) static inline int content(const ResourceTable& t, const ResourceDesc& rd, Span* vars,
                                                           uint8_t var_count, JsonWriter& w, Context& ctx, Text& m);

  // ---------------------------------------------------------------- resource_uri.cpp
  // Matches uri[0, n) against a level 1 template (its variables noted in vars).
  static bool match(const char* tpl, char* uri, size_t n, Span* vars, uint8_t* count);
  // The resource whose URI (or template) matches uri[0, n), or nullptr.
  static const ResourceDesc* find(const ResourceTable& t, char* uri, size_t n, Span* vars, uint8_t* count);
  // The resource named by params.uri (its variables in vars), or an error code with its
  // message in m: the lookup resources/read and resources/(un)subscribe share.
  static int resource_of(const ResourceTable& t, const json::Params& params, Text& m, char** uri, size_t* n, Span* vars,
                         uint8_t* count, const ResourceDesc** found);
  // Decodes the template's variables into args, each checked like a tool argument: 0, or
  // the error code with its message in m.
  static int decode_vars(const ResourceDesc& r, Span* vars, uint8_t count, void* args, Text& m);

  // ---------------------------------------------------------------- resource_list.cpp
  // resources/list (templates false) or resources/templates/list: one page.
  static int list(const SpecDesc& spec, bool templates, const json::Params& params, JsonWriter& w, Text& m);

  // ---------------------------------------------------------------- resource_subscribe.cpp
  // resources/subscribe (on) and resources/unsubscribe.
  static int subscribe(const SpecDesc& spec, const json::Params& params, JsonWriter& w, Text& m, bool on);
};

}  // namespace mcpgen
