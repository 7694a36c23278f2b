"""``python -m benchmarks``: run the benchmarks and write the report.

Sections: ``hotpath`` (backend decode/encode/validation against the alternatives),
``gateway`` (round trips and memory with many connected devices), ``device`` (code and
data size, heap allocations and instructions of the C++ core), ``mqtt`` (fleet workers
through Mosquitto beside the direct WebSocket gateway). ``--only`` runs some of
them and merges their figures into the existing JSON, so the report stays complete.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path
from typing import Any, Optional

from benchmarks import report, sysinfo
from benchmarks.procutil import REPO, raise_nofile_limit

SECTIONS = ("hotpath", "gateway", "device", "mqtt")


def _log(msg: str) -> None:
    print(msg, flush=True)


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks of mcpgen against what users would pick instead; writes docs/benchmarks.md "
        "and docs/benchmarks.json.",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke mode: few rounds, tiny batches, 1 and 20 devices (figures are not meaningful)",
    )
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SECTION",
        help=f"run only this section (repeatable or comma-separated): {', '.join(SECTIONS)}",
    )
    ap.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="where benchmarks.md/.json go (default: docs/, or build/benchmarks/quick with --quick)",
    )
    ap.add_argument("--rounds", type=int, default=None, help="rounds per comparison (default 21, quick 3)")
    ap.add_argument(
        "--batch-ms", type=float, default=None, help="time per candidate batch (default 25, quick 2)"
    )
    ap.add_argument(
        "--devices", default=None, help="device counts for the gateway section (default 1,100,1000)"
    )
    ap.add_argument(
        "--mqtt-devices", default=None, help="device counts for the mqtt section (default 100,1000)"
    )
    ap.add_argument(
        "--render", action="store_true", help="only re-write benchmarks.md from the existing benchmarks.json"
    )
    return ap.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    only = [s.strip() for item in args.only for s in item.split(",") if s.strip()]
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        print(f"unknown section(s): {', '.join(bad)} (choose from {', '.join(SECTIONS)})", file=sys.stderr)
        return 2
    sections = only or list(SECTIONS)
    quick = args.quick
    out_dir = args.out_dir or (REPO / "build" / "benchmarks" / "quick" if quick else REPO / "docs")
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.render:
        data = json.loads((out_dir / "benchmarks.json").read_text())
        (out_dir / "benchmarks.md").write_text(report.render(data))
        _log(f"wrote {out_dir / 'benchmarks.md'}")
        return 0
    rounds = args.rounds or (3 if quick else 21)
    batch_s = (args.batch_ms or (2.0 if quick else 25.0)) / 1000
    counts = (
        [int(x) for x in args.devices.split(",")] if args.devices else ([1, 20] if quick else [1, 100, 1000])
    )
    gw_rounds = 2 if quick else 7
    gw_duration = 0.25 if quick else 2.0
    raise_nofile_limit()

    json_path = out_dir / "benchmarks.json"
    data: dict[str, Any] = {}
    if only and json_path.exists():
        try:
            data = json.loads(json_path.read_text())
        except ValueError:
            data = {}
    data.setdefault("sections", {})
    data["machine"] = sysinfo.machine()
    data["versions"] = sysinfo.versions()
    data["command"] = (
        "python -m benchmarks" + (" --quick" if quick else "") + "".join(f" --only {s}" for s in only)
    )
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    data["generated"] = stamp
    _log(f"mcpgen benchmarks ({'quick' if quick else 'full'}): {', '.join(sections)} -> {out_dir}")
    _log(f"machine: {data['machine']['cpu']}, {data['machine']['usable_cpus']} CPUs, {data['machine']['os']}")
    failures: list[str] = []
    for section in sections:
        t0 = time.monotonic()
        _log(f"== {section}")
        meta = {"quick": quick, "run_at": stamp}
        try:
            if section == "hotpath":
                from benchmarks import hotpath

                res = hotpath.run(rounds, batch_s, _log)
                res.pop("_objects", None)
                res.update(meta, rounds=rounds, batch_ms=batch_s * 1000)
            elif section == "mqtt":
                from benchmarks import mqtt

                mqtt_counts = (
                    [int(x) for x in args.mqtt_devices.split(",")]
                    if args.mqtt_devices
                    else ([20] if quick else [100, 1000])
                )
                res = mqtt.run(mqtt_counts, 2 if quick else 5, gw_duration, _log)
                res.update(meta)
            elif section == "gateway":
                from benchmarks import gateway

                res = gateway.run(counts, gw_rounds, gw_duration, _log)
                res.update(meta)
            else:
                from benchmarks import device

                res = device.run(quick, _log)
                res.update(meta)
        except Exception as exc:  # noqa: BLE001 - reported, the other sections still run
            import traceback

            traceback.print_exc()
            failures.append(section)
            res = {"error": f"{type(exc).__name__}: {exc}", **meta}
        res["seconds"] = round(time.monotonic() - t0, 1)
        data["sections"][section] = res
        _log(f"   {section} took {res['seconds']} s")
    json_path.write_text(json.dumps(data, indent=1, default=str) + "\n")
    md_path = out_dir / "benchmarks.md"
    md_path.write_text(report.render(data))
    _log(f"wrote {md_path} and {json_path}")
    return 1 if failures else 0
