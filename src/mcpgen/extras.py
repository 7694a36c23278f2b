"""Which pip extra provides each optional module, and the one line that says so.

The runtime's serial, MQTT, bridge and console parts and the generator's ESP32 tools need
packages that a plain install leaves out. Where one of them is imported, a missing package becomes
:class:`MissingExtra` (a ``ModuleNotFoundError``) whose text names the extra to install;
the ``codegen`` command prints that one line instead of a traceback, and so does any other
program (``python -m mcpgen.runtime.bridge``, a script) that lets one go uncaught: raising one
installs :func:`one_line_hook` (``MCPGEN_TRACEBACK=1`` shows the traceback again).
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
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
    "starlette": ("bridge", "starlette"),
    "prometheus_client": ("console", "prometheus-client"),
    "platformio": ("esp32", "platformio"),
    "esptool": ("esp32", "esptool"),
    "esp_idf_monitor": ("esp32", "esp-idf-monitor"),
    "kconfgen": ("esp32", "esp-idf-kconfig"),
    "esp_idf_kconfig": ("esp32", "esp-idf-kconfig"),
    "cryptography": ("esp32", "cryptography"),
    # MCPGEN_PURE_PYTHON=1 runs the runtime's compiled modules from source: they import
    # Cython's `cython` shadow module, which a runtime-only install leaves out
    "cython": ("pure", "Cython"),
}
#: Extras that only the generator's distribution has.
GENERATOR_ONLY_EXTRAS = frozenset({"esp32"})


class MissingExtra(ModuleNotFoundError):
    """An optional package is not installed; the text names the pip extra that installs it."""


def missing_extra_line(
    module: Optional[str], needed_for: str = "", dist: str = RUNTIME_DIST, extra: Optional[str] = None
) -> Optional[str]:
    """The one line for a missing optional ``module`` (dotted names allowed), or None when no
    extra provides it. ``dist`` is the distribution the reader installed (``mcpgen`` for the
    ``codegen`` command); the generator-only extras always name ``mcpgen``. ``extra``: the
    extra to name when the caller knows better (the console's own needs the bridge's
    packages too, and ``[console]`` brings them all). Every "install the extra" message is
    made here."""
    if not module:
        return None
    found = OPTIONAL_MODULES.get(module.split(".")[0])
    if found is None:
        return None
    extra, package = (extra or found[0]), found[1]
    if extra in GENERATOR_ONLY_EXTRAS:
        dist = GENERATOR_DIST
    purpose = f" ({needed_for})" if needed_for else ""
    return f"{package} is not installed{purpose}: pip install '{dist}[{extra}]'"


def missing_extra(
    exc: ModuleNotFoundError, needed_for: str = "", extra: Optional[str] = None
) -> ModuleNotFoundError:
    """``exc`` as a :class:`MissingExtra` naming the extra, to ``raise ... from None`` where an
    optional package is imported; ``exc`` itself when no extra provides the module (a bug).
    ``extra`` names the extra to install instead of the module's own (``[console]`` brings
    the bridge's packages too), also when ``exc`` already is a :class:`MissingExtra`."""
    line = missing_extra_line(exc.name, needed_for, extra=extra)
    if line is None or isinstance(exc, MissingExtra) and extra is None:
        return exc
    install_one_line_hook()
    return MissingExtra(line, name=exc.name)


def one_line_hook(previous: object) -> object:
    """A ``sys.excepthook`` that prints an uncaught :class:`MissingExtra` as its one line
    (``error: mcp is not installed (...): pip install 'mcpgen-runtime[bridge]'``) and hands
    everything else to ``previous``."""

    def hook(kind: type[BaseException], value: BaseException, tb: Optional[TracebackType]) -> None:
        if isinstance(value, MissingExtra) and os.environ.get("MCPGEN_TRACEBACK") != "1":
            print(f"error: {value}", file=sys.stderr)
            return
        previous(kind, value, tb)  # type: ignore[operator]

    hook.mcpgen_one_line = True  # type: ignore[attr-defined]
    return hook


def install_one_line_hook() -> None:
    """Makes an uncaught :class:`MissingExtra` end the program with its one line (once)."""
    if not getattr(sys.excepthook, "mcpgen_one_line", False):
        sys.excepthook = one_line_hook(sys.excepthook)  # type: ignore[assignment]
