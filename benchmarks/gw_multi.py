"""SO_REUSEPORT workers: total throughput of 2 gateway processes on one port vs 1.

``python -m benchmarks.gw_multi --devices 1000 --workers 2`` starts two groups of
gateway workers (:class:`mcpgen.runtime.links.workers.Workers`): one with a single worker, one
with ``--workers`` processes sharing a port, each group with its own emulator process
connecting the devices (the kernel spreads them over that group's workers). Every
worker runs the backend code :func:`drive_windows`: during each time window of a shared
schedule it calls its own devices back to back (one call in flight per device) and then
writes its calls and CPU time to a file. Windows alternate between the two groups, so
the figures are interleaved; the result is the summed calls/s of each group per
window, and the ratio of the two per pair of windows (median).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.procutil import Child, raise_nofile_limit

TOOL = "self.light.set_rgb"
ARGS = {"r": 255, "g": 128, "b": 0}
Log = Callable[[str], None]


async def drive_windows(gw: Any) -> None:
    """The workers' backend code: call own devices during each scheduled window."""
    out_dir = Path(os.environ["MCPGEN_BENCH_DIR"])
    windows = json.loads(os.environ["MCPGEN_BENCH_WINDOWS"])
    index = getattr(gw, "worker_index", 0)
    for w, (start, end) in enumerate(windows):
        await asyncio.sleep(max(0.0, start - time.time()))
        devices = [d for d in gw.connected.values() if not d.closed]
        calls = 0
        errors = 0

        async def loop_calls(dev: Any, end: float = end) -> None:
            nonlocal calls, errors
            call = dev.call
            while time.time() < end:
                try:
                    await call(TOOL, ARGS)
                    calls += 1
                except Exception:  # noqa: BLE001 - counted
                    errors += 1

        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        await asyncio.gather(*(loop_calls(d) for d in devices))
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        (out_dir / f"w{w}-worker{index}.json").write_text(
            json.dumps({"devices": len(devices), "calls": calls, "errors": errors, "cpu_seconds": cpu})
        )
    await asyncio.sleep(3600)  # until the parent stops the workers


def compare(count: int, workers: int, duration: float, rounds: int, log: Log) -> dict[str, Any]:
    from mcpgen.runtime.links.workers import Workers

    raise_nofile_limit()
    tmp = Path(tempfile.mkdtemp(prefix="mcpgen-gw-multi-"))
    settle = 15.0 + count * 0.01  # connect and set up every device first
    t0 = time.time() + settle
    groups = {1: [], workers: []}  # type: dict[int, list[tuple[float, float]]]
    t = t0
    for _ in range(rounds):
        for n in (1, workers):
            groups[n].append((t, t + duration))
            t += duration + 0.5
    opts = {"policy": "off", "call_timeout": 30.0, "hello_timeout": 60.0, "max_frame": 1 << 20}
    running: list[Any] = []
    emus: list[Child] = []
    try:
        for n, windows in groups.items():
            d = tmp / f"group{n}"
            d.mkdir()
            os.environ["MCPGEN_BENCH_DIR"] = str(d)
            os.environ["MCPGEN_BENCH_WINDOWS"] = json.dumps(windows)
            w = Workers(drive_windows, workers=n, gateway_options=opts)
            running.append(w)
            # Connecting before the workers listened had devices refused (153 of 1,000 in
            # one run): until then only the parent's bound socket holds the port.
            if not w.wait_listening(60.0):
                raise RuntimeError(f"the {n} worker(s) did not all listen within 60 s")
            emu = Child(
                [
                    "-m",
                    "benchmarks.gw_emulator",
                    "--url",
                    f"ws://127.0.0.1:{w.port}/",
                    "--count",
                    str(count),
                    "--max-seconds",
                    str(t - time.time() + 60),
                    "--prefix",
                    f"g{n}",
                ],
                name=f"emulator ({n} workers)",
            )
            emus.append(emu)
        for emu in emus:
            conn = emu.read(120 + count * 0.1)
            if conn.get("connected", 0) < count:
                raise RuntimeError(f"only {conn.get('connected')} of {count} devices connected")
        time.sleep(max(0.0, t - time.time() + 2.0))
        out: dict[str, Any] = {"devices": count, "workers": workers, "round_seconds": duration, "groups": {}}
        for n, windows in groups.items():
            per_window = []
            for i in range(len(windows)):
                files = sorted((tmp / f"group{n}").glob(f"w{i}-worker*.json"))
                rs = [json.loads(f.read_text()) for f in files]
                calls = sum(r["calls"] for r in rs)
                per_window.append(
                    {
                        "calls_per_s": calls / duration,
                        "cpu_us_per_call": sum(r["cpu_seconds"] for r in rs) / calls * 1e6 if calls else 0.0,
                        "devices_per_worker": [r["devices"] for r in rs],
                        "errors": sum(r["errors"] for r in rs),
                    }
                )
            out["groups"][str(n)] = {
                "windows": per_window,
                "calls_per_s": statistics.median(w["calls_per_s"] for w in per_window),
                "cpu_us_per_call": statistics.median(w["cpu_us_per_call"] for w in per_window),
            }
        a, b = out["groups"][str(workers)]["windows"], out["groups"]["1"]["windows"]
        out["throughput_ratio"] = statistics.median(
            x["calls_per_s"] / y["calls_per_s"] for x, y in zip(a, b, strict=False) if y["calls_per_s"] > 0
        )
        log(
            f"  SO_REUSEPORT, {count} devices: 1 worker {out['groups']['1']['calls_per_s']:,.0f} calls/s, "
            f"{workers} workers {out['groups'][str(workers)]['calls_per_s']:,.0f} calls/s "
            f"(ratio {out['throughput_ratio']:.2f}; devices per worker "
            f"{a[0]['devices_per_worker'] if a else '?'})"
        )
        return out
    finally:
        for emu in emus:
            emu.stop()
        for w in running:
            w.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    res = compare(args.devices, args.workers, args.seconds, args.rounds, lambda s: print(s, file=sys.stderr))
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
