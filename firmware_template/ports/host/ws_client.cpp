#include "ws_client.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <unistd.h>

#include "sha1_base64.h"

namespace hostport {
namespace {

const char kWsGuid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

bool header_value_has_token(const char* value, const char* token) {
  size_t n = strlen(token);
  for (const char* p = value; *p != '\0'; ++p) {
    if (strncasecmp(p, token, n) == 0) return true;
  }
  return false;
}

// Close codes a peer may send (RFC 6455 7.4.1 and the IANA registry); 1005, 1006 and 1015
// are reserved for reporting and must never appear in a frame.
bool valid_close_code(uint16_t code) {
  if (code >= 3000 && code <= 4999) return true;
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
}

}  // namespace

void random_bytes(void* buf, size_t n) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  size_t got = 0;
  if (fd >= 0) {
    while (got < n) {
      ssize_t r = read(fd, static_cast<char*>(buf) + got, n - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    ::close(fd);
  }
  static uint64_t state = 0;
  if (state == 0) state = static_cast<uint64_t>(now_ms()) ^ (static_cast<uint64_t>(getpid()) << 32) ^ 1;
  for (; got < n; ++got) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    static_cast<uint8_t*>(buf)[got] = static_cast<uint8_t>(state);
  }
}

bool parse_ws_url(const char* url, WsUrl* out, char* err, size_t err_cap) {
  const char* p = url;
  if (strncmp(p, "ws://", 5) != 0) {
    snprintf(err, err_cap, "unsupported URL %s (only ws:// is supported)", url);
    return false;
  }
  p += 5;
  const char* host_end = p;
  if (*p == '[') {  // [IPv6]
    host_end = strchr(p, ']');
    if (host_end == nullptr) {
      snprintf(err, err_cap, "bad IPv6 host in %s", url);
      return false;
    }
    ++p;
  } else {
    while (*host_end != '\0' && *host_end != ':' && *host_end != '/' && *host_end != '?') ++host_end;
  }
  size_t host_len = static_cast<size_t>(host_end - p);
  if (host_len == 0 || host_len >= sizeof out->host) {
    snprintf(err, err_cap, "bad host in %s", url);
    return false;
  }
  memcpy(out->host, p, host_len);
  out->host[host_len] = '\0';
  p = host_end;
  if (*p == ']') ++p;
  snprintf(out->port, sizeof out->port, "80");
  if (*p == ':') {
    ++p;
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9') ++n;
    if (n == 0 || n >= sizeof out->port) {
      snprintf(err, err_cap, "bad port in %s", url);
      return false;
    }
    memcpy(out->port, p, n);
    out->port[n] = '\0';
    p += n;
  }
  if (*p == '\0') {
    snprintf(out->path, sizeof out->path, "/");
  } else if (*p == '/' || *p == '?') {
    int w = snprintf(out->path, sizeof out->path, "%s%s", *p == '?' ? "/" : "", p);
    if (w < 0 || static_cast<size_t>(w) >= sizeof out->path) {
      snprintf(err, err_cap, "path too long in %s", url);
      return false;
    }
  } else {
    snprintf(err, err_cap, "bad URL %s", url);
    return false;
  }
  return true;
}

WsClient::WsClient() : TcpStream("connection closed by peer") {}

bool WsClient::connect(const WsUrl& url, const HttpHeader* headers, size_t header_count, int timeout_ms,
                       char* err, size_t err_cap) {
  if (!open(url.host, url.port, err, err_cap)) return false;

  uint8_t nonce[16];
  random_bytes(nonce, sizeof nonce);
  char key[32];
  base64_encode(nonce, sizeof nonce, key);

  char req[4096];
  int n = snprintf(req, sizeof req,
                   "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n",
                   url.path, url.host, url.port, key);
  for (size_t i = 0; i < header_count && n > 0 && static_cast<size_t>(n) < sizeof req; ++i) {
    n += snprintf(req + n, sizeof req - static_cast<size_t>(n), "%s: %s\r\n", headers[i].name,
                  headers[i].value);
  }
  if (n > 0 && static_cast<size_t>(n) < sizeof req) n += snprintf(req + n, sizeof req - n, "\r\n");
  if (n <= 0 || static_cast<size_t>(n) >= sizeof req) {
    snprintf(err, err_cap, "handshake request too long");
    fail("handshake request too long");
    return false;
  }
  if (!send_all(req, static_cast<size_t>(n), false)) {
    snprintf(err, err_cap, "sending the handshake failed: %s", error_);
    return false;
  }

  // Read the response head byte by byte up to the blank line (the rest stays buffered).
  char head[4096];
  size_t hl = 0;
  int64_t deadline = now_ms() + timeout_ms;
  while (hl < 4 || memcmp(head + hl - 4, "\r\n\r\n", 4) != 0) {
    if (hl + 1 >= sizeof head) {
      snprintf(err, err_cap, "handshake response head too long");
      fail("bad handshake");
      return false;
    }
    int r = read_exact(head + hl, 1, deadline);
    if (r <= 0) {
      snprintf(err, err_cap, "handshake response: %s", r == 0 ? "timed out" : error_);
      if (fd_ >= 0) fail("timeout");
      return false;
    }
    ++hl;
  }
  head[hl] = '\0';
  if (strncmp(head, "HTTP/1.1 101", 12) != 0) {
    char* eol = strstr(head, "\r\n");
    if (eol != nullptr) *eol = '\0';
    snprintf(err, err_cap, "handshake rejected: %s", head);
    fail("handshake rejected");
    return false;
  }
  char expected[32];
  {
    char concat[96];
    snprintf(concat, sizeof concat, "%s%s", key, kWsGuid);
    uint8_t digest[20];
    sha1(concat, strlen(concat), digest);
    base64_encode(digest, sizeof digest, expected);
  }
  bool upgrade = false, connection = false, accept = false;
  for (char* line = strstr(head, "\r\n"); line != nullptr;) {
    line += 2;
    char* eol = strstr(line, "\r\n");
    if (eol == nullptr || eol == line) break;
    *eol = '\0';
    char* colon = strchr(line, ':');
    if (colon != nullptr) {
      *colon = '\0';
      char* value = colon + 1;
      while (*value == ' ' || *value == '\t') ++value;
      char* vend = value + strlen(value);
      while (vend > value && (vend[-1] == ' ' || vend[-1] == '\t')) *--vend = '\0';
      if (strcasecmp(line, "Upgrade") == 0) upgrade = strcasecmp(value, "websocket") == 0;
      if (strcasecmp(line, "Connection") == 0) connection = header_value_has_token(value, "upgrade");
      if (strcasecmp(line, "Sec-WebSocket-Accept") == 0) accept = strcmp(value, expected) == 0;
    }
    line = eol;
  }
  if (!upgrade || !connection || !accept) {
    snprintf(err, err_cap, "handshake response invalid (%s)",
             !accept ? "Sec-WebSocket-Accept mismatch" : "missing Upgrade/Connection");
    fail("bad handshake");
    return false;
  }
  return true;
}

bool WsClient::send_frame(uint8_t opcode, const char* data, size_t len) {
  if (fd_ < 0) return false;
  uint8_t hdr[14];
  size_t hn = 0;
  hdr[hn++] = static_cast<uint8_t>(0x80 | opcode);
  if (len < 126) {
    hdr[hn++] = static_cast<uint8_t>(0x80 | len);
  } else if (len <= 0xFFFF) {
    hdr[hn++] = 0x80 | 126;
    hdr[hn++] = static_cast<uint8_t>(len >> 8);
    hdr[hn++] = static_cast<uint8_t>(len);
  } else {
    hdr[hn++] = 0x80 | 127;
    for (int i = 7; i >= 0; --i) hdr[hn++] = static_cast<uint8_t>(static_cast<uint64_t>(len) >> (8 * i));
  }
  uint8_t mask[4];
  random_bytes(mask, sizeof mask);
  memcpy(hdr + hn, mask, 4);
  hn += 4;
  if (!send_all(hdr, hn, false)) return false;
  uint8_t chunk[512];
  for (size_t off = 0; off < len;) {
    size_t n = len - off < sizeof chunk ? len - off : sizeof chunk;
    for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<uint8_t>(data[off + i]) ^ mask[(off + i) & 3];
    if (!send_all(chunk, n, false)) return false;
    off += n;
  }
  return true;
}

bool WsClient::send_text(const char* data, size_t len) { return send_frame(0x1, data, len); }

void WsClient::close(uint16_t code) {
  if (fd_ < 0) return;
  char payload[2] = {static_cast<char>(code >> 8), static_cast<char>(code & 0xFF)};
  send_frame(0x8, payload, sizeof payload);
  close_socket();
}

WsClient::Recv WsClient::protocol_error(const char* what) {
  close(1002);
  snprintf(error_, sizeof error_, "protocol error from server: %s", what);
  return Recv::kError;
}

// Reads and discards n payload bytes. n is the peer's 64-bit length, so it is consumed in
// size_t-sized chunks rather than cast (a 32-bit size_t would truncate it).
bool WsClient::skip(uint64_t n) {
  while (n > 0) {
    size_t chunk = n > static_cast<uint64_t>(SIZE_MAX) ? SIZE_MAX : static_cast<size_t>(n);
    if (read_exact(nullptr, chunk, -1) <= 0) return false;
    n -= chunk;
  }
  return true;
}

WsClient::Recv WsClient::receive(char* buf, size_t cap, size_t* len, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  if (cap == 0) return Recv::kError;  // no room even for the NUL
  // Invariant: total <= cap - 1, so "room" below never wraps. Every check compares a
  // peer-supplied length against the room left (a subtraction of trusted values), never
  // total + length, which wrapped for a declared length of 2^64-1 (issue 18).
  size_t total = 0;
  bool in_message = false;  // inside a fragmented message
  bool message_is_text = false;
  bool oversized = false;
  for (;;) {
    if (fd_ < 0) return Recv::kError;
    uint8_t h[2];
    int r = read_exact(h, 2, deadline);
    if (r <= 0) return r == 0 ? Recv::kTimeout : Recv::kError;
    bool fin = (h[0] & 0x80) != 0;
    uint8_t opcode = h[0] & 0x0F;
    bool masked = (h[1] & 0x80) != 0;
    uint64_t plen = h[1] & 0x7F;
    if ((h[0] & 0x70) != 0) return protocol_error("reserved bits set");  // no extensions
    if (masked) return protocol_error("masked frame");  // server frames are never masked
    if (plen >= 126) {
      uint8_t ext[8];
      size_t en = plen == 126 ? 2 : 8;
      if (read_exact(ext, en, -1) <= 0) return Recv::kError;
      plen = 0;
      for (size_t i = 0; i < en; ++i) plen = (plen << 8) | ext[i];
      // RFC 6455 5.2: the most significant bit of a 64-bit length must be 0.
      if (en == 8 && (plen >> 63) != 0) return protocol_error("payload length above 2^63");
    }
    if (opcode >= 0x8) {  // control frame
      if (plen > 125 || !fin) return protocol_error("bad control frame");
      char payload[125];
      if (read_exact(payload, static_cast<size_t>(plen), -1) <= 0) return Recv::kError;
      if (opcode == 0x9) {
        if (!send_frame(0xA, payload, static_cast<size_t>(plen))) return Recv::kError;
      } else if (opcode == 0x8) {
        // An empty payload means "no code" (answered with 1000); one byte cannot hold a
        // code and an invalid code is a protocol error (RFC 6455 5.5.1, 7.4): both get 1002.
        uint16_t code = 1000;
        if (plen == 1) return protocol_error("1-byte close payload");
        if (plen >= 2) {
          code = static_cast<uint16_t>((static_cast<uint8_t>(payload[0]) << 8) | static_cast<uint8_t>(payload[1]));
          if (!valid_close_code(code)) return protocol_error("invalid close code");
        }
        close(code);
        snprintf(error_, sizeof error_, "closed by server (code %u)", code);
        return Recv::kClosed;
      } else if (opcode != 0xA) {
        return protocol_error("unknown control opcode");
      }
      continue;  // pong
    }
    if (opcode == 0x1 || opcode == 0x2) {
      if (in_message) return protocol_error("new message inside a fragmented one");
      in_message = true;
      message_is_text = opcode == 0x1;
      total = 0;
      oversized = false;
    } else if (opcode != 0x0 || !in_message) {
      return protocol_error(opcode == 0x0 ? "continuation without a message" : "unknown opcode");
    }
    size_t room = cap - 1 - total;
    if (message_is_text && !oversized && plen <= static_cast<uint64_t>(room)) {
      if (read_exact(buf + total, static_cast<size_t>(plen), -1) <= 0) return Recv::kError;
      total += static_cast<size_t>(plen);
    } else {
      if (message_is_text) oversized = true;
      if (!skip(plen)) return Recv::kError;
    }
    if (!fin) continue;
    in_message = false;
    if (!message_is_text) continue;  // binary (audio): not for the MCP core
    if (oversized) return Recv::kOversized;
    buf[total] = '\0';
    *len = total;
    return Recv::kMessage;
  }
}

}  // namespace hostport
