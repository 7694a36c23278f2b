"""Helpers of the self-test's tests: the fake device's command line and the fake ESP-IDF tools."""

from __future__ import annotations

import sys
from pathlib import Path

FAKES = Path(__file__).with_name("fakes")
FAKE = FAKES / "fake_device.py"


def fake_cmd(spec: Path, broken: str | None = None) -> str:
    cmd = f"{sys.executable} {FAKE} {spec}"
    return cmd + (f" --break {broken}" if broken else "")


def fake_bin(bin_dir: Path, *, qemu: bool = True) -> Path:
    """A directory for the front of PATH with idf.py and (``qemu``) Espressif's two QEMU
    programs, each a wrapper running its fake (tests/selftest/fakes) with this Python."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    tools = {"idf.py": ("fake_idf.py", "")}
    if qemu:
        for name in ("qemu-system-riscv32", "qemu-system-xtensa"):
            tools[name] = ("fake_qemu.py", f"FAKE_QEMU_NAME={name} ")
    for name, (script, env) in tools.items():
        path = bin_dir / name
        path.write_text(f'#!/bin/sh\n{env}exec "{sys.executable}" "{FAKES / script}" "$@"\n')
        path.chmod(0o755)
    return bin_dir
