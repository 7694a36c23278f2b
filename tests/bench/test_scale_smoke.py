"""Smoke test of the scale benchmark (``python -m benchmarks.scale --quick``): it connects
its devices through two gateway workers and two emulators on their own loopback source
addresses, calls every device, and runs the fan-out against the bare echo and the bare broadcast.
No assertion is about speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.scale import plan

REPO = Path(__file__).resolve().parents[2]


def test_worker_count_follows_the_descriptor_limit() -> None:
    p = plan(100_000, 20_000, 2)
    assert p["workers"] == 6 and p["emulators"] == 6  # the "at least 6"
    assert p["devices_per_process"] * p["workers"] >= 100_000
    assert plan(10_000, 20_000, 2)["workers"] == 1
    assert plan(100_000, 1 << 20, 8)["workers"] == 1  # the limit no longer decides ...
    assert plan(100_000, 1 << 20, 8)["workers_unlimited"] == 8  # ... the cores do
    assert plan(100_000, 1 << 20, 8)["emulators"] == 4  # ports per source address still do


def test_quick_scale_run(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.scale",
            "--quick",
            "--devices",
            "200",
            "--workers",
            "2",
            "--emulators",
            "2",
            "--echo",
            "--json",
            str(out),
            # a before/after row, here the same code
            "--baseline-fanout",
            str(REPO / "runtime" / "session" / "fanout.py"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert sum(res["devices_per_worker"]) == 200 and len(res["devices_per_worker"]) == 2
    assert res["emulator_failed"] == 0
    assert res["call_all"]["calls"] == 200 and res["call_all"]["errors"] == 0
    assert res["call_all"]["p99_ms"] >= res["call_all"]["p50_ms"] > 0
    assert res["idle"]["cpu_seconds"] >= 0 and res["rss_kib_per_device"] > 0
    fan = res["fanout"]
    assert fan["errors"] == 0
    assert set(fan["median"]) == {"baseline_fanout", "fanout", "broadcast", "single", "echo"}
    assert all(v > 0 for v in fan["median"].values())
    # The bare broadcast reference answered every device each round, with its CPU split.
    assert len(fan["us_per_device_call"]["broadcast"]) == 1
    user, system = fan["median_user_system"]["broadcast"]
    # (either part may be 0 in so short a run: the kernel charges CPU time by ticks)
    assert user >= 0 and system >= 0 and user + system > 0
    assert set(fan["ratios"]) >= {
        "fanout_vs_echo",
        "broadcast_vs_echo",
        "fanout_vs_broadcast",
        "fanout_vs_baseline_fanout",
    }


def test_a_missing_baseline_fanout_is_refused_before_anything_starts(tmp_path: Path) -> None:
    missing = tmp_path / "old_fanout.py"
    for extra, expected in (([], "add --echo"), (["--echo"], "is not a file")):
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.scale", "--quick", "--baseline-fanout", str(missing), *extra],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
