"""Section 2: the device gateway under load, compiled vs pure-Python runtime.

For each device count, two gateway processes are started (``benchmarks.gw_worker``,
one per runtime build; the pure one with ``MCPGEN_PURE_PYTHON=1``) and each gets its
own emulator process (``benchmarks.gw_emulator``) that connects that many devices over
loopback. Then rounds alternate between the two gateways in random order: in each
round one gateway at a time drives ``tools/call`` round trips (``Device.call`` of
desk-lamp's ``self.light.set_rgb``, validated, one call in flight per device) for a
fixed time while the other one idles. Memory per device is the gateway's RSS growth
from start to all devices ready, divided by the count.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any, Optional

from benchmarks.procutil import Child, raise_nofile_limit

Log = Callable[[str], None]
MODES = ("compiled", "pure Python")


def _spread(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def _summary(m: dict[str, Any]) -> str:
    return (
        f"{m['calls_per_s']['median']:,.0f} calls/s (p50 {m['p50_us']['median']:,.0f} us, "
        f"p99 {m['p99_us']['median']:,.0f} us, {m['cpu_us_per_call']['median']:,.0f} us CPU/call, "
        f"{m['bytes_per_device'] / 1024:,.1f} KiB/device)"
    )


def run_count(
    count: int, rounds: int, duration: float, log: Log, bindings_dir: Optional[str] = None, seed: int = 7
) -> dict[str, Any]:
    workers: dict[str, Child] = {}
    emus: dict[str, Child] = {}
    out: dict[str, Any] = {"devices": count, "modes": {}}
    try:
        info: dict[str, dict[str, Any]] = {}
        for mode in MODES:
            extra = ["--bindings", bindings_dir] if bindings_dir else []
            w = Child(
                ["-m", "benchmarks.gw_worker", *extra], pure=(mode != "compiled"), name=f"gateway ({mode})"
            )
            workers[mode] = w
            info[mode] = w.read(60)
        for mode in MODES:
            url = f"ws://127.0.0.1:{info[mode]['port']}/"
            emus[mode] = Child(
                [
                    "-m",
                    "benchmarks.gw_emulator",
                    "--url",
                    url,
                    "--count",
                    str(count),
                    "--max-seconds",
                    str(max(120.0, 30 + rounds * duration * 4 + count * 0.05)),
                ],
                name=f"emulator ({mode})",
            )
        for mode in MODES:
            conn = emus[mode].read(120 + count * 0.1)
            if conn.get("connected", 0) < count:
                raise RuntimeError(f"{mode}: only {conn.get('connected')} of {count} devices connected")
            ready = workers[mode].request({"cmd": "await", "n": count, "timeout": 120}, 130)
            rss0 = int(info[mode]["rss"])
            out["modes"][mode] = {
                "runtime_compiled": info[mode]["compiled"],
                "bindings": info[mode].get("bindings"),
                "rss_start_bytes": rss0,
                "rss_ready_bytes": ready["rss"],
                "bytes_per_device": (ready["rss"] - rss0) / count,
                "setup_seconds": ready["seconds"],
                "connect_seconds": conn.get("seconds"),
                "rounds": [],
            }
        for mode in MODES:  # warm-up round, not recorded
            workers[mode].request({"cmd": "bench", "duration": min(duration, 0.5)}, 120)
        rng = random.Random(seed)
        order = list(MODES)
        for _ in range(rounds):
            rng.shuffle(order)
            for mode in order:
                r = workers[mode].request({"cmd": "bench", "duration": duration}, 120 + duration * 4)
                out["modes"][mode]["rounds"].append(r)
        for mode in MODES:
            m = out["modes"][mode]
            rs = m["rounds"]
            m["calls_per_s"] = _spread([r["calls_per_s"] for r in rs])
            m["p50_us"] = _spread([r["p50_us"] for r in rs])
            m["p99_us"] = _spread([r["p99_us"] for r in rs])
            m["cpu_us_per_call"] = _spread([r["cpu_us_per_call"] for r in rs])
            m["cpu_share"] = _spread([r["cpu_share"] for r in rs])
            m["errors"] = sum(r["errors"] for r in rs)
            m["calls"] = sum(r["calls"] for r in rs)
        c, p = out["modes"]["compiled"], out["modes"]["pure Python"]
        out["throughput_ratio_compiled_vs_pure"] = statistics.median(
            [
                a["calls_per_s"] / b["calls_per_s"]
                for a, b in zip(c["rounds"], p["rounds"], strict=False)
                if b["calls_per_s"] > 0
            ]
        )
        out["cpu_per_call_ratio_pure_vs_compiled"] = statistics.median(
            [
                b["cpu_us_per_call"] / a["cpu_us_per_call"]
                for a, b in zip(c["rounds"], p["rounds"], strict=False)
                if a["cpu_us_per_call"] > 0
            ]
        )
        log(f"  {count} devices: compiled {_summary(c)}; pure {_summary(p)}")
    finally:
        for e in emus.values():
            e.stop()
        for w in workers.values():
            w.stop()
    return out


def run(counts: list[int], rounds: int, duration: float, log: Log) -> dict[str, Any]:
    from benchmarks import bindings as bnd

    soft, hard = raise_nofile_limit()
    pydir = bnd.build(log)
    results = []
    for n in counts:
        results.append(run_count(n, rounds, duration, log, str(pydir) if pydir else None))
    return {
        "counts": counts,
        "rounds": rounds,
        "round_seconds": duration,
        "nofile_limit": [soft, hard],
        "tool": "`DeskLamp(device).light.set_rgb(b=0, g=128, r=255)` of the generated bindings"
        if pydir
        else "`device.call('self.light.set_rgb', {...})` (schema-validated)",
        "results": results,
    }
