// See line_reader.h.
#include "mcpgen/line_reader.h"

namespace mcpgen {

LineReader::Event LineReader::end_line() {
  size_t n = len_;
  len_ = 0;
  if (discarding_) {
    discarding_ = false;
    line_len_ = n;  // cap - 1: the first bytes of the line, kept for its id
    return Event::kOversized;
  }
  if (n > 0 && buf_[n - 1] == '\r') --n;
  bool blank = true;
  for (size_t k = 0; k < n && blank; ++k) blank = buf_[k] == ' ' || buf_[k] == '\t';
  if (blank) return Event::kNone;
  line_len_ = n;
  return Event::kLine;
}

LineReader::Event LineReader::feed(const char* data, size_t len, size_t* used) {
  for (size_t i = 0; i < len; ++i) {
    const Event ev = push(data[i]);
    if (ev != Event::kNone) {
      *used = i + 1;
      return ev;
    }
  }
  *used = len;
  return Event::kNone;
}

LineReader::Event LineReader::finish() {
  if (len_ == 0 && !discarding_) return Event::kNone;
  return end_line();
}

}  // namespace mcpgen
