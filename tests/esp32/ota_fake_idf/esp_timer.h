#pragma once
#include "fake_idf.h"
typedef int* esp_timer_handle_t;
typedef struct {
  esp_timer_cb_t callback;
  void* arg;
  int dispatch_method;
  const char* name;
  bool skip_unhandled_events;
} esp_timer_create_args_t;
inline esp_err_t esp_timer_create(const esp_timer_create_args_t* a, esp_timer_handle_t* h) {
  if (fake.timers >= 4) return ESP_ERR_NO_MEM;
  fake.timer_cb[fake.timers] = a->callback;
  fake.timer_arg[fake.timers] = a->arg;
  fake.timer_name[fake.timers] = a->name;
  static int ids[4];
  ids[fake.timers] = fake.timers;
  *h = &ids[fake.timers++];
  return ESP_OK;
}
inline esp_err_t esp_timer_start_once(esp_timer_handle_t h, uint64_t us) {
  fake.timer_us[*h] = us;
  return ESP_OK;
}
inline esp_err_t esp_timer_stop(esp_timer_handle_t h) {
  fake.timer_us[*h] = 0;
  return ESP_OK;
}
