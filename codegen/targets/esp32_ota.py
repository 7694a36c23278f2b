"""What ``device.ota: true`` changes in the generated ESP-IDF project (docs/ota.md, "ESP-IDF").

* ``partitions.csv`` becomes the two-slot table (``platformio/partitions_ota.csv``: otadata,
  ``ota_0``/``ota_1``, no factory app) instead of the single factory app;
* ``sdkconfig.defaults`` gains the bootloader's app rollback, the app descriptor's version
  from the spec (the update handler compares it with the requested one), and plain HTTP
  downloads for ``esp_https_ota`` (the image is trusted by its SHA-256, which the backend
  sends over the authenticated session, not by the channel; HTTPS URLs are verified
  against the certificate bundle).

The handler itself is the port's ``mcpgen_esp_ota.cpp``, compiled in every project and
empty without ``MCPGEN_SPEC_OTA``.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpgen.codegen import resources
from mcpgen.codegen.spec.model import Spec

SINGLE_APP_TABLE = "partitions.csv"
OTA_TABLE = "partitions_ota.csv"


def partition_table(spec: Spec) -> str:
    """The text of the project's ``partitions.csv`` for ``spec``."""
    name = OTA_TABLE if spec.device.ota else SINGLE_APP_TABLE
    return (resources.firmware_template() / "platformio" / name).read_text(encoding="utf-8")


def sdkconfig_lines(spec: Spec, quote: Callable[[str], str]) -> list[str]:
    """The ``sdkconfig.defaults`` lines of an OTA spec (none without ``device.ota``)."""
    if not spec.device.ota:
        return []
    return [
        "CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE=y",
        "CONFIG_APP_PROJECT_VER_FROM_CONFIG=y",
        f"CONFIG_APP_PROJECT_VER={quote(spec.device.version)}",
        "CONFIG_ESP_HTTPS_OTA_ALLOW_HTTP=y",
    ]
