#pragma once
#include <stdarg.h>

typedef int (*vprintf_like_t)(const char*, va_list);
vprintf_like_t esp_log_set_vprintf(vprintf_like_t func);
// One call of the hook per line, as ESP-IDF's log v1 makes it.
void fake_esp_log(const char* fmt, ...);
#define ESP_LOGI(tag, fmt, ...) fake_esp_log("I (0) %s: " fmt "\n", tag, ##__VA_ARGS__)
#define ESP_LOGE(tag, fmt, ...) fake_esp_log("E (0) %s: " fmt "\n", tag, ##__VA_ARGS__)
