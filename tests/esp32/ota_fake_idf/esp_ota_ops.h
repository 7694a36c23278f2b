#pragma once
#include "esp_partition.h"
#include "fake_idf.h"
inline const esp_partition_t* esp_ota_get_running_partition() { return &fake.active; }
inline const esp_partition_t* esp_ota_get_next_update_partition(const esp_partition_t*) { return &fake.passive; }
inline esp_err_t esp_ota_get_state_partition(const esp_partition_t*, esp_ota_img_states_t* s) {
  *s = fake.pending ? ESP_OTA_IMG_PENDING_VERIFY : ESP_OTA_IMG_VALID;
  return ESP_OK;
}
inline esp_err_t esp_ota_mark_app_valid_cancel_rollback() {
  ++fake.marked_valid;
  fake.pending = false;
  return ESP_OK;
}
inline esp_err_t esp_ota_mark_app_invalid_rollback_and_reboot() {
  ++fake.rolled_back;
  return ESP_OK;  // the real one reboots; the driver reports it instead
}
