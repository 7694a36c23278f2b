"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``), every
server scenario, against ``codegen bridge`` serving the fixture device
(``conformance/conformance_device.yaml``, the suite's own tool, resource and prompt names)
built as the host simulator.

:data:`EXPECTED_PASSES` lists the scenarios that pass today; each must keep passing. After
merging a feature, run this test: it prints every scenario's result, and a scenario that
passed but is not listed yet is named at the end ("passes now, not expected yet"): add it
to the list. docs/bridge.md ("Conformance") says why each of the others fails.

npx fetches the suite (and Node.js 22, which it needs: the ``node`` npm package) from npm on
the first run, into npm's cache. Without npx the test skips, saying so.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from device_testlib import host_simulator

HERE = Path(__file__).resolve().parent
SPEC = HERE / "conformance" / "conformance_device.yaml"
SUITE = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node@22"  # the suite imports fs.globSync (Node.js 22); Debian's nodejs may be older
SCENARIOS = 32
"""Server scenarios of ``--suite all`` in SUITE's version."""

EXPECTED_PASSES = frozenset(
    {
        "server-initialize",
        "logging-set-level",
        "ping",
        "completion-complete",  # prompts (issue 41 item 4)
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-with-logging",
        "tools-call-error",
        "tools-call-audio",  # content kinds (issue 41 item 3)
        "tools-call-embedded-resource",  # content kinds
        "tools-call-mixed-content",  # content kinds
        "tools-call-with-progress",  # progress (item 1)
        "tools-call-elicitation",  # values asked of the person (item 2)
        "elicitation-sep1034-defaults",  # values asked of the person
        "server-sse-polling",
        "server-sse-multiple-streams",
        "resources-list",
        "resources-read-text",  # URIs as the device gave them (item 6)
        "resources-read-binary",  # URIs as the device gave them
        "resources-templates-read",  # URIs as the device gave them
        "resources-subscribe",  # URIs as the device gave them
        "resources-unsubscribe",  # URIs as the device gave them
        "prompts-list",  # prompts
        "prompts-get-simple",  # prompts
        "prompts-get-with-args",  # prompts
        "prompts-get-embedded-resource",  # prompts
        "prompts-get-with-image",  # prompts
        "dns-rebinding-protection",
    }
)
"""Scenarios that pass with what is on main; extend it as features land (docs/bridge.md)."""


def _start_bridge(simulator: Path) -> tuple[subprocess.Popen[str], str]:
    """``codegen bridge`` over HTTP on a free port; (process, endpoint URL) once it listens."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    device_cmd = shlex.join([str(simulator), "--stdio"])
    cmd = [
        sys.executable,
        "-m",
        "mcpgen",
        "bridge",
        "--transport",
        "http",
        "--port",
        "0",
        "--raw-tool-names",
        "--spec",
        str(SPEC),
        "--device-cmd",
        device_cmd,
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # the bridge logs its endpoint once it is serving
        seen.append(line)
        found = re.search(r"MCP endpoint: (http://\S+)", line)
        if found:
            return proc, found.group(1)
    proc.wait()
    raise AssertionError("the bridge ended before serving:\n" + "".join(seen))


def _results(out_dir: Path) -> dict[str, list[dict[str, object]]]:
    """Each scenario's checks, from the suite's server-<scenario>-<time>/checks.json."""
    out = {}
    for checks in sorted(out_dir.glob("server-*/checks.json")):
        found = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", checks.parent.name)
        assert found, f"unexpected results folder {checks.parent.name}"
        out[found.group(1)] = json.loads(checks.read_text())
    return out


def _passed(checks: list[dict[str, object]]) -> bool:
    """The suite's own verdict: no check FAILURE (WARNING and INFO pass)."""
    return not any(c.get("status") == "FAILURE" for c in checks)


@pytest.mark.slow
def test_official_conformance_suite(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx not found: the conformance suite needs Node.js and npm (apt-get install nodejs npm)")
    simulator = host_simulator(SPEC, tmp_path / "build")
    bridge, url = _start_bridge(simulator)
    try:
        suite = ["conformance", "server", "--url", url, "--suite", "all", "-o", str(tmp_path / "results")]
        run = subprocess.run(
            [npx, "-y", "-p", NODE, "-p", SUITE, "--", *suite],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        bridge.terminate()
        bridge.wait(30)
    results = _results(tmp_path / "results")
    summary = run.stdout[run.stdout.find("=== SUMMARY ===") :]
    output = f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    assert len(results) == SCENARIOS, f"{SCENARIOS} scenarios expected, {len(results)} ran:\n{output}"
    passed = sorted(s for s, checks in results.items() if _passed(checks))
    print(f"\nconformance: {len(passed)} of {len(results)} server scenarios pass\n{summary}")
    new = sorted(set(passed) - EXPECTED_PASSES)
    if new:
        print("passes now, not expected yet (add to EXPECTED_PASSES):", ", ".join(new))
    lost = {
        s: [c for c in results.get(s, []) if c.get("status") == "FAILURE"]
        for s in EXPECTED_PASSES - set(passed)
    }
    assert not lost, f"scenarios that passed before fail now: {json.dumps(lost, indent=1)[:4000]}"
