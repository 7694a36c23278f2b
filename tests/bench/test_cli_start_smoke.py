"""Smoke test of ``python -m benchmarks.cli_start``: it times every command it names (each
run must succeed, the Tab included) and prints one row per command with a verdict. No
assertion is about speed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_one_round_prints_every_row() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.cli_start", "--runs", "1"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr  # 1: a median above the target (a loaded machine)
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [
        "python -c pass",
        "codegen --help",
        "codegen check toolspec/desk_lamp.yaml",
        "Tab: codegen check --f",
    ]
    assert all(row.rstrip().endswith(("PASS |", "MISS |")) for row in rows[1:])
