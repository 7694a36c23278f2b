"""Which pip extra provides each optional module, and the one line that says so.

The runtime's serial, MQTT, bridge and console parts and the generator's ESP32 tools need
packages that a plain install leaves out. Where one of them is imported, a missing package becomes
:class:`MissingExtra` (a ``ModuleNotFoundError``) whose text names the extra to install;
the ``codegen`` command prints that one line instead of a traceback.
"""

from __future__ import annotations

from typing import Optional

#: The distribution whose extras the serial/mqtt/bridge lines name (a backend's install).
RUNTIME_DIST = "mcpgen-runtime"
#: The generator's distribution (``codegen``); it passes the runtime's extras through.
GENERATOR_DIST = "mcpgen"

#: Top-level import name -> (extra, PyPI name of the package that provides it).
OPTIONAL_MODULES: dict[str, tuple[str, str]] = {
    "serial": ("serial", "pyserial"),
    "aiomqtt": ("mqtt", "aiomqtt"),
    "paho": ("mqtt", "paho-mqtt"),
    "mcp": ("bridge", "mcp"),
    "uvicorn": ("bridge", "uvicorn"),
    "h11": ("bridge", "h11"),
    "prometheus_client": ("console", "prometheus-client"),
    "platformio": ("esp32", "platformio"),
    "esptool": ("esp32", "esptool"),
    "esp_idf_monitor": ("esp32", "esp-idf-monitor"),
    "kconfgen": ("esp32", "esp-idf-kconfig"),
    "esp_idf_kconfig": ("esp32", "esp-idf-kconfig"),
}
#: Extras that only the generator's distribution has.
GENERATOR_ONLY_EXTRAS = frozenset({"esp32"})


class MissingExtra(ModuleNotFoundError):
    """An optional package is not installed; the text names the pip extra that installs it."""


def missing_extra_line(
    module: Optional[str], needed_for: str = "", dist: str = RUNTIME_DIST
) -> Optional[str]:
    """The one line for a missing optional ``module`` (dotted names allowed), or None when no
    extra provides it. ``dist`` is the distribution the reader installed (``mcpgen`` for the
    ``codegen`` command); the generator-only extras always name ``mcpgen``."""
    if not module:
        return None
    found = OPTIONAL_MODULES.get(module.split(".")[0])
    if found is None:
        return None
    extra, package = found
    if extra in GENERATOR_ONLY_EXTRAS:
        dist = GENERATOR_DIST
    purpose = f" ({needed_for})" if needed_for else ""
    return f"{package} is not installed{purpose}: pip install '{dist}[{extra}]'"


def missing_extra(exc: ModuleNotFoundError, needed_for: str = "") -> ModuleNotFoundError:
    """``exc`` as a :class:`MissingExtra` naming the extra, to ``raise ... from None`` where an
    optional package is imported; ``exc`` itself when no extra provides the module (a bug)."""
    line = missing_extra_line(exc.name, needed_for)
    if line is None or isinstance(exc, MissingExtra):
        return exc
    return MissingExtra(line, name=exc.name)
