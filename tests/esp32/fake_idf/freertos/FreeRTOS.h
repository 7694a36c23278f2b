// Fake FreeRTOS for the host test of transport_serial.cpp (see ../README.md).
#pragma once
#include <stdint.h>

typedef uint32_t TickType_t;
typedef int BaseType_t;
typedef void* TaskHandle_t;
typedef void* QueueHandle_t;
typedef void (*TaskFunction_t)(void*);
#define portMAX_DELAY 0xffffffffu
#define pdMS_TO_TICKS(ms) (static_cast<TickType_t>(ms))
#define pdPASS 1
#define pdTRUE 1
#define pdFALSE 0

BaseType_t xPortInIsrContext();
