// esp_https_ota over a local file: file://PATH serves PATH; file://PATH?cut=N stops the
// stream (a dropped connection) after N bytes.
#pragma once
#include <stdlib.h>

#include "esp_http_client.h"
#include "fake_idf.h"

typedef void* esp_https_ota_handle_t;
typedef struct {
  const esp_http_client_config_t* http_config;
} esp_https_ota_config_t;

struct FakeOta {
  FILE* f;
  long size;
  long cut;
  long read;
  bool complete;
};

inline esp_err_t esp_https_ota_begin(const esp_https_ota_config_t* cfg, esp_https_ota_handle_t* h) {
  ++fake.begun;
  char path[512];
  const char* url = cfg->http_config->url;
  if (strncmp(url, "file://", 7) != 0) return ESP_ERR_HTTP_CONNECT;
  snprintf(path, sizeof path, "%s", url + 7);
  long cut = -1;
  if (char* q = strstr(path, "?cut=")) {
    cut = atol(q + 5);
    *q = 0;
  }
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return ESP_ERR_HTTP_CONNECT;
  fseek(f, 0, SEEK_END);
  FakeOta* o = new FakeOta{f, ftell(f), cut, 0, false};
  fseek(f, 0, SEEK_SET);
  fake.written = 0;
  *h = o;
  return ESP_OK;
}

inline esp_err_t esp_https_ota_get_img_desc(esp_https_ota_handle_t h, esp_app_desc_t* d) {
  FakeOta* o = static_cast<FakeOta*>(h);
  long at = ftell(o->f);
  fseek(o->f, static_cast<long>(kFakeDescOffset), SEEK_SET);
  size_t n = fread(d, 1, sizeof *d, o->f);
  fseek(o->f, at, SEEK_SET);
  return n == sizeof *d ? ESP_OK : ESP_FAIL;
}

inline int esp_https_ota_get_image_size(esp_https_ota_handle_t h) {
  return static_cast<int>(static_cast<FakeOta*>(h)->size);
}
inline int esp_https_ota_get_image_len_read(esp_https_ota_handle_t h) {
  return static_cast<int>(static_cast<FakeOta*>(h)->read);
}
inline bool esp_https_ota_is_complete_data_received(esp_https_ota_handle_t h) {
  return static_cast<FakeOta*>(h)->complete;
}

inline esp_err_t esp_https_ota_perform(esp_https_ota_handle_t h) {
  FakeOta* o = static_cast<FakeOta*>(h);
  unsigned char buf[4096];
  size_t want = sizeof buf;
  if (o->cut >= 0 && o->read + static_cast<long>(want) > o->cut) want = static_cast<size_t>(o->cut - o->read);
  size_t n = want > 0 ? fread(buf, 1, want, o->f) : 0;
  if (o->read == 0 && n >= sizeof(esp_image_header_t)) {  // as esp_https_ota: the chip, at the first bytes
    esp_image_header_t hdr;
    memcpy(&hdr, buf, sizeof hdr);
    if (hdr.chip_id != CONFIG_IDF_FIRMWARE_CHIP_ID) return ESP_ERR_INVALID_VERSION;
  }
  if (fake.written + n > sizeof fake.slot) return ESP_FAIL;
  memcpy(fake.slot + fake.written, buf, n);
  fake.written += n;
  o->read += static_cast<long>(n);
  if (n == 0) {
    if (o->cut >= 0 && o->read < o->size) return ESP_FAIL;  // the connection dropped
    o->complete = o->read == o->size;
    return ESP_OK;
  }
  return ESP_ERR_HTTPS_OTA_IN_PROGRESS;
}

inline esp_err_t esp_https_ota_finish(esp_https_ota_handle_t h) {
  FakeOta* o = static_cast<FakeOta*>(h);
  fclose(o->f);
  delete o;
  ++fake.finished;
  return ESP_OK;
}

inline esp_err_t esp_https_ota_abort(esp_https_ota_handle_t h) {
  FakeOta* o = static_cast<FakeOta*>(h);
  fclose(o->f);
  delete o;
  ++fake.aborted;
  return ESP_OK;
}
