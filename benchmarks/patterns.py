"""What a JSON Schema ``pattern`` check costs, now that every pattern runs on RE2 (issue 40).

``python -m benchmarks.patterns`` prints one row per case, in milliseconds per validation
(the median of several rounds, each a batch of checks): the ReDoS reproduction of issue 40
(a device reports ``^(\\w+\\s?)*$``; a 46-character sentence that almost matches) through
``SchemaValidator`` in both builds, the same through the bridge's argument check, a common
pattern against Python's ``re`` on the same text, Python's ``re`` on the ReDoS pattern for
shorter sentences (its time doubles with each character: 46 took 13.5 s), and a worst case
for RE2: a pattern that defeats its DFA, on a value at the work bound
(``MAX_PATTERN_WORK`` / program size) and on one just past it (refused without running).
The target is under 10 ms per validation for the reproduction.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.purepy import import_pure, is_compiled

EVIL = r"^(\w+\s?)*$"
SENTENCE = "a" * 45 + "!"
TARGET_MS = 10.0


def per_call_ms(fn: Callable[[], Any], rounds: int = 7, batch_s: float = 0.05) -> float:
    """The median over ``rounds`` of the mean time of one ``fn()`` in a batch (ms)."""
    n = 1
    while True:  # a batch of about batch_s seconds
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start >= batch_s or n >= 1 << 20:
            break
        n *= 2
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) * 1000 / n)
    return statistics.median(samples)


def refused(validator: Any, args: dict[str, Any]) -> Callable[[], None]:
    def run() -> None:
        try:
            validator.validate(args)
        except ValueError:
            return
        raise AssertionError("expected a ValidationError")

    return run


def rows(rounds: int) -> list[tuple[str, float, str]]:
    import mcpgen.runtime.core.validate as compiled

    pure = import_pure(["mcpgen.runtime.core.validate"])["mcpgen.runtime.core.validate"]
    assert is_compiled(compiled) and not is_compiled(pure), "needs the compiled build (dev.sh setup)"
    schema = {"type": "object", "properties": {"text": {"type": "string", "pattern": EVIL}}}
    out: list[tuple[str, float, str]] = []
    for label, mod in (("compiled", compiled), ("pure Python", pure)):
        v = mod.SchemaValidator(schema)
        ms = per_call_ms(refused(v, {"text": SENTENCE}), rounds)
        out.append((f"ReDoS reproduction, SchemaValidator ({label})", ms, "refused: no match"))

    from mcpgen.runtime.bridge.core import Bridge

    bridge = Bridge()

    class Tool:
        name = "self.say"
        input_schema = schema

    class Dev:
        device_id = "one"

    tool, dev = Tool(), Dev()
    check = bridge._validation_error
    ms = per_call_ms(lambda: check(dev, tool, {"text": SENTENCE}), rounds)  # type: ignore[arg-type]
    out.append(("ReDoS reproduction, the bridge's argument check (compiled)", ms, "a tool error's text"))

    host = "^[a-z0-9-]+$"
    lin = compiled.compile_pattern(host)
    rx = re.compile(host)
    ms = per_call_ms(lambda: lin.matches("desk-lamp-1"), rounds)
    out.append((f"{host} on 'desk-lamp-1', RE2 (LinearPattern.matches)", ms, "match"))
    ms = per_call_ms(lambda: rx.search("desk-lamp-1"), rounds)
    out.append((f"{host} on 'desk-lamp-1', Python re (before)", ms, "match"))

    evil = re.compile(EVIL)
    for n in (16, 18, 20):
        text = "a" * (n - 1) + "!"
        ms = per_call_ms(lambda text=text: evil.search(text), 3, 0.01)
        out.append((f"ReDoS pattern, Python re (before), {n} characters", ms, "doubles per character"))

    # an exponential DFA: RE2's cache thrashes and it falls back to its NFA, O(text x program)
    worst = "[ab]*a[ab]{999}c"
    wp = compiled.compile_pattern(worst)
    at_bound = "".join("ab"[(i * 7919) % 3 % 2] for i in range(wp.max_subject))
    ms = per_call_ms(lambda: wp.matches(at_bound), 3, 0.01)
    label = f"worst case {worst}: {wp.program_size} instructions, {len(at_bound)} characters (the bound)"
    out.append((label, ms, "no match"))
    past = at_bound + "a"
    ms = per_call_ms(lambda: wp.matches(past), rounds)
    out.append((f"worst case, {len(past)} characters (past the bound: refused unrun)", ms, "refused"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.patterns", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="rounds per row (median taken)")
    args = parser.parse_args(argv)
    table = rows(args.rounds)
    width = max(len(r[0]) for r in table)
    print(f"{'case':<{width}}  {'ms per validation':>18}  outcome")
    for label, ms, note in table:
        print(f"{label:<{width}}  {ms:>18.4f}  {note}")
    redos = [ms for label, ms, _ in table if label.startswith("ReDoS reproduction")]
    verdict = "PASS" if max(redos) < TARGET_MS else "FAIL"
    print(f"{verdict} ReDoS reproduction under {TARGET_MS:g} ms per validation (worst: {max(redos):.4f} ms)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
