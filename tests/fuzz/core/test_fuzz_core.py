"""Fuzzing of the device core (libFuzzer + ASan + UBSan, harness in fuzz_core.cpp), built
with the default buffers and with tiny ones: the seed corpus and every saved regression
input replay cleanly, and a short fuzzing run of each build (MCPGEN_FUZZ_SECONDS, default
12 s each) finds no crash. The long run is scripts/fuzz.sh."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fuzzlib import (
    ARTIFACT_KINDS,
    BUFFERS,
    REGRESSIONS,
    build,
    fuzz,
    missing_tools,
    replay,
    seed_inputs,
    write_seeds,
)

pytestmark = pytest.mark.slow

SECONDS = int(os.environ.get("MCPGEN_FUZZ_SECONDS", "12"))
REGRESSION_INPUTS = sorted(p for p in REGRESSIONS.iterdir() if p.name.startswith(ARTIFACT_KINDS))


@pytest.fixture(scope="session", params=sorted(BUFFERS))
def fuzz_exe(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    problem = missing_tools()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(problem + " -- required in CI")
        pytest.skip(problem)
    return build(tmp_path_factory.mktemp(f"fuzz_core_{request.param}"), buffers=request.param)


@pytest.fixture(scope="session")
def seed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fuzz_seeds")
    write_seeds(directory)
    return directory


def test_seeds_cover_every_tool_bare_and_enveloped() -> None:
    from fuzzlib import DEFAULT_SPEC

    from mcpgen.codegen.spec.loader import load_spec

    seeds = seed_inputs()
    for tool in load_spec(DEFAULT_SPEC).tools:
        assert f"bare_call_{tool.name}" in seeds and f"env_call_{tool.name}" in seeds
    assert seeds["session_env"].count(b"\n") >= 12


def test_seed_corpus_replays_cleanly(fuzz_exe: Path, seed_dir: Path) -> None:
    seeds = sorted(seed_dir.iterdir())
    result = replay(fuzz_exe, seeds)
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"Executed {seeds[-1]}" in result.stderr  # every input really ran


@pytest.mark.parametrize("case", REGRESSION_INPUTS, ids=[p.name for p in REGRESSION_INPUTS])
def test_regression_input_replays_cleanly(fuzz_exe: Path, case: Path) -> None:
    result = replay(fuzz_exe, [case])
    assert result.returncode == 0, result.stderr[-4000:]


def test_short_fuzz_run_finds_no_crash(fuzz_exe: Path, seed_dir: Path, tmp_path: Path) -> None:
    crashes = tmp_path / "crashes"
    run = fuzz(fuzz_exe, seconds=SECONDS, corpus=tmp_path / "corpus", seeds=seed_dir, artifacts=crashes)
    print(f"\n{fuzz_exe.name}, {SECONDS} s: {run.summary()}")
    saved = []
    for crash in run.crashes:  # keep them where a developer finds them after the run
        dest = Path(os.environ.get("MCPGEN_FUZZ_ARTIFACTS", tmp_path)) / crash.name
        if dest != crash:
            shutil.copy(crash, dest)
        saved.append(str(dest))
    assert run.returncode == 0 and not run.crashes, (
        f"the fuzzer found a crash, saved as {saved}: copy it into {REGRESSIONS}/ (it becomes a "
        f"regression test) and fix the core.\n" + "\n".join(run.output.splitlines()[-60:])
    )
    assert run.executions > 1000, run.output[-2000:]  # it really fuzzed
