#!/usr/bin/env bash
# Compiles the generated ESP32 firmware (ESP-IDF port, core, generated code, handlers) for
# esp32, esp32s3 and esp32c3 with the host g++ against local checkouts of ESP-IDF (with
# submodules), espressif/esp-protocols and the ESP newlib (see docs/firmware.md).
#   MCPGEN_ESP_IDF=~/esp/esp-idf MCPGEN_ESP_PROTOCOLS=~/esp/esp-protocols \
#   MCPGEN_ESP_NEWLIB=~/esp/newlib-esp32 scripts/check_esp_idf.sh [--board esp32c3] [--keep DIR]
# Every option of `python -m mcpgen.codegen.checks.esp_idf_headers --help` is passed through.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
exec "$PY" -m mcpgen.codegen.checks.esp_idf_headers "$@"
