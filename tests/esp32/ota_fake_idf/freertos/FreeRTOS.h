#pragma once
#include "fake_idf.h"
typedef int BaseType_t;
typedef unsigned TickType_t;
#define pdPASS 1
#define pdTRUE 1
#define portMAX_DELAY 0xffffffffu
