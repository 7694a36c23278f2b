"""``python -m benchmarks.spec_diff``: time ``codegen diff`` on a generated spec of many tools.

Two specs of ``--tools`` tools are written to a temporary folder: the new one renames every
other tool and widens some ranges, so the diff has a change per tool and a rename guess per
removed tool. Prints the seconds of each step (load both, classify, locate) and the work
counted by the diff (names compared for rename guesses, YAML entries indexed to locate).
Issue 40: at 100,000 tools the diff ran past 60 s (quadratic in the tool count).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Optional


def spec_text(tools: int, renamed: bool) -> str:
    """A spec of ``tools`` tools in 100 groups; ``renamed``: every other tool renamed and
    some ranges widened (the NEW side of the benchmark)."""
    lines = ["device:", "  name: big", "  version: 1.0.0", "tools:"]
    for i in range(tools):
        name = f"self.group{i % 100}.tool_{i}" + ("_v2" if renamed and i % 2 else "")
        top = 100 + (i % 7 if renamed else 0)
        lines += [
            f"  - name: {name}",
            f"    description: Tool {i}.",
            "    params:",
            f"      level: {{type: integer, min: 0, max: {top}}}",
            "    returns: boolean",
        ]
    return "\n".join(lines) + "\n"


def run(tools: int) -> dict[str, float]:
    from mcpgen.codegen.spec import evolution
    from mcpgen.codegen.spec.loader import check_and_load
    from mcpgen.codegen.spec.locate import SpecLocator

    with tempfile.TemporaryDirectory() as tmp:
        old_path, new_path = Path(tmp) / "old.yaml", Path(tmp) / "new.yaml"
        old_path.write_text(spec_text(tools, False), encoding="utf-8")
        new_text = spec_text(tools, True)
        new_path.write_text(new_text, encoding="utf-8")
        c0 = time.process_time()
        t0 = time.perf_counter()
        old, errors = check_and_load(old_path)
        new, new_errors = check_and_load(new_path)
        assert old is not None and new is not None, errors + new_errors
        t1 = time.perf_counter()
        changes = evolution.diff_specs(old, new)
        t2 = time.perf_counter()
        locator = SpecLocator(str(new_path), new_text)
        located = evolution.locate_changes(changes, locator)
        t3 = time.perf_counter()
        c3 = time.process_time()
    return {
        "tools": tools,
        "changes": len(located),
        "load_s": t1 - t0,
        "diff_s": t2 - t1,
        "locate_s": t3 - t2,
        "entries_read": locator.entries_read,
        "cpu_s": c3 - c0,
    }


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.spec_diff", description=__doc__)
    ap.add_argument("--tools", type=int, nargs="+", default=[10_000, 100_000])
    args = ap.parse_args(argv)
    for n in args.tools:
        r = run(n)
        print(
            f"{n:>7} tools: {r['changes']} changes; load both {r['load_s']:.1f} s, "
            f"classify {r['diff_s']:.2f} s, "
            f"locate {r['locate_s']:.2f} s ({r['entries_read']} YAML entries indexed); "
            f"{r['cpu_s']:.1f} s of CPU in all",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
