"""Scale: N simulated devices on one machine, gateway workers sharing one port.

``python -m benchmarks.scale --devices 100000`` starts the gateway as ``--workers``
processes on one port (:class:`mcpgen.runtime.links.workers.Workers`, ``SO_REUSEPORT``) and
``--emulators`` emulator processes (``benchmarks.gw_emulator``), each connecting from its
own loopback source address (127.0.0.x: every source address has its own ~28,000
ephemeral ports towards the gateway's one port). It reports:

* the time from start until every device's MCP session is ready (``initialize``,
  ``tools/list``), and the gateway's RSS growth per device;
* one call to every device at once (``tools/call`` of desk-lamp's ``self.light.set_rgb``,
  the generated bindings' call path without their argument check): errors, p50/p99;
* the gateway's CPU per idle device per minute with keepalives on (the default
  ``ping_interval`` of 20 s, the sweep every 0.1 s), over ``--idle-seconds``;
* with ``--echo`` (at most one process's worth of devices): fan-out calls
  (:mod:`mcpgen.runtime.session.fanout`) and single calls, interleaved in rounds with the bare
  picows+uvloop echo server of the gateway benchmark (``benchmarks.gw_echo``) driving the
  same number of devices, and with that server's bare broadcast (the same frame to every
  device in one pass, replies counted unread: the floor a fan-out cannot undercut): CPU
  per device-call, its user/system split and the ratios, from the same run;
  ``--baseline-fanout FANOUT_PY`` adds another revision's ``Fanout`` as one more row.

How many workers: each connection holds one file descriptor in a gateway worker (and one
in an emulator), so a process serves at most its descriptor limit (``ulimit -Hn``) minus
a reserve; the kernel's ``SO_REUSEPORT`` spread is random, so workers are sized to fill
:data:`FILL` of that. ``--quick`` is the smoke mode (a few seconds; no figure is
meaningful). The workers take commands through files in a temporary directory (polled
every :data:`POLL` s, a cost included in the idle figure).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from benchmarks import procutil
from benchmarks.gw_echo import cpu_split, with_split
from benchmarks.procutil import Child, raise_nofile_limit, rss_bytes

TOOL = "self.light.set_rgb"
ARGS = {"r": 255, "g": 128, "b": 0}
#: Descriptors a process keeps for itself (listening socket, pipes, files, epoll).
RESERVE_FDS = 256
#: Share of a process's descriptors the devices are planned to use (the SO_REUSEPORT
#: spread over workers is random: the busiest worker gets a few per cent over the mean).
FILL = 0.85
#: Ephemeral ports towards one destination from one source address (ip_local_port_range).
PORTS_PER_SOURCE = 28000
POLL = 0.25
#: The run stops when the number of ready sessions has not grown for this long.
STALL_SECONDS = 60.0
Log = Callable[[str], None]


def plan(devices: int, nofile_hard: int, cores: int) -> dict[str, Any]:
    """Worker and emulator counts for ``devices`` under a descriptor limit of ``nofile_hard``."""
    per_process = max(1, int((nofile_hard - RESERVE_FDS) * FILL))
    workers = max(1, math.ceil(devices / per_process))
    per_emulator = min(per_process, PORTS_PER_SOURCE)
    emulators = max(workers, math.ceil(devices / per_emulator))
    return {
        "devices": devices,
        "nofile_hard": nofile_hard,
        "devices_per_process": per_process,
        "workers": workers,
        "emulators": emulators,
        # Without the descriptor limit the workers would follow the cores (one event loop each).
        "workers_unlimited": max(1, cores),
    }


# -- the gateway workers' side ---------------------------------------------------------------


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


async def serve(gw: Any) -> None:
    """The workers' backend code: answers the parent's command files until stopped."""
    ctl = Path(os.environ["MCPGEN_SCALE_DIR"])
    index = int(getattr(gw, "worker_index", 0))
    base_rss = rss_bytes()
    seq = 0
    while True:
        f = ctl / f"cmd-{seq}.json"
        if not f.exists():
            await asyncio.sleep(POLL)
            continue
        cmd = json.loads(f.read_text())
        try:
            res = await _command(gw, cmd, base_rss)
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            res = {"error": f"{type(exc).__name__}: {exc}"}
        res["worker"] = index
        tmp = ctl / f".res-{seq}-{index}.json"
        tmp.write_text(json.dumps(res))
        tmp.rename(ctl / f"res-{seq}-{index}.json")
        seq += 1


def _ready(gw: Any) -> list[Any]:
    return [d for d in gw.connected.values() if not d.closed]


async def _command(gw: Any, cmd: dict[str, Any], base_rss: int) -> dict[str, Any]:
    from mcpgen.runtime.core import codec
    from mcpgen.runtime.session.fanout import Fanout

    op = cmd["cmd"]
    if op == "status":
        return {"ready": len(_ready(gw)), "rss": rss_bytes(), "base_rss": base_rss}
    if op == "memory":
        gc.collect()
        return {"ready": len(_ready(gw)), "rss": rss_bytes(), "base_rss": base_rss, "cpu": _cpu()}
    if op == "call_all":  # one call to every device at once
        devices = _ready(gw)
        lat: list[float] = []
        errors = 0
        clock = time.perf_counter

        async def one(dev: Any, t0: float) -> None:
            nonlocal errors
            try:
                await dev.invoke(TOOL, ARGS, codec.KIND_BOOLEAN)
            except Exception:  # noqa: BLE001 - counted
                errors += 1
                return
            lat.append(clock() - t0)

        t0 = clock()
        await asyncio.gather(*(one(d, t0) for d in devices))
        return {"devices": len(devices), "errors": errors, "seconds": clock() - t0, "lat": lat}
    if op == "idle":
        c0, t0 = _cpu(), time.perf_counter()
        await asyncio.sleep(float(cmd["seconds"]))
        return {"devices": len(_ready(gw)), "cpu": _cpu() - c0, "seconds": time.perf_counter() - t0}
    if op == "fanout":
        devices = _ready(gw)
        fan = (Fanout if not cmd.get("module") else _fanout_class(cmd["module"]))(devices)
        errors = 0
        walls = []
        gc.collect()
        before = cpu_split()
        for _ in range(int(cmd["rounds"])):
            t0 = time.perf_counter()
            res = await fan.invoke(TOOL, dict(ARGS), codec.KIND_BOOLEAN)
            walls.append(time.perf_counter() - t0)
            errors += len(res.errors)
        user, system = cpu_split()
        calls = len(devices) * int(cmd["rounds"])
        return {
            "devices": len(devices),
            "device_calls": calls,
            "errors": errors,
            "walls": walls,
            "cpu": user - before[0] + system - before[1],
            "user": user - before[0],
            "system": system - before[1],
        }
    if op == "calls":  # single calls back to back, one in flight per device (the gateway benchmark's)
        from benchmarks.gw_worker import drive

        callers = [_caller(d, codec.KIND_BOOLEAN) for d in _ready(gw)]
        before = cpu_split()
        return with_split(await drive(callers, float(cmd["seconds"]), 1 << 30), before)
    raise ValueError(f"unknown command {op!r}")


def _fanout_class(path: str) -> Any:
    """``Fanout`` of the fanout.py at ``path`` (another revision's, for a before/after row)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mcpgen_scale_baseline_fanout", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: not a Python file")
    mod = sys.modules.get(spec.name)
    if mod is None:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[spec.name] = mod
    return mod.Fanout


def _caller(dev: Any, kind: int) -> Callable[[], Any]:
    invoke = dev.invoker
    return lambda: invoke(TOOL, ARGS, kind)


# -- the parent --------------------------------------------------------------------------------


class Control:
    """Command files for the workers, and their answers."""

    def __init__(self, directory: Path, workers: int) -> None:
        self.dir = directory
        self.workers = workers
        self.seq = 0

    def ask(self, cmd: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
        seq = self.seq
        self.seq += 1
        tmp = self.dir / f".cmd-{seq}.json"
        tmp.write_text(json.dumps(cmd))
        tmp.rename(self.dir / f"cmd-{seq}.json")
        deadline = time.monotonic() + timeout
        while True:
            files = sorted(self.dir.glob(f"res-{seq}-*.json"))
            if len(files) == self.workers:
                out = [json.loads(f.read_text()) for f in files]
                bad = [r["error"] for r in out if "error" in r]
                if bad:
                    raise RuntimeError(f"worker: {bad[0]}")
                return out
            if time.monotonic() > deadline:
                raise TimeoutError(f"{cmd['cmd']}: {len(files)} of {self.workers} workers answered")
            time.sleep(0.05)


def _sources(n: int, first: int) -> list[str]:
    return [f"127.0.0.{first + i}" for i in range(n)]


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def _emulator(url: str, count: int, prefix: str, source: str, max_seconds: float) -> Child:
    return procutil.emulator(url, count, max_seconds, prefix=prefix, source=source)


def run(
    devices: int,
    log: Log,
    *,
    workers: Optional[int] = None,
    emulators: Optional[int] = None,
    idle_seconds: float = 60.0,
    echo: bool = False,
    rounds: int = 3,
    fanout_rounds: int = 5,
    call_seconds: float = 3.0,
    ready_timeout: float = 600.0,
    baseline_fanout: Optional[str] = None,
) -> dict[str, Any]:
    from mcpgen.runtime.links.workers import Workers

    soft, hard = raise_nofile_limit()
    p = plan(devices, hard, os.cpu_count() or 1)
    if workers:
        p["workers"] = workers
    if emulators:
        p["emulators"] = emulators
    log(
        f"  scale: {devices:,} devices, {p['workers']} gateway workers, {p['emulators']} emulators "
        f"(descriptor limit {hard:,}: {p['devices_per_process']:,} devices per process)"
    )
    tmp = Path(tempfile.mkdtemp(prefix="mcpgen-scale-"))
    os.environ["MCPGEN_SCALE_DIR"] = str(tmp)
    opts = {
        "policy": "off",
        "call_timeout": 60.0,
        "hello_timeout": 120.0,
        "handshake_timeout": 60.0,
        "max_frame": 1 << 20,
    }
    out: dict[str, Any] = {"plan": p, "nofile": [soft, hard], "tool": TOOL}
    emus: list[Child] = []
    echo_procs: list[Child] = []
    t_start = time.monotonic()
    w = Workers(serve, workers=p["workers"], gateway_options=opts)
    try:
        if not w.wait_listening(60):
            raise RuntimeError("the gateway workers did not start")
        ctl = Control(tmp, p["workers"])
        url = f"ws://127.0.0.1:{w.port}/"
        max_s = ready_timeout + idle_seconds + 600
        for i, (count, src) in enumerate(
            zip(_split(devices, p["emulators"]), _sources(p["emulators"], 10), strict=True)
        ):
            emus.append(_emulator(url, count, f"s{i:x}", src, max_s))
        # Until every session is ready (or no progress for STALL_SECONDS).
        ready, best, best_at = 0, 0, time.monotonic()
        while ready < devices:
            time.sleep(1.0)
            ready = sum(r["ready"] for r in ctl.ask({"cmd": "status"}, 60))
            now = time.monotonic()
            if ready > best:
                best, best_at = ready, now
            if now - best_at > STALL_SECONDS or now - t_start > ready_timeout:
                out["stalled"] = {"ready": ready, "seconds": round(now - t_start, 1)}
                log(f"  stopped: {ready:,} of {devices:,} sessions ready after {now - t_start:.0f} s")
                return out
        out["ready_seconds"] = round(time.monotonic() - t_start, 2)
        conn = [e.read(60) for e in emus]
        out["emulator_failed"] = sum(c.get("failed", 0) for c in conn)
        mem = ctl.ask({"cmd": "memory"}, 120)
        # CPU spent so far (connecting, session setup): the gateway workers' vs the emulators'.
        out["setup_cpu_seconds"] = {
            "gateway": round(sum(r["cpu"] for r in mem), 1),
            "emulators": round(sum(e.request({"cmd": "cpu"}, 60)["cpu_seconds"] for e in emus), 1),
        }
        out["devices_per_worker"] = [r["ready"] for r in sorted(mem, key=lambda r: r["worker"])]
        grown = sum(r["rss"] - r["base_rss"] for r in mem)
        out["rss_total_mib"] = round(sum(r["rss"] for r in mem) / 2**20, 1)
        out["rss_kib_per_device"] = round(grown / devices / 1024, 2)
        log(
            f"  ready: {devices:,} sessions in {out['ready_seconds']:.1f} s; gateway RSS "
            f"{out['rss_kib_per_device']:.2f} KiB per device (workers hold {out['devices_per_worker']})"
        )
        res = ctl.ask({"cmd": "call_all"}, 300)
        lat = sorted(x for r in res for x in r["lat"])
        out["call_all"] = {
            "calls": len(lat),
            "errors": sum(r["errors"] for r in res),
            "seconds": round(max(r["seconds"] for r in res), 3),
            "p50_ms": round(_pct(lat, 0.5) * 1e3, 1),
            "p99_ms": round(_pct(lat, 0.99) * 1e3, 1),
        }
        log(
            f"  one call to every device: {len(lat):,} answered, {out['call_all']['errors']} errors, "
            f"p50 {out['call_all']['p50_ms']} ms, p99 {out['call_all']['p99_ms']} ms, "
            f"all in {out['call_all']['seconds']} s"
        )
        idle = ctl.ask({"cmd": "idle", "seconds": idle_seconds}, idle_seconds + 120)
        cpu = sum(r["cpu"] for r in idle)
        secs = statistics.mean(r["seconds"] for r in idle)
        out["idle"] = {
            "seconds": round(secs, 1),
            "cpu_seconds": round(cpu, 3),
            "cpu_share": round(cpu / secs, 4),
            "cpu_us_per_device_minute": round(cpu / devices / (secs / 60) * 1e6, 2),
            "ping_interval": 20.0,
        }
        log(
            f"  idle with keepalives: {out['idle']['cpu_us_per_device_minute']} us CPU per device per "
            f"minute ({out['idle']['cpu_share'] * 100:.1f} % of a core for all, over {secs:.0f} s)"
        )
        if echo:
            out["fanout"] = _fanout_vs_echo(
                ctl, devices, rounds, fanout_rounds, call_seconds, log, echo_procs, baseline_fanout
            )
        return out
    finally:
        for e in emus + echo_procs:
            e.stop()
        w.stop()


def _fanout_vs_echo(
    ctl: Control,
    devices: int,
    rounds: int,
    fanout_rounds: int,
    call_seconds: float,
    log: Log,
    procs: list[Child],
    baseline_fanout: Optional[str] = None,
) -> dict[str, Any]:
    """Fan-out and single calls in the gateway vs the bare picows echo and broadcast,
    interleaved; with ``baseline_fanout`` (a fanout.py) also that one's fan-out as a row."""
    echo = Child(["-m", "benchmarks.gw_echo", "--transport", "picows"], name="picows echo")
    procs.append(echo)
    port = echo.read(60)["port"]
    procs.append(_emulator(f"ws://127.0.0.1:{port}/", devices, "ec", "127.0.0.9", 3600))
    ready = echo.request({"cmd": "await", "n": devices, "timeout": 600}, 660)
    if ready["ready"] < devices:
        raise RuntimeError(f"echo: only {ready['ready']} of {devices} devices")
    names: tuple[str, ...] = ("fanout", "broadcast", "single", "echo")
    if baseline_fanout:
        names = ("baseline_fanout", *names)
    rows: dict[str, list[float]] = {k: [] for k in names}
    split: dict[str, list[list[float]]] = {k: [] for k in names}  # [user, system] µs per round
    errors = 0
    for _ in range(rounds):
        for row, module in (("baseline_fanout", baseline_fanout), ("fanout", None)):
            if row not in rows:
                continue
            fo = ctl.ask({"cmd": "fanout", "rounds": fanout_rounds, "module": module}, 600)
            calls = sum(r["device_calls"] for r in fo)
            rows[row].append(sum(r["cpu"] for r in fo) / calls * 1e6)
            split[row].append([sum(r[k] for r in fo) / calls * 1e6 for k in ("user", "system")])
            errors += sum(r["errors"] for r in fo)
        b = echo.request({"cmd": "broadcast", "rounds": fanout_rounds, "timeout": 120}, 600)
        if "error" in b:
            raise RuntimeError(f"picows echo: {b['error']}")
        rows["broadcast"].append(b["cpu_us_per_call"])
        split["broadcast"].append([b["user_us_per_call"], b["system_us_per_call"]])
        single = ctl.ask({"cmd": "calls", "seconds": call_seconds}, call_seconds + 300)
        n = sum(r["calls"] for r in single)
        rows["single"].append(sum(r["cpu_seconds"] for r in single) / n * 1e6 if n else 0.0)
        split["single"].append(
            [
                sum(r["user_us_per_call"] * r["calls"] for r in single) / n if n else 0.0,
                sum(r["system_us_per_call"] * r["calls"] for r in single) / n if n else 0.0,
            ]
        )
        errors += sum(r["errors"] for r in single)
        e = echo.request({"cmd": "bench", "duration": call_seconds}, call_seconds + 300)
        rows["echo"].append(e["cpu_us_per_call"])
        split["echo"].append([e["user_us_per_call"], e["system_us_per_call"]])
    med = {k: statistics.median(v) for k, v in rows.items()}
    med_split = {
        k: [statistics.median(u for u, _ in v), statistics.median(s for _, s in v)] for k, v in split.items()
    }

    def paired(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(rows[a], rows[b], strict=True))

    ratios = {
        "fanout_vs_echo": paired("fanout", "echo"),
        "broadcast_vs_echo": paired("broadcast", "echo"),
        "fanout_vs_broadcast": paired("fanout", "broadcast"),
        "single_vs_echo": paired("single", "echo"),
    }
    if baseline_fanout:
        ratios["fanout_vs_baseline_fanout"] = paired("fanout", "baseline_fanout")
    for i in range(rounds):
        if baseline_fanout:
            log(f"  round {i + 1}: baseline fan-out ({baseline_fanout}) {rows['baseline_fanout'][i]:.2f} us")
        log(
            f"  round {i + 1}: fan-out {rows['fanout'][i]:.2f} us, "
            f"bare broadcast {rows['broadcast'][i]:.2f} us, "
            f"single calls {rows['single'][i]:.2f} us, bare echo {rows['echo'][i]:.2f} us per device-call"
        )
    log(
        f"  CPU per device-call at {devices:,} (median, user + system): "
        + ", ".join(f"{k} {med[k]:.2f} us ({med_split[k][0]:.2f} + {med_split[k][1]:.2f})" for k in names)
    )
    log(
        f"  fan-out/echo {ratios['fanout_vs_echo']:.2f}x, broadcast/echo {ratios['broadcast_vs_echo']:.2f}x, "
        f"fan-out/broadcast {ratios['fanout_vs_broadcast']:.2f}x, "
        f"single/echo {ratios['single_vs_echo']:.2f}x"
        + (f", fan-out/baseline {ratios['fanout_vs_baseline_fanout']:.2f}x" if baseline_fanout else "")
        + f" ({rounds} interleaved rounds, medians of paired rounds, {errors} errors)"
    )
    return {
        "us_per_device_call": rows,
        "user_system_us": split,
        "median": med,
        "median_user_system": med_split,
        "ratios": ratios,
        "errors": errors,
        "fanout_rounds": fanout_rounds,
        "call_seconds": call_seconds,
    }


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=None, help="default: from the descriptor limit")
    ap.add_argument("--emulators", type=int, default=None, help="default: from the descriptor limit")
    ap.add_argument("--idle-seconds", type=float, default=60.0)
    ap.add_argument("--echo", action="store_true", help="fan-out and single calls vs the bare picows echo")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--baseline-fanout",
        default=None,
        metavar="FANOUT_PY",
        help="with --echo: also run the Fanout of this fanout.py (e.g. another revision's, from "
        "`git show REV:runtime/session/fanout.py`) as an interleaved row, for before/after figures",
    )
    ap.add_argument("--quick", action="store_true", help="smoke mode: small and short, figures meaningless")
    ap.add_argument("--json", default=None, help="also write the result to this file")
    args = ap.parse_args(argv)
    if args.baseline_fanout is not None:  # checked before any process starts
        if not args.echo:
            ap.error("--baseline-fanout is a row of the --echo comparison: add --echo")
        if not Path(args.baseline_fanout).is_file():
            ap.error(
                f"--baseline-fanout: {args.baseline_fanout} is not a file (make one with "
                "`git show REV:runtime/session/fanout.py > old_fanout.py`)"
            )
    baseline = None if args.baseline_fanout is None else str(Path(args.baseline_fanout).resolve())
    kw: dict[str, Any] = {
        "idle_seconds": args.idle_seconds,
        "echo": args.echo,
        "rounds": args.rounds,
        "baseline_fanout": baseline,
    }
    if args.quick:
        kw.update(idle_seconds=1.0, rounds=1, fanout_rounds=2, call_seconds=0.5, ready_timeout=120.0)
    res = run(
        args.devices,
        lambda s: print(s, file=sys.stderr, flush=True),
        workers=args.workers,
        emulators=args.emulators,
        **kw,
    )
    text = json.dumps(res, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(json.dumps({k: v for k, v in res.items()}, indent=1))
    return 0 if "stalled" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
