"""Smoke test of the benchmarks: ``python -m benchmarks --quick`` runs every section and
writes a report and JSON with the expected structure. No assertion is about speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("bench")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return out, proc


def test_quick_run_succeeds(quick_run):
    out, proc = quick_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (out / "benchmarks.md").is_file()
    assert (out / "benchmarks.json").is_file()


def test_report_has_every_section(quick_run):
    out, _ = quick_run
    md = (out / "benchmarks.md").read_text()
    for heading in (
        "## Machine and versions",
        "## Method",
        "## 1. Backend hot path",
        "### Targets",
        "## 2. Gateway",
        "## 3. Device (C++ core)",
    ):
        assert heading in md
    assert "PASS" in md or "MISS" in md
    for version in ("orjson", "Cython", "mcp", "websockets", "g++"):
        assert f"| {version} |" in md


def test_json_hotpath_figures(quick_run):
    out, _ = quick_run
    data = json.loads((out / "benchmarks.json").read_text())
    assert data["machine"]["cpu"]
    assert data["versions"]["python"]
    hot = data["sections"]["hotpath"]
    assert "error" not in hot, hot.get("error")
    comps = hot["comparisons"]
    for key in (
        "decode/call_bool",
        "decode/call_int",
        "decode/call_string",
        "decode/call_object",
        "decode/tools_list",
        "decode/error",
        "encode",
        "validate",
    ):
        assert key in comps
        for cand in comps[key]["candidates"].values():
            st = cand["ns_per_op"]
            assert _positive(st["median"]) and st["min"] <= st["median"] <= st["max"]
            assert len(st["samples"]) == comps[key]["rounds"]
        assert comps[key]["floor"] in comps[key]["candidates"]
    names = set(comps["decode/call_bool"]["candidates"])
    assert {"mcpgen runtime (compiled)", "mcpgen runtime (pure Python)", "orjson.loads (floor)"} <= names
    assert any("SDK" in n for n in names) and any("xiaozhi" in n for n in names)
    assert hot["targets"]
    for t in hot["targets"]:
        assert t["status"] in ("PASS", "MISS")
        assert _positive(t["value"])


def test_json_gateway_figures(quick_run):
    out, _ = quick_run
    gw = json.loads((out / "benchmarks.json").read_text())["sections"]["gateway"]
    assert "error" not in gw, gw.get("error")
    assert [r["devices"] for r in gw["results"]] == [1, 20]
    for r in gw["results"]:
        assert set(r["modes"]) == {"compiled", "pure Python"}
        for m in r["modes"].values():
            assert m["errors"] == 0
            assert _positive(m["calls_per_s"]["median"])
            assert _positive(m["p50_us"]["median"]) and _positive(m["p99_us"]["median"])
            assert isinstance(m["bytes_per_device"], (int, float))


def test_json_device_figures(quick_run):
    out, _ = quick_run
    dev = json.loads((out / "benchmarks.json").read_text())["sections"]["device"]
    assert "error" not in dev, dev.get("error")
    assert dev["targets"] and all(_positive(t["core_total"]["text"]) for t in dev["targets"])
    spec = dev["specs"]["desk-lamp"]
    for sizes in spec["sizes"].values():
        assert all(_positive(p["total"]) for p in sizes["per_tool"].values())
    reqs = {r["request"]: r for r in spec["requests"]}
    call = reqs["tools/call self.light.set_rgb"]
    assert call["ok"] and "heap_allocations_per_request" in call
    assert spec["alloc_probe"]["malloc"] >= 1  # the counter sees allocations
    if dev.get("valgrind"):
        assert _positive(call["instructions"]) and _positive(reqs["tools/list"]["instructions"])
