// The OTA image marker (docs/ota.md), one copy for every port that updates itself
// (ports/esp_idf on esp_https_ota, ports/host in the simulator's two slots): a firmware
// built with `device.ota: true` carries "MCPGEN-OTA-IMAGE|name|version|fingerprint|"
// (a 16-hex spec fingerprint), the update handler finds it in a downloaded image, and the
// backend reads it with mcpgen.runtime.ota.read_image (the same rule as a regex).
// Header-only, the C library only, so both ports include it from the core. Beside the
// marker: the URL rule (no control characters, checked before any request) and the version
// order the downgrade check uses, so both ports refuse the same requests with the same words.
#pragma once

#include <stddef.h>
#include <string.h>

// The marker's text for the spec being built (a string literal, from the generated macros).
#define MCPGEN_OTA_MARKER_PREFIX "MCPGEN-OTA-IMAGE|"
#define MCPGEN_OTA_IMAGE_MARKER(name, version, fingerprint) \
  MCPGEN_OTA_MARKER_PREFIX name "|" version "|" fingerprint "|"

namespace mcpgen_ota {

constexpr size_t kFingerprintLen = 16;

struct Marker {
  char name[128];
  char version[72];
  char fingerprint[24];
};

// Finds the first well-formed marker in data[0, n): three non-empty fields ended by '|'
// (no NUL or newline inside), a name and version that fit, a 16-digit lower-case hex
// fingerprint. A malformed candidate is skipped and the search goes on.
inline bool find_marker(const char* data, size_t n, Marker* m) {
  const size_t plen = sizeof MCPGEN_OTA_MARKER_PREFIX - 1;
  for (size_t i = 0; i + plen < n; ++i) {
    if (memcmp(data + i, MCPGEN_OTA_MARKER_PREFIX, plen) != 0) continue;
    const char* p = data + i + plen;
    const char* end = data + n;
    const char* fields[3];
    size_t lens[3];
    bool ok = true;
    for (int k = 0; k < 3 && ok; ++k) {
      fields[k] = p;
      while (p < end && *p != '|' && *p != 0 && *p != '\n') ++p;
      lens[k] = static_cast<size_t>(p - fields[k]);
      ok = p < end && *p == '|' && lens[k] > 0;
      ++p;
    }
    if (!ok || lens[0] >= sizeof m->name || lens[1] >= sizeof m->version || lens[2] != kFingerprintLen) continue;
    if (strspn(fields[2], "0123456789abcdef") < kFingerprintLen) continue;
    memcpy(m->name, fields[0], lens[0]);
    m->name[lens[0]] = 0;
    memcpy(m->version, fields[1], lens[1]);
    m->version[lens[1]] = 0;
    memcpy(m->fingerprint, fields[2], kFingerprintLen);
    m->fingerprint[kFingerprintLen] = 0;
    return true;
  }
  return false;
}

// True when url holds a control character (below 0x20, or 0x7f): CR/LF would end the
// request line and inject headers, NUL would cut the URL short. Refused before any request.
inline bool url_has_control(const char* url) {
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(url); *p != 0; ++p) {
    if (*p < 0x20 || *p == 0x7f) return true;
  }
  return false;
}

// Orders two versions as dotted numbers ("0.10.0" > "0.9.3", "1.2" == "1.2.0"): each
// dot-separated part counts by its leading digits (a part without digits counts 0).
// Returns < 0, 0 or > 0 like strcmp.
inline int compare_versions(const char* a, const char* b) {
  while (*a != 0 || *b != 0) {
    unsigned long long x = 0, y = 0;
    for (; *a >= '0' && *a <= '9'; ++a) x = x * 10 + static_cast<unsigned long long>(*a - '0');
    for (; *b >= '0' && *b <= '9'; ++b) y = y * 10 + static_cast<unsigned long long>(*b - '0');
    if (x != y) return x < y ? -1 : 1;
    while (*a != 0 && *a != '.') ++a;
    while (*b != 0 && *b != '.') ++b;
    if (*a == '.') ++a;
    if (*b == '.') ++b;
  }
  return 0;
}

}  // namespace mcpgen_ota
