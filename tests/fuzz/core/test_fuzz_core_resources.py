"""Fuzzing the core's resources code (issue 30): the desk lamp spec declares resources
(fixed URIs, templates, text and binary), so its build links resources.cpp with real
handlers. Its seeds (resources/list, templates/list, a read of every resource, an unknown
URI, bad template values) replay cleanly, and a short run finds no crash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fuzzlib import REPO, build, fuzz, missing_tools, replay, seed_inputs, write_seeds

pytestmark = pytest.mark.slow

LAMP_SPEC = REPO / "toolspec" / "desk_lamp.yaml"
SECONDS = int(os.environ.get("MCPGEN_FUZZ_SECONDS", "12"))


@pytest.fixture(scope="module")
def lamp_fuzz_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    problem = missing_tools()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(problem + " -- required in CI")
        pytest.skip(problem)
    return build(tmp_path_factory.mktemp("fuzz_core_lamp"), LAMP_SPEC)


def test_seeds_cover_every_resource() -> None:
    seeds = seed_inputs(LAMP_SPEC)
    for name in ("status", "icon", "effect", "pattern"):
        assert f"bare_read_{name}" in seeds and f"env_read_{name}" in seeds
    assert b"lamp://pattern/%zz" in seeds["bare_read_bad_pattern"]
    assert b"resources/templates/list" in seeds["bare_resources_templates"]


def test_resource_seeds_replay_and_fuzz_cleanly(lamp_fuzz_exe: Path, tmp_path: Path) -> None:
    seeds_dir = tmp_path / "seeds"
    write_seeds(seeds_dir, LAMP_SPEC)
    seeds = sorted(seeds_dir.iterdir())
    result = replay(lamp_fuzz_exe, seeds)
    assert result.returncode == 0, result.stderr[-4000:]
    run = fuzz(
        lamp_fuzz_exe, seconds=SECONDS, corpus=tmp_path / "corpus", seeds=seeds_dir, artifacts=tmp_path
    )
    print(f"\nlamp fuzz, {SECONDS} s: {run.summary()}")
    assert run.returncode == 0 and not run.crashes, "\n".join(run.output.splitlines()[-60:])
    assert run.executions > 1000, run.output[-2000:]
