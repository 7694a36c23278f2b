"""The built-in OTA tool a spec gets with ``device.ota: true`` (docs/ota.md).

The tool carries the stock xiaozhi-esp32 name, ``self.upgrade_firmware``, so a stock backend
recognises it. It is user-only: an assistant never sees it in tools/list (an update is an
operator's decision, never a model's). Its handler is the port's (the host simulator's
``ports/host/ota.cpp``, the ESP-IDF port's
``mcpgen_esp_ota.cpp``), never the user's: the handlers check and the starter skip it.
"""

from __future__ import annotations

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.model import Param, Returns, Spec, Tool

OTA_TOOL_NAME = "self.upgrade_firmware"
OTA_HANDLER = "mcpgen_builtin_upgrade_firmware"
SHA256_PATTERN = "^[0-9a-fA-F]{64}$"


def ota_tool() -> Tool:
    """The tool, identical in every spec that enables OTA (so its fingerprint part is stable)."""
    return Tool(
        name=OTA_TOOL_NAME,
        description="Download a firmware image from url, verify its size, SHA-256, signature "
        "(when the device requires signed images), spec and version (no downgrade unless "
        "allow_downgrade), and reboot into it; the device returns to its current image if the "
        "new one does not reconnect.",
        handler=OTA_HANDLER,
        params=(
            Param(
                name="allow_downgrade",
                type="boolean",
                default=False,
                description="install an image whose version is lower than the running one",
            ),
            Param(
                name="sha256",
                type="string",
                description="SHA-256 of the image, 64 hex digits",
                pattern=SHA256_PATTERN,
            ),
            Param(name="size", type="integer", description="size of the image in bytes", minimum=1),
            Param(
                name="url", type="string", description="where to download the image (http://)", max_length=512
            ),
            Param(
                name="version",
                type="string",
                description="the device version the image carries",
                max_length=64,
            ),
        ),
        returns=Returns(kind="string", description="what was installed; the device reboots next"),
        user_only=True,
        destructive=True,
    )


def is_builtin(spec: Spec, tool: Tool) -> bool:
    """True for the tool the port implements (not the user's handlers file)."""
    return spec.device.ota and tool.name == OTA_TOOL_NAME and tool.handler == OTA_HANDLER


def require_host_only(spec: Spec, spec_path: object, target: str) -> None:
    """Raises ``BuildError`` for ``ota: true`` on a target without an OTA port (all but host
    and the ESP32 boards): its build would otherwise end in an undefined reference to the
    update handler."""
    if spec.device.ota:
        raise BuildError(
            f"{spec_path}: device.ota: true: over-the-air updates are implemented for --target host, "
            f"esp32, esp32s3 and esp32c3; the {target} port has none (docs/ota.md). Build {target} from "
            "a copy of the spec without `ota: true`."
        )
