#!/usr/bin/env bash
# ESP-IDF's own CMake configure + generate of the generated project, for every ESP-IDF tree
# named in MCPGEN_ESP_IDF_TREES (separated by ':') and every transport (docs/firmware.md,
# "Which ESP-IDF releases configure the project"). Needs cmake, ninja, the chip's compiler on
# PATH (riscv32-esp-elf-gcc for esp32c3), MCPGEN_ESP_PROTOCOLS (esp_websocket_client) and,
# for ESP-IDF 6.0+, MCPGEN_ESP_MQTT (espressif/esp-mqtt).
#   MCPGEN_ESP_IDF_TREES=~/esp/v5.3.5:~/esp/v5.5.5 scripts/configure_esp_idf.sh [--case serial] [--keep DIR]
# Every option of `python -m mcpgen.codegen.checks.esp_idf_configure --help` is passed through.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
exec "$PY" -m mcpgen.codegen.checks.esp_idf_configure "$@"
