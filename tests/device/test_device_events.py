"""Spec events emitted from several threads at once on the host port (the simulator's
outlet and its recursive send lock) while the main thread serves requests whose handlers
emit too: every line on the link is one whole JSON message, none is lost."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.host import CORE_DIR, CXXFLAGS, HOST_PORT_DIR
from mcpgen.codegen.targets.writer import write_tree

REPO = Path(__file__).resolve().parents[2]
LAMP = REPO / "toolspec" / "desk_lamp.yaml"
DRIVER = Path(__file__).resolve().parent / "event_threads_driver.cpp"


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("event_threads")
    write_tree(out, emit_cpp.emit(load_spec(LAMP)))
    gen = out / "firmware" / "generated"
    exe = out / "event_threads_driver"
    sources = [
        DRIVER,
        *sorted((CORE_DIR / "mcpgen").glob("*.cpp")),
        HOST_PORT_DIR / "event_outlet.cpp",
        gen / "mcp_tools.cpp",
        REPO / "toolspec" / "desk_lamp_handlers.cpp",
    ]
    cmd = ["g++", *CXXFLAGS, "-pthread", f"-I{CORE_DIR}", f"-I{gen}", f"-I{HOST_PORT_DIR}"]
    subprocess.run([*cmd, *map(str, sources), "-o", str(exe)], check=True)
    return exe


def test_events_from_many_threads_never_interleave(driver: Path) -> None:
    threads, per_thread, requests = 4, 400, 200
    proc = subprocess.run(
        [str(driver), str(threads), str(per_thread), str(requests)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    kinds: Counter[str] = Counter()
    for line in proc.stdout.splitlines():
        msg = json.loads(line)  # a torn or interleaved line fails here
        payload = msg.get("payload", msg)
        if "method" in payload:
            kinds[payload["method"]] += 1
            if payload["method"] == "notifications/events/button_pressed":
                assert 1 <= payload["params"]["count"] <= 5
        else:
            assert payload["result"]["isError"] is False
            kinds["reply"] += 1
    assert kinds["notifications/events/button_pressed"] == threads * per_thread
    assert kinds["reply"] == requests
    # The lamp starts off; every set_power alternates on/off, so each one changes it.
    assert kinds["notifications/events/power_changed"] == requests
