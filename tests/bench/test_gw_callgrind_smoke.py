"""``python -m benchmarks.gw_callgrind`` counts a row's instructions per call (figures, not a
test of speed), and refuses a row it does not know."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "benchmarks.gw_callgrind", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)


def test_an_unknown_row_is_refused_with_the_known_ones() -> None:
    proc = _run("--rows", "compiled + gc.freeze()")
    assert proc.returncode == 2
    assert "unknown row(s) ['compiled + gc.freeze()']; rows: compiled, pure Python" in proc.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_counts_the_echo_row() -> None:
    proc = _run("--rows", "picows echo", "--devices", "5", "--seconds", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r"^picows echo: ([\d,]+) instructions per call \(([\d,]+) calls\)$", proc.stdout, re.M)
    assert m, proc.stdout
    per_call, calls = (int(x.replace(",", "")) for x in m.groups())
    assert calls > 0 and 1_000 < per_call < 10_000_000
