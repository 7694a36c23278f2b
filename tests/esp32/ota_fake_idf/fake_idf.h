// The fake ESP-IDF's state and types (see README.md). Each fake header includes this one.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sdkconfig.h"

typedef int esp_err_t;
#define ESP_OK 0
#define ESP_FAIL -1
#define ESP_ERR_NO_MEM 0x101
#define ESP_ERR_INVALID_VERSION 0x10A
#define ESP_ERR_HTTP_BASE 0x7000
#define ESP_ERR_HTTP_CONNECT (ESP_ERR_HTTP_BASE + 2)
#define ESP_ERR_HTTPS_OTA_BASE 0x9000
#define ESP_ERR_HTTPS_OTA_IN_PROGRESS (ESP_ERR_HTTPS_OTA_BASE + 1)

inline const char* esp_err_to_name(esp_err_t e) {
  switch (e) {
    case ESP_OK: return "ESP_OK";
    case ESP_ERR_HTTP_CONNECT: return "ESP_ERR_HTTP_CONNECT";
    case ESP_ERR_INVALID_VERSION: return "ESP_ERR_INVALID_VERSION";
    default: return "ESP_FAIL";
  }
}

// The layout the driver's test images are built with (tests/esp32/test_esp32_ota_logic.py).
typedef struct __attribute__((packed)) {
  uint8_t magic;
  uint8_t segment_count;
  uint8_t spi_mode;
  uint8_t spi_speed_size;
  uint32_t entry_addr;
  uint8_t wp_pin;
  uint8_t spi_pin_drv[3];
  uint16_t chip_id;
  uint8_t rest[10];
} esp_image_header_t;
#define ESP_IMAGE_HEADER_MAGIC 0xE9

typedef struct {
  uint32_t magic_word;
  uint32_t secure_version;
  uint32_t reserv1[2];
  char version[32];
  char project_name[32];
  char rest[256 - 4 - 4 - 8 - 64];
} esp_app_desc_t;
constexpr size_t kFakeDescOffset = sizeof(esp_image_header_t) + 8;  // after the first segment header

typedef struct {
  char label[17];
} esp_partition_t;

typedef enum { ESP_OTA_IMG_VALID = 2, ESP_OTA_IMG_PENDING_VERIFY = 1 } esp_ota_img_states_t;

typedef void (*esp_timer_cb_t)(void*);

struct FakeIdf {
  // set by the driver
  bool pending = false;  // the running image's state is PENDING_VERIFY
  esp_app_desc_t running = {};
  // the passive slot
  esp_partition_t passive = {"ota_1"};
  esp_partition_t active = {"ota_0"};
  unsigned char slot[1 << 21];
  size_t written = 0;
  // recorded
  int begun = 0, finished = 0, aborted = 0, marked_valid = 0, rolled_back = 0, restarts = 0;
  esp_timer_cb_t timer_cb[4] = {};
  void* timer_arg[4] = {};
  const char* timer_name[4] = {};
  uint64_t timer_us[4] = {};
  int timers = 0;
};
extern FakeIdf fake;
