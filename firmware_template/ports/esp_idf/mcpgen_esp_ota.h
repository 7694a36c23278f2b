// Over-the-air updates of the ESP-IDF port (docs/ota.md, "ESP-IDF"): the built-in
// self.upgrade_firmware of a spec with device.ota (mcpgen_esp_ota.cpp) and the two hooks
// the rest of the port calls. Without device.ota the hooks are empty inline functions
// and mcpgen_esp_ota.cpp compiles to nothing.
#pragma once

#include <stddef.h>

#include "mcp_tools.h"

namespace mcpgen_esp {

#if defined(MCPGEN_SPEC_OTA)
// At boot, before the network: a new image still pending verification (app rollback)
// starts its deadline; it rolls back and reboots unless ota_observe saw the session
// complete in time.
void ota_boot();
// On the worker task, for each incoming message before the core handles it (msg is
// read, not changed), and `replied` after: a pending image marks itself valid once it
// answered initialize and then one more request of the backend.
void ota_observe(const char* msg, size_t len);
void ota_replied(bool sent);
#else
inline void ota_boot() {}
inline void ota_observe(const char*, size_t) {}
inline void ota_replied(bool) {}
#endif

}  // namespace mcpgen_esp
