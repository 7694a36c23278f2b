// Newline-delimited framing of the stdio / serial transports (the MCP stdio framing: one
// JSON message per line), shared by every port that reads a byte stream: the host
// simulator's --stdio, the bare-metal UART loop of the QEMU boards and the ESP-IDF serial
// transport. The buffer belongs to the port (no heap): a line is delivered in place.
//
// * '\n' ends a line; a '\r' just before it is dropped (CRLF from terminals and Windows);
// * blank lines (nothing but spaces and tabs) are skipped;
// * a line longer than the buffer (cap - 1 bytes of text: one byte stays free for the
//   core's NUL) is not delivered: the reader skips to its newline and then reports it as
//   oversized, with its first cap - 1 bytes still in the buffer, so the port can answer
//   with Session::on_oversized(data(), size()) and the reply carries the request's id.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace mcpgen {

class LineReader {
 public:
  enum class Event : uint8_t {
    kNone,  // the byte was taken; no line ended
    kLine,  // a line ended: data()/size() hold it until the next push/feed
    kOversized,  // a line longer than the buffer ended: data()/size() hold its first bytes
  };

  // `buf` holds cap bytes (MCPGEN_REQUEST_BUFFER_SIZE, typically); cap >= 2.
  LineReader(char* buf, size_t cap) : buf_(buf), cap_(cap) {}

  // One byte of the stream (the UART loops read byte by byte). Inline: it runs per byte.
  Event push(char c) {
    if (c == '\n') return end_line();
    if (discarding_) return Event::kNone;
    if (len_ + 1 >= cap_) {  // keep one byte for the core's NUL
      discarding_ = true;
      return Event::kNone;
    }
    buf_[len_++] = c;
    return Event::kNone;
  }

  // Bytes read in chunks (read(2), a UART driver): takes data[0..len) up to and including
  // the first line end that makes an event, sets *used to the bytes taken, and returns the
  // event (kNone when all len bytes were taken without one). Call again with the rest.
  Event feed(const char* data, size_t len, size_t* used);

  // End of the stream: the last line when it had no newline (kLine / kOversized), else kNone.
  Event finish();

  // The line of the last kLine / kOversized event; data() has room for size() + 1 bytes.
  char* data() const { return buf_; }
  size_t size() const { return line_len_; }
  // True while the bytes of an oversized line are being skipped.
  bool discarding() const { return discarding_; }

 private:
  Event end_line();

  char* buf_;
  size_t cap_;
  size_t len_ = 0;  // bytes of the line being read
  size_t line_len_ = 0;  // bytes of the line last delivered
  bool discarding_ = false;
};

}  // namespace mcpgen
