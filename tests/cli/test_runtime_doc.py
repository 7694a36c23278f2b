"""docs/runtime.md's gateway example is a working backend: it is extracted from the doc and
run as written against the host simulator, on asyncio and on uvloop."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_testlib import REPO, SPECS, codegen

DOC = REPO / "docs" / "runtime.md"


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Connect the simulator to a gateway", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the section has one complete example"
    return blocks[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    work = tmp_path_factory.mktemp("runtime-doc")
    spec = work / "desk_lamp.yaml"
    shutil.copy(SPECS / "desk_lamp.yaml", spec)
    shutil.copy(SPECS / "desk_lamp_handlers.cpp", work)
    # The exact command the doc gives, from the directory the example's SIM path is relative to.
    proc = codegen(
        "build", str(spec), "--target", "host", "-o", "build/lamp", "--no-compile-bindings", "-q", cwd=work
    )
    assert proc.returncode == 0, proc.stderr
    (work / "example.py").write_text(_example(), encoding="utf-8")
    return work


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_the_documented_backend_runs(workdir: Path, loop: str) -> None:
    args = [sys.executable, "example.py"]
    if loop == "uvloop":
        pytest.importorskip("uvloop")
        args.append("--uvloop")
    proc = subprocess.run(args, cwd=workdir, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == "connected: desk-lamp 10 tools"
    assert "event: notifications/state_changed {'on': True}" in out
    assert "event: notifications/events/power_changed {'on': True, 'source': 'assistant'}" in out
    assert "power: True" in out
    assert "state: {'on': True, 'rgb': [255, 255, 255], 'timer_minutes': 0}" in out
    assert out[-1] == "not sent: r: must be <= 255, got 300"
    # What the logging section says the gateway logs at INFO:
    assert "mcpgen.runtime.links.websocket.gateway: device lamp-1 ready (desk-lamp, 10 tools" in proc.stderr
