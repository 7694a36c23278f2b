"""``codegen monitor``: a real board's serial log through ESP-IDF's own monitor.

``esp-idf-monitor`` (PyPI, in the ``esp32`` extra) is the monitor ``idf.py monitor`` runs:
it resets the chip, colours the log, and decodes panic backtraces and core dumps with the
firmware's ELF. We check what we can before handing the terminal over (the package is
installed, a local port exists and can be opened) so those failures are one clear line,
then run ``python -m esp_idf_monitor`` in the foreground with our terminal.

The toolchain that decodes addresses (``xtensa-*-elf-addr2line`` / ``riscv32-esp-elf-``)
is the one PlatformIO installed for the build: its ``bin`` folders are put on ``PATH``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from mcpgen.codegen.log import Log

PACKAGE = "esp-idf-monitor"
MODULE = "esp_idf_monitor"
INSTALL_HINT = "pip install 'mcpgen[esp32]' (or: pip install esp-idf-monitor)"


class MonitorError(Exception):
    """The monitor cannot start: missing package, port or permission. One line."""


def monitor_available() -> bool:
    try:
        return importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):
        return False


def _is_url(port: str) -> bool:
    return "://" in port


def _known_ports() -> list[str]:
    try:
        from serial.tools import list_ports
    except ImportError:
        return []
    return sorted(p.device for p in list_ports.comports())


def check_port(port: str) -> None:
    """Raises MonitorError when a local serial port does not exist or cannot be opened."""
    if _is_url(port) or sys.platform == "win32":  # COM ports are not files; URLs are pyserial's
        return
    if not os.path.exists(port):
        known = _known_ports()
        seen = f"ports present: {', '.join(known)}" if known else "no serial port is present (plugged in?)"
        raise MonitorError(f"serial port {port} not found; {seen}")
    if not os.access(port, os.R_OK | os.W_OK):
        raise MonitorError(
            f"{port}: permission denied (add yourself to the `dialout` group, then log in again)"
        )


def toolchain_path(environ: Optional[dict[str, str]] = None) -> str:
    """``PATH`` with PlatformIO's ESP toolchains in front, for decoding addresses."""
    from mcpgen.codegen.targets.esp32 import pio_core_dir

    env = os.environ if environ is None else environ
    packages = pio_core_dir() / "packages"
    bins = (
        sorted(str(p / "bin") for p in packages.glob("toolchain-*") if (p / "bin").is_dir())
        if packages.is_dir()
        else []
    )
    return os.pathsep.join([*bins, env.get("PATH", "")])


def monitor_command(
    port: str,
    *,
    baud: int = 115200,
    board: str = "esp32",
    elf: Optional[Path] = None,
    no_reset: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """The ``python -m esp_idf_monitor`` command line."""
    from mcpgen.codegen.targets.esp32 import board_info

    chip = board_info(board).chip
    cmd = [sys.executable, "-m", MODULE, "--port", port, "--baud", str(baud), "--target", chip]
    if no_reset:
        cmd.append("--no-reset")
    cmd += list(extra)
    if elf is not None:
        cmd.append(str(elf))
    return cmd


def monitor(
    port: str,
    *,
    baud: int = 115200,
    board: str = "esp32",
    elf: Optional[Path] = None,
    no_reset: bool = False,
    log: Log = print,
) -> int:
    """Runs esp-idf-monitor on ``port`` in the foreground; returns its exit code."""
    if not monitor_available():
        raise MonitorError(f"{PACKAGE} is not installed: {INSTALL_HINT}")
    check_port(port)
    if elf is not None and not Path(elf).is_file():
        raise MonitorError(f"{elf}: no such firmware ELF (build it first, or leave out --elf)")
    cmd = monitor_command(port, baud=baud, board=board, elf=elf, no_reset=no_reset)
    log(f"$ {' '.join(cmd)}    (Ctrl-] quits)")
    env = dict(os.environ, PATH=toolchain_path())
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130
