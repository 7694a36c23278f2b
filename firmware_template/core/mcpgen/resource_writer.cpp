// ResourceWriter: a resource handler's content written straight into the reply, text
// JSON-escaped and bytes base64-encoded (see resources.h and resource_impl.h).
#include <string.h>

#include "mcpgen/resource_impl.h"

namespace mcpgen {

namespace {
const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";  // one copy
}  // namespace

void ResourceWriter::text(const char* s, size_t n) {
  if (binary_) wrong_kind_ = true;
  if (n == 0 || !ResourceImpl::admit(*this, n)) return;
  w_.escaped(s, n);  // straight into the reply, between the quotes read() wrote
}

void ResourceWriter::bytes(const void* data, size_t n) {
  if (!binary_) wrong_kind_ = true;
  if (n == 0 || !ResourceImpl::admit(*this, n)) return;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const uint8_t* end = p + n;
  uint8_t g[3];
  while (p < end) {
    uint8_t k = pending_n_;
    memcpy(g, pending_, k);
    while (k < 3 && p < end) g[k++] = *p++;
    if (k < 3) {  // keep the tail for the next call (or finish())
      memcpy(pending_, g, k);
      pending_n_ = k;
      return;
    }
    pending_n_ = 0;
    char q[4] = {kB64[g[0] >> 2], kB64[((g[0] & 3) << 4) | (g[1] >> 4)], kB64[((g[1] & 15) << 2) | (g[2] >> 6)],
                 kB64[g[2] & 63]};
    w_.put(q, 4);
  }
}

void ResourceWriter::finish() {
  if (pending_n_ == 0) return;
  uint8_t a = pending_[0];
  uint8_t b = pending_n_ > 1 ? pending_[1] : 0;
  char q[4] = {kB64[a >> 2], kB64[((a & 3) << 4) | (b >> 4)], pending_n_ > 1 ? kB64[(b & 15) << 2] : '=', '='};
  w_.put(q, 4);
  pending_n_ = 0;
}

}  // namespace mcpgen
