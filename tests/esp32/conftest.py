"""ESP32 tests: see esp32_testlib.py for the shared helpers."""

from __future__ import annotations
