#pragma once
#include "fake_idf.h"
inline void esp_restart() { ++fake.restarts; }
