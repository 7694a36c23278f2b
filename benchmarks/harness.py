"""Interleaved micro-benchmark harness.

Every comparison times all of its candidates in the same process, round after round;
in each round the candidates run in a fresh random order, each for a batch of
iterations sized to take about the same wall time. Machine noise (frequency changes,
other processes) therefore hits every candidate alike, and ratios are computed per
round (candidate / floor of the same round) before taking their median.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Optional

Thunk = Callable[[], object]
# make(n) prepares (untimed) whatever a batch of n operations needs -- e.g. n frames with
# distinct ids and their pending requests -- and returns the thunk that does the n
# operations; only the thunk is timed. A thunk may carry a ``cleanup`` attribute, called
# (untimed) after it ran.
Maker = Callable[[int], Thunk]


@dataclass
class Candidate:
    """One way of doing the same work."""

    name: str
    make: Maker
    note: str = ""
    floor: bool = False


@dataclass
class Stats:
    median: float
    p25: float
    p75: float
    min: float
    max: float
    samples: list[float] = field(repr=False)

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        xs = sorted(samples)
        if len(xs) >= 2:
            q = statistics.quantiles(xs, n=4, method="inclusive")
            p25, p75 = q[0], q[2]
        else:
            p25 = p75 = xs[0]
        return cls(statistics.median(xs), p25, p75, xs[0], xs[-1], list(samples))

    def as_dict(self) -> dict[str, Any]:
        return {
            "median": self.median,
            "p25": self.p25,
            "p75": self.p75,
            "min": self.min,
            "max": self.max,
            "samples": self.samples,
        }


@dataclass
class Comparison:
    """Per-op nanoseconds of each candidate over the rounds, plus ratios to the floor."""

    title: str
    unit: str
    ns: dict[str, Stats]
    iterations: dict[str, int]
    notes: dict[str, str]
    floor: Optional[str]
    ratio: dict[str, Stats]  # per-round candidate/floor
    rounds: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "unit": self.unit,
            "rounds": self.rounds,
            "floor": self.floor,
            "candidates": {
                name: {
                    "ns_per_op": st.as_dict(),
                    "iterations_per_round": self.iterations[name],
                    "note": self.notes.get(name, ""),
                    "ratio_to_floor": self.ratio[name].as_dict() if name in self.ratio else None,
                }
                for name, st in self.ns.items()
            },
        }

    def median_ratio(self, a: str, b: str) -> float:
        """Median over rounds of ns(a)/ns(b) (paired per round)."""
        xs = [x / y for x, y in zip(self.ns[a].samples, self.ns[b].samples, strict=False) if y > 0]
        return statistics.median(xs)


def loop(fn: Callable[[Any], Any], arg: Any) -> Maker:
    """Calls ``fn(arg)`` n times with the least loop overhead Python allows."""

    def make(n: int) -> Thunk:
        def run() -> None:
            f = fn
            a = arg
            for _ in repeat(None, n):
                f(a)

        return run

    return make


def loop0(fn: Callable[[], Any]) -> Maker:
    """Calls ``fn()`` n times."""

    def make(n: int) -> Thunk:
        def run() -> None:
            f = fn
            for _ in repeat(None, n):
                f()

        return run

    return make


def each(fn: Callable[[Any], Any], prepare: Callable[[int], list[Any]]) -> Maker:
    """Calls ``fn(x)`` for every x of ``prepare(n)`` (built before the clock starts)."""

    def make(n: int) -> Thunk:
        items = prepare(n)

        def run() -> None:
            f = fn
            for x in items:
                f(x)

        return run

    return make


def _time(make: Maker, n: int) -> int:
    thunk = make(n)
    gc.collect()  # no candidate pays for garbage another one (or the set-up) left
    t0 = time.perf_counter_ns()
    thunk()
    dt = time.perf_counter_ns() - t0
    cleanup = getattr(thunk, "cleanup", None)
    if cleanup is not None:
        cleanup()
    del thunk
    return dt


def calibrate(make: Maker, batch_s: float) -> int:
    """Iterations for one batch of about ``batch_s`` seconds."""
    _time(make, 1)  # warm up (first-call caches, lazy imports)
    n = 1
    while True:
        dt = _time(make, n)
        if dt >= batch_s * 1e9 / 8 or n >= 1 << 26:
            break
        n *= 4 if dt < batch_s * 1e9 / 64 else 2
    per = dt / n
    return max(1, int(batch_s * 1e9 / max(per, 1.0)))


def compare(
    title: str,
    candidates: Sequence[Candidate],
    rounds: int,
    batch_s: float,
    seed: int = 12345,
    unit: str = "ns/msg",
    log: Optional[Callable[[str], None]] = None,
) -> Comparison:
    """Runs the candidates interleaved: each round, a shuffled order, one batch each."""
    rng = random.Random(seed)
    iters = {c.name: calibrate(c.make, batch_s) for c in candidates}
    samples: dict[str, list[float]] = {c.name: [] for c in candidates}
    order = list(candidates)
    for _ in range(rounds):
        rng.shuffle(order)
        for c in order:
            n = iters[c.name]
            samples[c.name].append(_time(c.make, n) / n)
    floor = next((c.name for c in candidates if c.floor), None)
    ns = {name: Stats.of(xs) for name, xs in samples.items()}
    ratio: dict[str, Stats] = {}
    if floor is not None:
        for name, xs in samples.items():
            ratio[name] = Stats.of([x / f for x, f in zip(xs, samples[floor], strict=False)])
    comp = Comparison(
        title=title,
        unit=unit,
        ns=ns,
        iterations=iters,
        notes={c.name: c.note for c in candidates},
        floor=floor,
        ratio=ratio,
        rounds=rounds,
    )
    if log is not None:
        parts = []
        for c in candidates:
            st = ns[c.name]
            r = f" x{ratio[c.name].median:.2f}" if c.name in ratio else ""
            parts.append(f"{c.name}={st.median:,.0f}{r}")
        log(f"  {title}: " + ", ".join(parts))
    return comp


@dataclass
class Target:
    """A goal stated as a ratio between two candidates of one comparison."""

    label: str
    comparison: str
    numerator: str
    denominator: str
    limit: float
    kind: str  # "max" (ratio must be <= limit) or "speedup" (denominator/numerator >= limit)

    def evaluate(self, comps: dict[str, Comparison]) -> dict[str, Any]:
        comp = comps.get(self.comparison)
        if comp is None or self.numerator not in comp.ns or self.denominator not in comp.ns:
            return {
                "label": self.label,
                "status": "N/A",
                "value": None,
                "limit": self.limit,
                "kind": self.kind,
            }
        if self.kind == "max":
            value = comp.median_ratio(self.numerator, self.denominator)
            ok = value <= self.limit
        else:
            value = comp.median_ratio(self.denominator, self.numerator)
            ok = value >= self.limit
        return {
            "label": self.label,
            "comparison": self.comparison,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "status": "PASS" if ok else "MISS",
            "value": value,
            "limit": self.limit,
            "kind": self.kind,
        }
