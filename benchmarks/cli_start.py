"""How long the ``codegen`` command takes to start (issue 43: at most 0.25 s).

Times three things a user does all day, each a fresh process, as the shell starts it:
``codegen --help``, ``codegen check toolspec/desk_lamp.yaml``, and a Tab (``codegen check --f``
answered the way the completion script asks it: argcomplete's ``_ARGCOMPLETE`` environment).
Each runs once to warm the caches, then 10 rounds, the three in a shuffled order in each
round; the table gives the median wall time, the spread and the median CPU time (user +
system, which a busy machine inflates less than the wall time) against the target.

    python -m benchmarks.cli_start                  # print the table
    python -m benchmarks.cli_start --write          # and keep it in benchmarks/cli_start.md
    python -m benchmarks.cli_start --compare OTHER  # beside another install's, e.g. before a change

``--write`` keeps the table in ``benchmarks/cli_start.md``, which ``benchmarks.report`` puts
into docs/benchmarks.md (section 8) whenever it renders it.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SECTION = Path(__file__).resolve().parent / "cli_start.md"
SPEC = "toolspec/desk_lamp.yaml"
TARGET_S = 0.25
TAB_LINE = "codegen check --f"
REFERENCE = "python -c pass"  # the interpreter alone: what no change to codegen can save


def command(python: str) -> list[str]:
    """The installed ``codegen`` script beside ``python``, else ``python -m mcpgen``."""
    script = Path(python).parent / "codegen"
    return [str(script)] if script.is_file() else [python, "-m", "mcpgen"]


def candidates(python: str, out: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    codegen = command(python)
    # As an installed package runs: from bytecode caches (the warm-up run writes them, even
    # where PYTHONDONTWRITEBYTECODE is set, as in some containers).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tab = dict(env, _ARGCOMPLETE="1", COMP_LINE=TAB_LINE, COMP_POINT=str(len(TAB_LINE)),
               _ARGCOMPLETE_STDOUT_FILENAME=str(out))  # fmt: skip
    return {
        REFERENCE: ([python, "-c", "pass"], env),
        "codegen --help": ([*codegen, "--help"], env),
        f"codegen check {SPEC}": ([*codegen, "check", SPEC], env),
        f"Tab: {TAB_LINE}": (codegen, tab),
    }


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(pythons: list[str], runs: int) -> list[dict[str, object]]:
    """Rows of (python, command): every case of every python in each round, shuffled."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = {(py, name): case for py in pythons
                 for name, case in candidates(py, Path(tmp) / "completions").items()}  # fmt: skip
        times: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in cases}
        for argv, env in cases.values():
            once(argv, env)  # warm: bytecode caches, the page cache
        for _ in range(runs):
            order = list(cases)
            random.shuffle(order)
            for key in order:
                times[key].append(once(*cases[key]))
    rows: list[dict[str, object]] = []
    for (python, name), samples in times.items():
        walls = [w for w, _ in samples]
        median = statistics.median(walls)
        rows.append({"python": python, "command": name, "median_s": median, "min_s": min(walls),
                     "max_s": max(walls), "cpu_median_s": statistics.median(c for _, c in samples),
                     "ok": None if name == REFERENCE else median <= TARGET_S})  # fmt: skip
    return rows


def verdict(ok: object) -> str:
    return "(reference) | " if ok is None else f"≤ {TARGET_S} s | {'PASS' if ok else 'MISS'}"


def table(rows: list[dict[str, object]], runs: int) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    several = len({r["python"] for r in rows}) > 1
    lines = [
        f"Median of {runs} runs each, interleaved (`python -m benchmarks.cli_start`; "
        f"load average after: {load}; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}).",
        "",
        "| command | " + ("install | " if several else "") + "median | min–max | CPU (median) | target | |",
        "|---|" + ("---|" if several else "") + "---:|---:|---:|---:|---|",
    ]
    for r in rows:
        install = f"`{r['python']}` | " if several else ""
        lines.append(
            f"| `{r['command']}` | {install}{r['median_s']:.3f} s | {r['min_s']:.3f}–{r['max_s']:.3f} s "
            f"| {r['cpu_median_s']:.3f} s | {verdict(r['ok'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.cli_start", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs of each command (default: 10)")
    ap.add_argument(
        "--python", default=sys.executable, help="the python whose codegen to time (default: this one)"
    )
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="PYTHON",
        help="also time the codegen of this python in the same rounds (e.g. an install of "
        "the code before a change); repeatable",
    )
    ap.add_argument("--write", action="store_true", help="also write the table to benchmarks/cli_start.md")
    args = ap.parse_args(argv)
    rows = measure([args.python, *args.compare], args.runs)
    mine = [r for r in rows if r["python"] == args.python and r["ok"] is not None]
    text = table(rows, args.runs)
    print(text, end="")
    if args.write:
        SECTION.write_text(text)
        print(f"wrote {SECTION}")
    return 0 if all(r["ok"] for r in mine) else 1


if __name__ == "__main__":
    sys.exit(main())
