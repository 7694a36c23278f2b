#pragma once
#include "fake_idf.h"
inline esp_err_t esp_crt_bundle_attach(void*) { return ESP_OK; }
