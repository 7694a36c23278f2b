#pragma once
#include "fake_idf.h"
