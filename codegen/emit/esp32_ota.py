"""What ``device.ota: true`` changes in the generated ESP-IDF project (docs/ota.md, "ESP-IDF").

* ``partitions.csv`` becomes the two-slot table (``platformio/partitions_ota.csv``: otadata,
  ``ota_0``/``ota_1``, no factory app) instead of the single factory app;
* ``sdkconfig.defaults`` gains the bootloader's app rollback, the app descriptor's version
  from the spec (the update handler compares it with the requested one), and plain HTTP
  downloads for ``esp_https_ota`` (the image is trusted by its SHA-256, which the backend
  sends over the authenticated session, not by the channel; HTTPS URLs are verified
  against the certificate bundle).

With ``device.ota.public_key`` (signed images only), the ESP32 gets ESP-IDF's "signed app
images without hardware secure boot" in ``sdkconfig.defaults.esp32`` (ESP-IDF reads
``sdkconfig.defaults.<target>`` after ``sdkconfig.defaults``): the ECDSA scheme (the
ESP32's only ECDSA one; the ESP32-S3 and ESP32-C3 sign apps with RSA-3072 only, so a signed
spec refuses those boards), verification on update, the public key as
``signature_verification_key.bin`` (raw X and Y, what ``espsecure extract_public_key
--version 1`` writes), unsigned binaries from the build (``codegen ota --sign-key`` signs),
and the anti-rollback ``secure_version`` of the spec.

The handler itself is the port's ``mcpgen_esp_ota.cpp``, compiled in every project and
empty without ``MCPGEN_SPEC_OTA``.
"""

from __future__ import annotations

from collections.abc import Callable

from mcpgen.codegen import resources
from mcpgen.codegen.errors import BuildError
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


#: The raw public key the signed-app check compiles in (CONFIG_SECURE_BOOT_VERIFICATION_KEY,
#: relative to the project directory).
VERIFICATION_KEY = "signature_verification_key.bin"
#: The boards whose ESP-IDF signs apps with ECDSA without hardware secure boot.
SIGNED_BOARDS = ("esp32",)


def signed_sdkconfig(spec: Spec) -> str:
    """The text of ``sdkconfig.defaults.esp32`` for a signed spec ("" without ``public_key``)."""
    signing = spec.ota_signing
    if signing is None:
        return ""
    lines = [
        '# device.ota.public_key (docs/ota.md, "Signed images"): ESP-IDF verifies each update\'s',
        "# ECDSA signature block before it can boot; codegen ota --sign-key signs the images.",
        "CONFIG_SECURE_SIGNED_APPS_NO_SECURE_BOOT=y",
        "CONFIG_SECURE_SIGNED_APPS_ECDSA_SCHEME=y",
        "CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT=y",
        "# CONFIG_SECURE_SIGNED_ON_BOOT_NO_SECURE_BOOT is not set",
        "# CONFIG_SECURE_BOOT_BUILD_SIGNED_BINARIES is not set",
        f'CONFIG_SECURE_BOOT_VERIFICATION_KEY="{VERIFICATION_KEY}"',
        "# Anti-rollback: the bootloader boots no app whose secure_version is below the eFuse's.",
        "CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK=y",
        f"CONFIG_BOOTLOADER_APP_SECURE_VERSION={signing.secure_version}",
        "CONFIG_BOOTLOADER_APP_SEC_VER_SIZE_EFUSE_FIELD=32",
    ]
    return "\n".join(lines) + "\n"


def require_signing_supported(spec: Spec, board: str) -> None:
    """Raises ``BuildError`` for a signed spec on a board whose ESP-IDF has no ECDSA app signing."""
    if spec.ota_signing is not None and board not in SIGNED_BOARDS:
        raise BuildError(
            f"{spec.source}: device.ota.public_key: signed OTA images use ESP-IDF's ECDSA signed-app "
            f"scheme, which ESP-IDF offers on the esp32 only (the {board} signs apps with RSA-3072, the "
            "Secure Boot V2 scheme, which codegen does not produce). Build --target esp32 or host, or drop "
            f"public_key for the {board} (its updates are then trusted by their SHA-256 only)."
        )
