#pragma once
#include "freertos/FreeRTOS.h"

BaseType_t xTaskCreate(TaskFunction_t fn, const char* name, uint32_t stack, void* arg, unsigned prio,
                       TaskHandle_t* out);
TaskHandle_t xTaskGetCurrentTaskHandle();
