"""benchmarks/device.py and its driver (benchmarks/device/driver.cpp) on issue 41's paths:
the request set has a progress-reporting call with a progressToken, the driver's link sees
its notifications/progress, and the new results (audio, several items with an embedded
resource, a value asked of the person) answer without an error or a heap allocation.
Builds the desk lamp's host driver with ``python -m benchmarks.device`` (no callgrind:
nothing is measured for speed here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("device-bench")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.device",
            "--spec",
            "desk-lamp",
            "--iterations",
            "5",
            "--build-dir",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    assert data["alloc_probe"]["malloc"] >= 1 and data["alloc_probe"]["new"] >= 1  # the counter counts
    return out, data["requests"]


@pytest.fixture(scope="module")
def lamp(build: tuple[Path, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return {r["request"]: r for r in build[1]}


def test_a_call_with_a_progress_token_sends_its_notifications_through_the_link(lamp) -> None:
    with_token = lamp["tools/call self.light.fade with a progressToken"]
    assert with_token["ok"]
    assert with_token["notifications_per_request"] == 10  # the fade's ten steps
    assert with_token["notification_bytes_per_request"] > 10 * 100
    # Without a token the handler's progress calls send nothing.
    assert "notifications_per_request" not in lamp["tools/call self.light.fade"]
    assert lamp["tools/call self.light.fade"]["ok"]


@pytest.mark.parametrize(
    "request_label",
    [
        "tools/call self.light.fade",
        "tools/call self.light.fade with a progressToken",
        "tools/call self.lamp.chime",
        "tools/call self.light.snapshot",
        "tools/call self.lamp.reset",
    ],
)
def test_issue_41_paths_answer_without_heap(lamp, request_label: str) -> None:
    row = lamp[request_label]
    assert row["ok"] and row["reply_bytes"] > 0
    assert row["heap_allocations_per_request"] == 0 and row["heap_frees_per_request"] == 0


def test_show_prints_the_progress_notifications_on_stderr_and_the_reply_on_stdout(
    build: tuple[Path, list[dict[str, Any]]],
) -> None:
    out, rows = build
    (exe,) = [p for p in out.rglob("driver") if p.is_file()]
    kind = [r["request"] for r in rows].index("tools/call self.light.fade with a progressToken")
    env = dict(os.environ, MCPGEN_BENCH_REQUESTS=str(exe.with_name("requests.jsonl")))
    proc = subprocess.run([str(exe), "show", str(kind)], capture_output=True, text=True, env=env, check=True)
    notes = [json.loads(line)["payload"] for line in proc.stderr.splitlines()]
    assert [n["params"]["progress"] for n in notes] == [float(i) for i in range(1, 11)]
    assert {n["method"] for n in notes} == {"notifications/progress"}
    assert {n["params"]["progressToken"] for n in notes} == {"bench-progress"}
    assert json.loads(proc.stdout)["payload"]["result"]["isError"] is False
