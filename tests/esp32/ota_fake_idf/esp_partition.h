#pragma once
#include "fake_idf.h"
inline esp_err_t esp_partition_read(const esp_partition_t*, size_t off, void* dst, size_t n) {
  if (off + n > fake.written) return ESP_FAIL;
  memcpy(dst, fake.slot + off, n);
  return ESP_OK;
}
