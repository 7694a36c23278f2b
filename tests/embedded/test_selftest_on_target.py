"""``codegen selftest`` on the ESP-IDF build of each example spec, in Espressif's QEMU or on a
board, through pytest-embedded (see conftest.py for how to run it)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SPECS = {
    "default": REPO / "toolspec" / "default_device.yaml",
    "desk_lamp": REPO / "toolspec" / "desk_lamp.yaml",
}


def selftest(port: str, spec: str, *extra: str) -> dict[str, Any]:
    r = subprocess.run(
        [
            "codegen",
            "selftest",
            "--port",
            port,
            "--spec",
            str(SPECS[spec]),
            "--format",
            "json",
            "--connect-timeout",
            "60",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report: dict[str, Any] = json.loads(r.stdout)
    failed = [c for c in report["checks"] if c["status"] == "FAIL"]
    assert r.returncode == 0 and not failed, failed or r.stderr
    return report


def mcp_port(dut: Any) -> str:
    """The device's MCP UART: the pty QEMU named, or the board's serial port (released by
    pytest-embedded first: one reader per port)."""
    if hasattr(dut, "qemu"):
        found = dut.expect(re.compile(rb"char device redirected to (\S+) \(label serial0\)"), timeout=60)
        return found.group(1).decode()
    port = str(dut.serial.port)
    dut.serial.close()
    return port


@pytest.mark.parametrize("spec_name", ["default", "desk_lamp"], indirect=True)
def test_selftest_passes(dut: Any, spec_name: str) -> None:
    report = selftest(mcp_port(dut), spec_name)
    print(json.dumps(report["latency"]))
    assert report["summary"]["passed"] > 10
