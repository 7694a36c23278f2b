"""Every command the docs show runs as written (README.md and docs/*.md).

Each ``sh``, ``console`` and ``python`` block is a test (id ``docs/FILE.md:LINE``), run in
one temporary directory per session that holds a copy of ``toolspec/``, the way a user
runs the docs from a checkout. Blocks run with a virtual environment of their own that
sees the installed ``mcpgen`` (so ``pip install build/lamp/python`` installs there, not
into the environment under test), with ``codegen`` and ``python`` on ``PATH``. The
artefacts that the docs say another step built (``build/demo`` by ``codegen demo``,
``build/lamp`` and its bindings) are built once by the session fixture. How a block is
run, skipped (``<!-- doc-test: skip (REASON) -->``) or run as a server is described in
``doc_blocks.py``; ``pytest -rs tests/docs`` lists the skipped blocks with their reasons.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from doc_blocks import REPO, RUN_LANGS, Block, all_blocks, commands, doc_files, matches, parse, transcript
from hidden_modules import one_line, without_extra

BLOCKS = [b for b in all_blocks() if b.lang in RUN_LANGS]
SERVER_UP_SECONDS = 8.0  # a server still running this long after it started counts as started
COMMAND_TIMEOUT = 600.0  # a generous bound for builds on a loaded machine


@dataclass(frozen=True)
class DocEnv:
    work: Path
    env: dict[str, str]
    python: Path


def _site_dirs() -> list[str]:
    """Where the interpreter under test finds its packages (venv, system or user site)."""
    return [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]


def _run(
    cmd: list[str] | str,
    env: DocEnv | dict[str, str],
    cwd: Path,
    *,
    shell: bool = False,
    stdin: str | None = None,
    timeout: float = COMMAND_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    environ = env.env if isinstance(env, DocEnv) else env
    argv = ["bash", "-eo", "pipefail", "-c", cmd] if shell else cmd
    assert isinstance(argv, list)
    return subprocess.run(
        argv,
        cwd=cwd,
        env=environ,
        input=stdin if stdin is not None else "",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def doc_env(tmp_path_factory: pytest.TempPathFactory) -> DocEnv:
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(REPO / "toolspec", work / "toolspec")
    venv = work.parent / (work.name + "-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # addsitedir (not a plain path line) so the .pth files there (an editable install) apply too.
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in _site_dirs())
    Path(purelib, "zz_mcpgen_under_test.pth").write_text(lines)
    for name in ("codegen", "mcpgen"):
        shim = venv / "bin" / name
        shim.write_text(f'#!/bin/sh\nexec "{python}" -m mcpgen "$@"\n')
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        MCPGEN_HISTORY=str(work / ".mcpgen_history"),
        # The bindings as `codegen build` leaves them (it says: install them, or this).
        PYTHONPATH=str(work / "build" / "lamp" / "python"),
    )
    denv = DocEnv(work, env, python)
    for spec, out in (("desk_lamp", "build/lamp"), ("default_device", "build/demo")):
        proc = _run(
            ["codegen", "build", f"toolspec/{spec}.yaml", "--target", "host", "-o", out, "-q"], denv, work
        )
        assert proc.returncode == 0, proc.stdout
    return denv


def _stop(proc: subprocess.Popen[str]) -> None:
    """The server and its children (it leads its own process group)."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _serve(argv: list[str], denv: DocEnv, log: Path) -> None:
    """Starts a server, checks it is up (still running, no traceback) after a while, stops it."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            argv,
            cwd=denv.work,
            env=denv.env,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    try:
        try:
            proc.wait(timeout=SERVER_UP_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        running = proc.poll() is None
        output = log.read_text()  # what it printed while serving, not what stopping it prints
    finally:
        _stop(proc)
        if proc.stdin is not None:
            proc.stdin.close()
    assert running, f"exited with {proc.returncode} instead of serving:\n{log.read_text()}"
    assert "Traceback" not in output, output


def _fail_text(block: Block, proc: subprocess.CompletedProcess[str]) -> str:
    return f"{block.id} failed (exit {proc.returncode}) in {proc.args!r}:\n{proc.stdout[-6000:]}"


def _run_sh(block: Block, denv: DocEnv) -> None:
    if block.marker != "server":
        proc = _run(block.text, denv, denv.work, shell=True)
        assert proc.returncode == 0, _fail_text(block, proc)
        return
    *setup, server = commands(block.text)
    if setup:
        proc = _run("\n".join(setup), denv, denv.work, shell=True)
        assert proc.returncode == 0, _fail_text(block, proc)
    _serve(["bash", "-c", f"exec {server}"], denv, denv.work / f"{_slug(block)}.log")


def _run_python(block: Block, denv: DocEnv) -> None:
    script = denv.work / f"{_slug(block)}.py"
    script.write_text(block.text)
    if block.marker == "server":
        _serve([str(denv.python), script.name], denv, denv.work / f"{_slug(block)}.log")
        return
    proc = _run([str(denv.python), script.name], denv, denv.work)
    assert proc.returncode == 0, _fail_text(block, proc)


def _run_console(block: Block, denv: DocEnv) -> None:
    for step in transcript(block.text):
        stdin = "".join(line + "\n" for line in step.stdin)
        proc = _run(step.command, denv, denv.work, shell=True, stdin=stdin)
        assert proc.returncode == 0, _fail_text(block, proc)
        actual = proc.stdout.splitlines()
        assert matches(step.expected, actual), (
            f"{block.id}: `{step.command}` printed\n"
            + "\n".join(actual)
            + "\n\nwhere the doc shows\n"
            + "\n".join(step.expected)
        )


def _slug(block: Block) -> str:
    return block.id.replace("/", "_").replace(":", "_").replace(".", "_")


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block_runs_as_written(block: Block, request: pytest.FixtureRequest) -> None:
    if block.marker == "skip":
        pytest.skip(f"{block.id} marked in the doc: {block.reason}")
    doc_env = request.getfixturevalue("doc_env")  # built only when a block runs
    started = time.monotonic()
    {"sh": _run_sh, "python": _run_python, "console": _run_console}[block.lang](block, doc_env)
    print(f"{block.id}: ran in {time.monotonic() - started:.1f} s")


# -- as a pip user without the extras -----------------------------------------------------

EXTRA_BLOCKS = [b for b in BLOCKS if b.extra and b.marker != "skip"]


@pytest.mark.slow
@pytest.mark.parametrize("block", EXTRA_BLOCKS, ids=[b.id for b in EXTRA_BLOCKS])
def test_doc_block_without_its_extra_ends_in_the_one_line(
    block: Block, request: pytest.FixtureRequest
) -> None:
    """A pip user who skipped the page's extra gets the line naming it, not a traceback."""
    denv: DocEnv = request.getfixturevalue("doc_env")
    env = without_extra(denv.env, denv.work / "hide-site", block.extra)
    if block.lang == "python":
        script = denv.work / f"{_slug(block)}_without.py"
        script.write_text(block.text)
        proc = _run([str(denv.python), script.name], env, denv.work, timeout=120)
    else:
        proc = _run(block.text, env, denv.work, shell=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert proc.returncode != 0, f"{block.id} ran without [{block.extra}]:\n{proc.stdout[-3000:]}"
    assert "Traceback" not in proc.stdout, proc.stdout[-3000:]
    assert lines and re.match(one_line(block.extra), lines[-1]), (
        f"{block.id} without [{block.extra}] ended in:\n{proc.stdout[-3000:]}"
    )


# Words of a block that needs an extra: a block showing one must say which (a marker).
NEEDS_EXTRA = {
    "bridge": re.compile(r"codegen bridge|mcpgen\.runtime\.bridge|^from mcp |^import mcp\b", re.M),
    "console": re.compile(r"codegen console|mcpgen\.runtime\.console|prometheus_client", re.M),
    "mqtt": re.compile(r"async with Mqtt(Gateway|Fleet)\(|aiomqtt", re.M),  # made, not started: none
    "serial": re.compile(r"connect_serial|--serial |run_qemu import boot", re.M),
}


def test_every_block_that_needs_an_extra_names_it() -> None:
    problems = []
    for b in BLOCKS:
        if b.marker == "skip":
            continue
        for extra, words in NEEDS_EXTRA.items():
            if words.search(b.text) and b.extra != extra and not (extra == "bridge" and b.extra == "console"):
                problems.append(
                    f"{b.id}: uses the [{extra}] extra; mark it `<!-- doc-test: ... [{extra}] -->`"
                )
    assert not problems, "\n".join(problems)


def test_every_doc_page_states_its_extras_at_the_top() -> None:
    """Under the title, ``Extras: ...`` names the pip extras the page needs (or none), each
    one pyproject.toml defines, and every extra a block of the page is marked with."""
    import tomllib

    defined = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    problems = []
    for path in sorted((REPO / "docs").glob("*.md")):
        rel = path.relative_to(REPO).as_posix()
        head = path.read_text(encoding="utf-8").splitlines()[:6]
        line = next((h for h in head if h.startswith("Extras: ")), None)
        if line is None:
            problems.append(f"{rel}: no `Extras: ...` line under the title")
            continue
        named = set(re.findall(r"`\[([a-z0-9_-]+)\]`", line))
        if not named and "none" not in line:
            problems.append(f"{rel}: `Extras:` names no `[extra]` and does not say none")
        problems += [f"{rel}: [{e}] is not an extra of pyproject.toml" for e in sorted(named - defined)]
        marked = {b.extra for b in BLOCKS if b.file == rel and b.extra}
        problems += [
            f"{rel}: a block needs [{e}], the Extras line does not name it" for e in sorted(marked - named)
        ]
    assert not problems, "\n".join(problems)


def test_every_fence_names_its_language_and_markers_are_well_formed() -> None:
    """An untagged block would escape the run above: commands are ``sh``, output ``text``."""
    problems: list[str] = []
    for path in doc_files():
        blocks, found = parse(path)
        problems += found
        problems += [
            f"{b.id}: a fence without a language (sh, console, python; text for output)"
            for b in blocks
            if not b.lang
        ]
        problems += [
            f"{b.id}: `server` applies to sh and python blocks"
            for b in blocks
            if b.marker == "server" and b.lang not in ("sh", "python")
        ]
    assert not problems, "\n".join(problems)


def test_the_docs_have_runnable_blocks_and_say_why_the_others_are_skipped() -> None:
    skipped = [b for b in BLOCKS if b.marker == "skip"]
    print(f"{len(BLOCKS)} runnable-language blocks, {len(skipped)} skipped:")
    for b in skipped:
        print(f"  {b.id} ({b.lang}): {b.reason}")
    assert len(BLOCKS) - len(skipped) >= 10  # the docs keep showing commands that run
    assert all(b.reason for b in skipped)


def test_transcript_matching() -> None:
    assert matches(["a", "...", "c"], ["a", "b", "b2", "c"])
    assert matches(["a", "...", "c"], ["a", "c"])
    assert matches(["...", "x"], ["x", "y", "x"])
    assert not matches(["a", "c"], ["a", "b", "c"])  # every line shown, unless `...`
    assert not matches(["a", "b"], ["a", "b", "extra"])
    assert not matches(["a", "...", "c"], ["a", "b"])
    steps = transcript("$ cmd -i\nhello\nmcp> ping\n...\n-> pong\n")
    assert [(s.command, s.stdin, s.expected) for s in steps] == [
        ("cmd -i", ["ping"], ["hello", "...", "-> pong"])
    ]
    assert commands("# c\na \\\n  b\n\nc # note\n") == ["a    b", "c # note"]
