"""Checks of what the targets generate, run beside a build rather than as one.

``esp_idf_headers`` compiles a generated ESP32 project against the real ESP-IDF headers
with the host g++ where PlatformIO's toolchains cannot be downloaded
(``scripts/check_esp_idf.sh``). Checks import ``targets`` (to generate what they check);
nothing in the generator imports them.
"""
