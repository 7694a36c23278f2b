"""Every missing-extra path ends in the one line of mcpgen.extras, never a traceback: the
``codegen`` commands, ``python -m`` entry points, a script, and ``MCPGEN_PURE_PYTHON=1``
on an install without ``[pure]`` (it ended in a traceback from ``import cython``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hidden_modules import one_line, without_extra

REPO = Path(__file__).resolve().parents[2]

CASES = [
    ("pure", [sys.executable, "-c", "import mcpgen.runtime"], {"MCPGEN_PURE_PYTHON": "1"}),
    ("bridge", [sys.executable, "-m", "mcpgen.runtime.bridge", "--device-cmd", "true"], {}),
    ("console", [sys.executable, "-m", "mcpgen.runtime.console", "--device-cmd", "true"], {}),
    ("bridge", [sys.executable, "-m", "mcpgen", "bridge", "--device-cmd", "true"], {}),
    ("console", [sys.executable, "-m", "mcpgen", "console", "--device-cmd", "true"], {}),
    (
        "serial",
        [
            sys.executable,
            "-c",
            "import asyncio\nfrom mcpgen.runtime import connect_serial\n"
            "asyncio.run(connect_serial('/dev/null'))",
        ],
        {},
    ),
    (
        "mqtt",
        [
            sys.executable,
            "-c",
            "import asyncio\nfrom mcpgen.runtime import MqttGateway\n"
            "asyncio.run(MqttGateway('127.0.0.1', 1).start())",
        ],
        {},
    ),
]


@pytest.mark.parametrize(
    ("extra", "argv", "extra_env"), CASES, ids=[f"{c[0]}:{' '.join(c[1][1:3])}" for c in CASES]
)
def test_a_missing_extra_ends_in_its_one_line(
    tmp_path: Path, extra: str, argv: list[str], extra_env: dict[str, str]
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("MCPGEN_PURE_PYTHON", "MCPGEN_EXPECT_COMPILED")}
    env = without_extra({**env, **extra_env}, tmp_path / "site", extra)
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines and re.match(one_line(extra), lines[-1]), proc.stderr


def test_the_traceback_is_there_when_asked_for(tmp_path: Path) -> None:
    env = without_extra(dict(os.environ, MCPGEN_TRACEBACK="1"), tmp_path / "site", "bridge")
    proc = subprocess.run(
        [sys.executable, "-c", "import mcpgen.runtime.bridge"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" in proc.stderr
    assert "pip install 'mcpgen-runtime[bridge]'" in proc.stderr.splitlines()[-1]
