"""Section 2: the device gateway under load, compiled vs pure-Python runtime.

For each device count, one process per row is started: the gateway
(``benchmarks.gw_worker``) once per runtime build (the pure one with
``MCPGEN_PURE_PYTHON=1``), and three bare-transport references (``benchmarks.gw_echo``:
picows on uvloop with picows' default transport, aiofastnet, as both gateway builds
run here (``socket_transport="aiofastnet"``); the same on uvloop's own TCP stream;
websockets on asyncio), and the compiled gateway on uvloop's stream (its default). Each
gets its own emulator process (``benchmarks.gw_emulator``, picows clients) that connects
that many devices over loopback. Then rounds alternate between the rows in random order: in each round one
process at a time drives ``tools/call`` round trips (the generated bindings' call of
desk-lamp's ``self.light.set_rgb``, one call in flight per device) for a fixed time while
the others idle; the row "compiled + gc.freeze()" is the compiled gateway's own process
running its round after ``gc.freeze()``. Per round: the driving process's CPU time per
call (getrusage), latency percentiles, and the emulator's CPU share (so it is visibly not
the bottleneck). Memory per device is the gateway's RSS growth from start to all devices
ready, divided by the count. Ratios are medians over paired rounds of the same run.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any, Optional

from benchmarks import procutil
from benchmarks.procutil import Child, raise_nofile_limit

Log = Callable[[str], None]
#: The two builds of the runtime (the smoke test and the report read these keys).
MODES = ("compiled", "pure Python")
#: Reference rows measured in the same interleaved run. "compiled + gc.freeze()" is the
#: compiled gateway process itself, with the round run after gc.freeze().
#: "picows echo" runs on aiofastnet (picows' default), as the gateway rows "compiled" and
#: "pure Python" do (gw_worker's --socket-transport); "picows echo (uvloop stream)" on
#: uvloop's own TCP stream, as STREAM_GATEWAY (the compiled gateway with
#: ``socket_transport="loop"``, Gateway's default) does.
STREAM_ECHO = "picows echo (uvloop stream)"
STREAM_GATEWAY = "compiled (uvloop stream)"
EXTRA = ("compiled + gc.freeze()", STREAM_GATEWAY, "picows echo", STREAM_ECHO, "websockets echo")
ALL = MODES + EXTRA


def _spread(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def _summary(m: dict[str, Any]) -> str:
    return (
        f"{m['calls_per_s']['median']:,.0f} calls/s (p50 {m['p50_us']['median']:,.0f} us, "
        f"p99 {m['p99_us']['median']:,.0f} us, {m['cpu_us_per_call']['median']:,.1f} us CPU/call, "
        f"emulator {m['emulator_cpu_share']['median'] * 100:.0f} % CPU, "
        f"{m['bytes_per_device'] / 1024:,.1f} KiB/device)"
    )


def row_argv(mode: str, bindings_dir: Optional[str]) -> tuple[list[str], bool]:
    """The ``python`` arguments of a row's process, and whether it runs the pure-Python runtime."""
    if mode == "picows echo":
        return ["-m", "benchmarks.gw_echo", "--transport", "picows"], False
    if mode == STREAM_ECHO:
        return ["-m", "benchmarks.gw_echo", "--transport", "picows-stream"], False
    if mode == "websockets echo":
        return ["-m", "benchmarks.gw_echo", "--transport", "websockets"], False
    extra = ["--bindings", bindings_dir] if bindings_dir else []
    if mode == STREAM_GATEWAY:
        extra += ["--socket-transport", "loop"]
    return ["-m", "benchmarks.gw_worker", *extra], mode == "pure Python"


def _process(mode: str, bindings_dir: Optional[str]) -> Child:
    args, pure = row_argv(mode, bindings_dir)
    name = mode if "echo" in mode else f"gateway ({mode})"
    return Child(args, pure=pure, name=name)


def run_count(
    count: int,
    rounds: int,
    duration: float,
    log: Log,
    bindings_dir: Optional[str] = None,
    seed: int = 7,
    modes: tuple[str, ...] = ALL,
) -> dict[str, Any]:
    """One device count: every mode's process with its own emulator, rounds interleaved."""
    procs: dict[str, Child] = {}  # one process per mode, except the gc.freeze() variant
    emus: dict[str, Child] = {}
    out: dict[str, Any] = {"devices": count, "modes": {}, "extra": {}}

    def owner(mode: str) -> str:
        return "compiled" if mode == "compiled + gc.freeze()" else mode

    owners = list(dict.fromkeys(owner(m) for m in modes))
    try:
        info: dict[str, dict[str, Any]] = {}
        for mode in owners:
            procs[mode] = _process(mode, bindings_dir)
            info[mode] = procs[mode].read(60)
        for mode in owners:
            url = f"ws://127.0.0.1:{info[mode]['port']}/"
            max_s = max(120.0, 60 + rounds * duration * 3 * len(modes) + count * 0.05)
            emus[mode] = procutil.emulator(url, count, max_s, name=f"emulator ({mode})")
            # Connect one emulator at a time: the machine has few cores.
            conn = emus[mode].read(120 + count * 0.1)
            if conn.get("connected", 0) < count:
                raise RuntimeError(f"{mode}: only {conn.get('connected')} of {count} devices connected")
            ready = procs[mode].request(
                {"cmd": "await", "n": count, "timeout": 120 + count * 0.05}, 130 + count * 0.05
            )
            rss0 = int(info[mode]["rss"])
            for m in modes:
                if owner(m) != mode:
                    continue
                (out["modes"] if m in MODES else out["extra"])[m] = {
                    "runtime_compiled": info[mode]["compiled"],
                    "loop": info[mode].get("loop"),
                    "bindings": info[mode].get("bindings"),
                    "rss_start_bytes": rss0,
                    "rss_ready_bytes": ready["rss"],
                    "bytes_per_device": (ready["rss"] - rss0) / count,
                    "setup_seconds": ready["seconds"],
                    "connect_seconds": conn.get("seconds"),
                    "rounds": [],
                }
        for mode in owners:  # warm-up round, not recorded
            procs[mode].request({"cmd": "bench", "duration": min(duration, 0.5)}, 120)
        rng = random.Random(seed)
        order = list(modes)
        for _ in range(rounds):
            rng.shuffle(order)
            for mode in order:
                o = owner(mode)
                e0 = emus[o].request({"cmd": "cpu"}, 30)["cpu_seconds"]
                r = procs[o].request(
                    {"cmd": "bench", "duration": duration, "freeze": mode != o}, 120 + duration * 4
                )
                e1 = emus[o].request({"cmd": "cpu"}, 30)["cpu_seconds"]
                r["emulator_cpu_share"] = (e1 - e0) / r["seconds"] if r["seconds"] > 0 else 0.0
                (out["modes"] if mode in MODES else out["extra"])[mode]["rounds"].append(r)
        table = {**out["modes"], **out["extra"]}
        for m in table.values():
            rs = m["rounds"]
            for key in (
                "calls_per_s",
                "p50_us",
                "p99_us",
                "cpu_us_per_call",
                "cpu_share",
                "emulator_cpu_share",
            ):
                m[key] = _spread([r[key] for r in rs])
            m["errors"] = sum(r["errors"] for r in rs)
            m["calls"] = sum(r["calls"] for r in rs)

        def paired(a: str, b: str, key: str) -> Optional[float]:
            """Median over rounds of table[a][key] / table[b][key] (same round, same run)."""
            if a not in table or b not in table:
                return None
            xs = [
                x[key] / y[key]
                for x, y in zip(table[a]["rounds"], table[b]["rounds"], strict=False)
                if y[key] > 0
            ]
            return statistics.median(xs) if xs else None

        def paired_excess(a: str, b: str, floor: str, key: str) -> Optional[float]:
            """Median over rounds of (a - floor) / (b - floor): the project's own work per call.

            The picows echo is the transport, loop, future and driver alone; what the
            gateway spends above it in the same round is the work of the runtime itself,
            the part a compiled build can change.
            """
            if a not in table or b not in table or floor not in table:
                return None
            xs = []
            for x, y, z in zip(table[a]["rounds"], table[b]["rounds"], table[floor]["rounds"], strict=False):
                if y[key] - z[key] > 0:
                    xs.append((x[key] - z[key]) / (y[key] - z[key]))
            return statistics.median(xs) if xs else None

        out["cpu_above_picows_echo_pure_vs_compiled"] = paired_excess(
            "pure Python", "compiled", "picows echo", "cpu_us_per_call"
        )
        out["throughput_ratio_compiled_vs_pure"] = paired("compiled", "pure Python", "calls_per_s")
        out["cpu_per_call_ratio_pure_vs_compiled"] = paired("pure Python", "compiled", "cpu_us_per_call")
        out["cpu_per_call_compiled_vs_websockets_echo"] = paired(
            "compiled", "websockets echo", "cpu_us_per_call"
        )
        out["cpu_per_call_compiled_vs_picows_echo"] = paired("compiled", "picows echo", "cpu_us_per_call")
        cpu = "cpu_us_per_call"
        out["cpu_per_call_compiled_vs_picows_stream_echo"] = paired("compiled", STREAM_ECHO, cpu)
        out["cpu_per_call_stream_echo_vs_picows_echo"] = paired(STREAM_ECHO, "picows echo", cpu)
        # Before (the gateway on uvloop's stream) in the same rounds: against both echoes,
        # and the gateway on aiofastnet against it.
        out["cpu_per_call_stream_gateway_vs_picows_stream_echo"] = paired(STREAM_GATEWAY, STREAM_ECHO, cpu)
        out["cpu_per_call_stream_gateway_vs_picows_echo"] = paired(STREAM_GATEWAY, "picows echo", cpu)
        out["cpu_per_call_compiled_vs_stream_gateway"] = paired("compiled", STREAM_GATEWAY, cpu)
        out["cpu_per_call_freeze_vs_compiled"] = paired(
            "compiled + gc.freeze()", "compiled", "cpu_us_per_call"
        )
        for mode, m in table.items():
            log(f"  {count} devices, {mode}: {_summary(m)}")
        log(
            "  ratios (CPU/call, paired rounds): pure/compiled "
            + ", ".join(
                f"{k}={out[k]:.2f}"
                for k in (
                    "cpu_per_call_ratio_pure_vs_compiled",
                    "cpu_above_picows_echo_pure_vs_compiled",
                    "cpu_per_call_compiled_vs_websockets_echo",
                    "cpu_per_call_compiled_vs_picows_echo",
                    "cpu_per_call_compiled_vs_picows_stream_echo",
                    "cpu_per_call_stream_echo_vs_picows_echo",
                    "cpu_per_call_stream_gateway_vs_picows_stream_echo",
                    "cpu_per_call_stream_gateway_vs_picows_echo",
                    "cpu_per_call_compiled_vs_stream_gateway",
                    "cpu_per_call_freeze_vs_compiled",
                )
                if out.get(k) is not None
            )
        )
    finally:
        for e in emus.values():
            e.stop()
        for w in procs.values():
            w.stop()
    return out


def run_workers(count: int, workers: int, duration: float, rounds: int, log: Log) -> dict[str, Any]:
    """SO_REUSEPORT: ``workers`` gateway processes on one port vs 1, devices spread by the kernel.

    Each worker process drives calls to the devices it owns (``benchmarks.gw_multi``);
    the figure is the total calls/s of all workers, measured in alternating rounds.
    """
    from benchmarks import gw_multi

    return gw_multi.compare(count, workers, duration, rounds, log)


#: Above this many devices only the compiled gateway and the picows echo run (memory).
LARGE = 5000


def run(counts: list[int], rounds: int, duration: float, log: Log, workers: int = 2) -> dict[str, Any]:
    from benchmarks import bindings as bnd
    from benchmarks import gw_decode, gw_frame

    soft, hard = raise_nofile_limit()
    pydir = bnd.build(log)
    results = []
    for n in counts:
        modes = ALL if n <= LARGE else ("compiled", "picows echo")
        results.append(run_count(n, rounds, duration, log, str(pydir) if pydir else None, modes=modes))
    decode = gw_decode.measure()
    frame = gw_frame.measure()
    log(
        "  per-call code in process (gw_frame): "
        + ", ".join(f"{k} {v:,.0f} ns" for k, v in frame["ns_per_call"].items())
        + f", pure/compiled {frame['pure_vs_compiled']:.2f}x; whole call (CallSite.call): "
        + ", ".join(f"{k} {v:,.0f} ns" for k, v in frame["call_ns_per_call"].items())
        + f", pure/compiled {frame['call_pure_vs_compiled']:.2f}x"
    )
    log(
        "  reply decode vs orjson.loads: "
        + ", ".join(
            f"{label} {name} {v['x_orjson']:.2f}x"
            for label in ("result", "error")
            for name, v in decode[label].items()
            if name != "orjson.loads"
        )
    )
    multi: Optional[dict[str, Any]] = None
    if workers > 1 and counts and rounds >= 3:  # not in --quick runs
        try:
            multi = run_workers(
                max(counts[0], min(1000, max(counts))), workers, duration, max(3, rounds // 2), log
            )
        except Exception as exc:  # noqa: BLE001 - reported in the section
            multi = {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "decode": decode,
        "frame": frame,
        "workers": multi,
        "counts": counts,
        "rounds": rounds,
        "round_seconds": duration,
        "nofile_limit": [soft, hard],
        "tool": "`DeskLamp(device).light.set_rgb(b=0, g=128, r=255)` of the generated bindings"
        if pydir
        else "`device.call('self.light.set_rgb', {...})` (schema-validated)",
        "results": results,
    }
