#pragma once
#include "fake_idf.h"
typedef struct {
  const char* url;
  int timeout_ms;
  esp_err_t (*crt_bundle_attach)(void*);
  bool keep_alive_enable;
} esp_http_client_config_t;
