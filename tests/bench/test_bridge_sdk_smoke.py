"""Smoke test of ``python -m benchmarks.bridge_sdk``: one short round through every server
(the bridge and the SDK's own, stdio and HTTP) prints one row each and the ratios. No
assertion is about speed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_one_round_prints_every_row() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bridge_sdk", "--rounds", "1", "--calls", "5"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = [line.split(":")[0].strip() for line in proc.stdout.splitlines() if ": server CPU" in line]
    assert rows == [
        "bridge stdio",
        "SDK server stdio",
        "bridge HTTP",
        "bridge HTTP (SDK path)",
        "SDK server HTTP",
    ]
    assert "bridge / SDK server, HTTP" in proc.stdout
