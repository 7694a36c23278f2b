"""Gateway memory after its devices leave (issue 18 item 6): figures, not a test.

    python -m benchmarks.gw_memory [--devices 1000] [--cycles 2] [--calls-seconds 5]

Three processes: this driver, the gateway (``--worker``: ``runtime.Gateway`` on uvloop,
JSON-line commands on stdin) and the devices (``benchmarks.gw_emulator``, picows
clients). Each cycle N devices connect, every device makes calls for a few seconds,
then all leave; the gateway's memory is read (``tests/support/memstats.py``: RSS, glibc heap,
CPython arenas) when empty before any device, at the peak, and 3 s after the last device
left (its own trim has run by then), and again after a test-side ``gc.collect`` +
``malloc_trim`` (the floor), with the object types whose count grew. ``--trace`` adds a
``tracemalloc`` diff (where the blocks that stayed were allocated; slow), ``--arenas`` what
keeps each sparse CPython arena, empty and at the end (``benchmarks.arena_map``).
``PYTHONMALLOC=malloc`` in the environment puts every object in glibc's heap (what the
trim can return); ``MCPGEN_MALLOC_TRIM=0`` switches the gateway's trim off.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

from benchmarks.procutil import REPO, Proc, child_env, raise_nofile_limit
from tests.support import memstats

MiB = memstats.MiB
SECRET = "fault-injection-secret"
FAULTS = REPO / "tests" / "faults"


async def _worker(faults: bool) -> int:
    from benchmarks.gw_worker import bench, commands
    from mcpgen.runtime import Gateway

    if faults:  # as tests/faults/test_faults.py at soak scale (scripts/soak.sh)
        import logging

        logging.disable(logging.CRITICAL)  # thousands of expected warnings (refused peers)
        from mcpgen.runtime import HmacAuth

        gw = Gateway(
            "127.0.0.1", 0, auth=HmacAuth(SECRET), call_timeout=5.0, hello_timeout=2.0, max_frame=64 * 1024
        )
    else:
        gw = Gateway("127.0.0.1", 0, policy="off", call_timeout=30.0, hello_timeout=60.0, max_frame=1 << 20)
    callers: set[asyncio.Task[None]] = set()
    made = [0]
    consumer: Optional[asyncio.Future[None]] = None
    await gw.start()
    gc.collect()
    probe = memstats.Probe()
    print(json.dumps({"port": gw.port}), flush=True)
    try:
        async for cmd in commands():
            op = cmd.get("cmd")
            if op == "quit":
                break
            if op == "mem":
                if cmd.get("trim"):
                    gw._trimmer.trim()
                out: dict[str, Any] = memstats.snapshot()
                out["connected"] = len(gw.connected)
                out["links"] = len(gw._links)
                out["trims"] = gw._trimmer.trims
            elif op == "await":
                deadline = time.monotonic() + float(cmd.get("timeout", 120))
                while len(gw.connected) != int(cmd["n"]) or (int(cmd["n"]) == 0 and gw._links):
                    if time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.05)
                out = {"connected": len(gw.connected), "links": len(gw._links)}
            elif op == "callers":  # --faults: a caller per device that arrives, until the stop
                stop_at = time.monotonic() + float(cmd["seconds"])
                consumer = asyncio.ensure_future(_consume(gw, stop_at, callers, made))
                out = {}
            elif op == "callers_wait":
                if consumer is not None:
                    consumer.cancel()
                if callers:
                    await asyncio.wait(set(callers), timeout=30)
                out = {"calls": made[0], "waiting": sum(1 for t in callers if not t.done())}
                made[0] = 0
            elif op == "bench":
                out = await bench(gw, float(cmd["duration"]), 1 << 30, None)
            else:
                common = await probe.handle(op, cmd)
                out = common if common is not None else {"error": f"unknown command {op!r}"}
            print(json.dumps(out), flush=True)
    finally:
        await gw.close()
    return 0


async def _consume(gw: Any, stop_at: float, callers: set[asyncio.Task[None]], made: list[int]) -> None:
    import random

    from mcpgen.runtime import McpDeviceError

    async def caller(device: Any) -> None:
        rng = random.Random(device.session_id)
        while not device.closed and time.monotonic() < stop_at:
            try:
                await device.call("fault.echo", {"tag": "t"})
            except McpDeviceError:
                pass
            made[0] += 1
            await asyncio.sleep(2.0 * rng.uniform(0.5, 1.5))

    async for device in gw.devices():
        task = asyncio.ensure_future(caller(device))
        callers.add(task)
        task.add_done_callback(callers.discard)


def _swarms(port: int, devices: int, cycle: int, duration: float, tmp: str, n: int = 2) -> list[Any]:
    """The fault suite's device swarms (tests/faults/device_swarm.py), ``n`` processes."""
    import random

    sys.path.insert(0, str(FAULTS))
    from faults_lib import plan_peers

    peers = plan_peers(devices, cycle)
    random.Random(cycle).shuffle(peers)
    procs = []
    for i in range(n):
        plan = {
            "url": f"ws://127.0.0.1:{port}/xiaozhi/v1/", "secret": SECRET, "duration": duration,
            "hello_timeout": 2.0, "seed": cycle * 100 + i, "peers": peers[i::n],
        }  # fmt: skip
        path = os.path.join(tmp, f"plan-{cycle}-{i}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(plan, f)
        procs.append(subprocess.Popen(
            [sys.executable, str(FAULTS / "device_swarm.py"), path], cwd=str(FAULTS),
            stdout=subprocess.DEVNULL, env=child_env(),
        ))  # fmt: skip
    return procs


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--cycles", type=int, default=2)
    ap.add_argument("--calls-seconds", type=float, default=5.0)
    ap.add_argument(
        "--faults",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the fault suite's misbehaving devices (tests/faults) for SECONDS per cycle",
    )
    ap.add_argument("--asyncio", action="store_true", help="plain asyncio loop instead of uvloop")
    ap.add_argument("--trace", action="store_true", help="tracemalloc diff of the first and last cycle")
    ap.add_argument("--arenas", action="store_true", help="what keeps the sparse CPython arenas")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    if args.worker:
        from mcpgen.runtime.core.loop import run

        return run(_worker(args.faults > 0), use_uvloop=not args.asyncio)

    gw = Proc(
        ["-m", "benchmarks.gw_memory", "--worker"]
        + (["--asyncio"] if args.asyncio else [])
        + (["--faults", str(args.faults)] if args.faults else [])
    )
    tmp = tempfile.mkdtemp(prefix="gw-memory-")
    port = gw.ask()["port"]
    if args.trace:
        gw.ask({"cmd": "tm_start"})
    empty = gw.ask({"cmd": "mem"})
    gw.ask({"cmd": "types"})
    if args.trace:
        gw.ask({"cmd": "tm_snap"})
    print(f"empty:      {memstats.summary(empty)}", flush=True)
    if args.arenas:
        memstats.print_arenas("empty", gw.ask({"cmd": "arenas"}))
    for cycle in range(args.cycles):
        if args.faults:
            gw.ask({"cmd": "callers", "seconds": args.faults - 1.0})
            swarms = _swarms(port, args.devices, cycle, args.faults, tmp)
            time.sleep(args.faults * 0.7)
            peak = gw.ask({"cmd": "mem"})
            for proc in swarms:
                proc.wait(args.faults + 120)
            calls = gw.ask({"cmd": "callers_wait"})
            left = gw.ask({"cmd": "await", "n": 0})
            gw.ask({"cmd": "sleep", "seconds": 3.0})
            after = gw.ask({"cmd": "mem"})
            print(f"cycle {cycle}: {args.devices} fault devices, {calls}, left {left}", flush=True)
            print(f"  peak:     {memstats.summary(peak)}", flush=True)
            print(f"  after:    {memstats.summary(after)} (trims {after['trims']})", flush=True)
            gw.ask({"cmd": "sleep", "seconds": 5.0})  # past the 5 s call timeout
            after = gw.ask({"cmd": "mem"})
            print(f"  8 s later: {memstats.summary(after)} (trims {after['trims']})", flush=True)
            continue
        emu = Proc(
            [
                "-m",
                "benchmarks.gw_emulator",
                "--url",
                f"ws://127.0.0.1:{port}/",
                "--count",
                str(args.devices),
                "--prefix",
                f"c{cycle}",
                "--max-seconds",
                "300",
            ]
        )
        up = emu.ask()
        gw.ask({"cmd": "await", "n": up["connected"]})
        calls = gw.ask({"cmd": "bench", "duration": args.calls_seconds})
        peak = gw.ask({"cmd": "mem"})
        assert emu.p.stdin is not None
        emu.p.stdin.write("quit\n")
        emu.p.stdin.close()
        emu.p.wait(60)
        left = gw.ask({"cmd": "await", "n": 0})
        gw.ask({"cmd": "sleep", "seconds": 3.0})
        after = gw.ask({"cmd": "mem"})
        print("  grown object types:", gw.ask({"cmd": "types"}), flush=True)
        if args.trace:
            gw.ask({"cmd": "tm_snap"})
        print(
            f"cycle {cycle}: {up['connected']} devices, {calls['calls']} calls "
            f"({calls['cpu_us_per_call']:.0f} us gateway CPU per call), left {left}",
            flush=True,
        )
        print(f"  peak:     {memstats.summary(peak)}", flush=True)
        print(f"  after:    {memstats.summary(after)} (trims {after['trims']})", flush=True)
    if args.trace:
        for line in gw.ask({"cmd": "tm_diff"})["top"]:
            print(line)
    if args.arenas:
        memstats.print_arenas("after the last cycle", gw.ask({"cmd": "arenas"}))
    floor = gw.ask({"cmd": "mem", "trim": True})
    print(f"  trimmed:  {memstats.summary(floor)}", flush=True)
    print(
        f"RSS over empty after the last cycle: +{(after['rss'] - empty['rss']) / MiB:.1f} MiB "
        f"(peak +{(peak['rss'] - empty['rss']) / MiB:.1f}; after a test-side trim "
        f"+{(floor['rss'] - empty['rss']) / MiB:.1f})"
    )
    assert gw.p.stdin is not None
    gw.p.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
    gw.p.stdin.close()
    gw.p.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
