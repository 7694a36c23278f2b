"""The test command runs every pass and reports each, even after one fails (scripts/passes.sh)."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f'set -euo pipefail; log() {{ echo "==> $*" >&2; }}; . scripts/passes.sh; {script}'],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_failing_pass_does_not_hide_the_next_and_the_command_fails() -> None:
    done = REPO / "build" / "passes-probe"
    done.parent.mkdir(exist_ok=True)
    done.unlink(missing_ok=True)
    r = _run(f"run_pass first false; run_pass second touch {done}; report_passes")
    assert done.exists(), "the second pass did not run after the first failed"
    assert r.returncode == 1
    assert "FAILED  first (exit 1" in r.stderr
    assert "ok      second" in r.stderr
    done.unlink()


def test_all_passes_ok_exit_zero_and_each_is_reported() -> None:
    r = _run("run_pass one true; run_pass two true; report_passes")
    assert r.returncode == 0, r.stderr
    assert "ok      one" in r.stderr and "ok      two" in r.stderr
