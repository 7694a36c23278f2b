"""What a call costs through the bindings of an older release, against the newest version's.

A backend built from desk_lamp 0.4.0 (tests/evolution/desk_lamp_v2.yaml) serves a 0.3.1
lamp (toolspec/desk_lamp.yaml) through the release module its bindings carry
(policy "compatible"). This times the part of a call that differs: the typed method, its
argument checks and the hand-off to ``Device.invoke`` (a stub here, the same for both), for
three tools: one both versions share unchanged, one whose range 0.4.0 widened, and one that
0.4.0 gave a new optional parameter (the 0.3.1 method checks that it was not passed).

Rounds are interleaved (each round runs every candidate once, in a shuffled order) and the
CPU time of each batch is read with ``time.process_time_ns``; the ratio old/new is taken per
round and its median printed.

    python -m benchmarks.release_calls            # compiled bindings (the default)
    python -m benchmarks.release_calls --pure     # the same .py run as plain Python
    python -m benchmarks.release_calls --write    # both, into benchmarks/release_calls.md

``--write`` keeps the tables in ``benchmarks/release_calls.md``, which ``benchmarks.report``
puts into docs/benchmarks.md (section 5) whenever it renders it.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SECTION = Path(__file__).resolve().parent / "release_calls.md"
V1 = REPO / "toolspec" / "desk_lamp.yaml"
V2 = REPO / "tests" / "evolution" / "desk_lamp_v2.yaml"


class StubDevice:
    """Just enough of ``runtime.Device`` for the bindings: ``invoke`` returns at once."""

    device_id = "bench"

    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint

    def set_return_kinds(self, kinds: Any) -> None:
        pass

    def invoke(self, name: str, arguments: dict, kind: int, timeout: Any = None) -> Any:
        return None

    def on_event(self, callback: Any) -> Any:
        return lambda: None

    def on_close(self, callback: Any) -> None:
        pass

    closed = False


def build(root: Path, compile: bool) -> Any:
    """The 0.4.0 bindings with release 0.3.1 recorded, imported."""
    from mcpgen.codegen.spec.history import write_release
    from mcpgen.codegen.spec.loader import load_spec
    from mcpgen.codegen.targets.python import build_bindings, import_bindings

    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    spec = root / "desk_lamp.yaml"
    shutil.copy(V1, spec)
    write_release(spec, load_spec(spec))
    shutil.copy(V2, spec)
    pydir = build_bindings(spec, root / "out", log=lambda _m: None, compile=compile)
    return import_bindings(pydir, "desk_lamp_tools")


def calls(lamp: Any) -> dict[str, Callable[[], Any]]:
    light, timer = lamp.light, lamp.timer
    return {
        "light.set_rgb(r, g, b)": lambda: light.set_rgb(r=10, g=20, b=30),
        "timer.set(minutes)": lambda: timer.set(minutes=30),
        "light.set_effect(effect)": lambda: light.set_effect(effect="candle"),
    }


def batch(fn: Callable[[], Any], n: int) -> int:
    start = time.process_time_ns()
    for _ in range(n):
        fn()
    return time.process_time_ns() - start


def measure(pure: bool, rounds: int, n: int) -> list[str]:
    """The table of one build, as Markdown lines."""
    mod = build(REPO / "build" / "benchmarks" / ("releases-pure" if pure else "releases"), compile=not pure)
    fp_old, fp_new = list(mod.RELEASES)
    old, new = mod.DeskLamp(StubDevice(fp_old)), mod.DeskLamp(StubDevice(fp_new))
    assert (old.version, new.version) == ("0.3.1", "0.4.0")
    build_kind = "pure Python" if pure else "compiled" if mod.COMPILED else "pure Python (no compiler)"
    out = [
        f"Bindings {build_kind}; {rounds} rounds x {n} calls per candidate, interleaved; CPU ns per call.",
        "",
        "| call | 0.4.0 device (newest) | 0.3.1 device (release module) "
        "| old / new (median of per-round ratios) |",
        "|---|---|---|---|",
    ]
    for label in calls(new):
        candidates = {"new": calls(new)[label], "old": calls(old)[label]}
        for fn in candidates.values():
            batch(fn, n // 10)  # warm up
        per: dict[str, list[float]] = {"new": [], "old": []}
        ratios = []
        for _ in range(rounds):
            order = list(candidates)
            random.shuffle(order)
            got = {name: batch(candidates[name], n) / n for name in order}
            for name, ns in got.items():
                per[name].append(ns)
            ratios.append(got["old"] / got["new"])
        out.append(
            f"| {label} | {statistics.median(per['new']):.0f} | {statistics.median(per['old']):.0f} | "
            f"{statistics.median(ratios):.3f} |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--pure", action="store_true", help="run the bindings as plain Python")
    parser.add_argument(
        "--write", action="store_true", help="measure both builds into benchmarks/release_calls.md"
    )
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--batch", type=int, default=20000)
    args = parser.parse_args()
    if not args.write:
        print("\n".join(measure(args.pure, args.rounds, args.batch)))
        return
    lines = [
        "A backend built from desk_lamp 0.4.0 serves a 0.3.1 lamp through the release module its bindings "
        'carry (`policy="compatible"`, docs/runtime.md). Timed: the typed method, its argument checks '
        "and the hand-off to `Device.invoke` (a stub, the same for both): the part of a call that differs "
        "between "
        "versions. `set_effect` has a parameter 0.4.0 added: the newest method checks three arguments, the "
        "0.3.1 one two plus that the new one was not passed. Written by "
        "`python -m benchmarks.release_calls --write` (code: `benchmarks/release_calls.py`).",
        "",
    ]
    for pure in (False, True):
        lines += measure(pure, args.rounds, args.batch) + [""]
    SECTION.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    print(SECTION.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
