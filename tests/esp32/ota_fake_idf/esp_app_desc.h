#pragma once
#include "fake_idf.h"
inline const esp_app_desc_t* esp_app_get_description() { return &fake.running; }
