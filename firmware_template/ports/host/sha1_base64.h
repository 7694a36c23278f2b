// SHA-1 (RFC 3174) and base64 (RFC 4648), just enough for the WebSocket handshake.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace hostport {

void sha1(const void* data, size_t len, uint8_t digest[20]);

// Writes the base64 text of data plus a NUL; out needs 4 * ((len + 2) / 3) + 1 bytes.
// Returns the text length.
size_t base64_encode(const uint8_t* data, size_t len, char* out);

}  // namespace hostport
