#pragma once
#include <stdint.h>

// The heap figures the serial transport logs at startup; the driver returns fixed values.
uint32_t esp_get_free_heap_size(void);
uint32_t esp_get_minimum_free_heap_size(void);
