"""The suite runs on every core (scripts/dev.sh test: pytest-xdist, --dist loadgroup): a test
file, or a folder that shares its builds, must run whole on one worker (tests/conftest.py)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_each_file_runs_whole_on_one_worker() -> None:
    pytest.importorskip("xdist")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
         "tests/cli/test_layers.py", "tests/cli/test_repo_map.py"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    workers: dict[str, set[str]] = {}
    for worker, test_file in re.findall(r"^\[(gw\d+)\] .*?PASSED (tests/\S+?)::", proc.stdout, re.M):
        workers.setdefault(test_file, set()).add(worker)
    assert set(workers) == {"tests/cli/test_layers.py", "tests/cli/test_repo_map.py"}, proc.stdout[-3000:]
    assert all(len(w) == 1 for w in workers.values()), workers


def test_a_folder_that_shares_builds_is_one_group() -> None:
    tests = REPO / "tests"
    spec = importlib.util.spec_from_file_location("suite_conftest", tests / "conftest.py")
    assert spec is not None and spec.loader is not None
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    xdist_group_of = suite.xdist_group_of
    assert xdist_group_of(tests / "device" / "test_a.py") == xdist_group_of(tests / "device" / "test_b.py")
    assert xdist_group_of(tests / "fuzz" / "simnet" / "test_a.py") == "fuzz/simnet"
    assert xdist_group_of(tests / "cli" / "test_a.py") != xdist_group_of(tests / "cli" / "test_b.py")
