"""MQTT fleet worker memory after its devices leave (issue 18 item 6): figures, not a test.

    python -m benchmarks.mqtt_memory [--devices 1000] [--cycles 2] [--calls-seconds 5]
                                     [--allocators default,malloc] [--fresh-ids] [--trace]

Four processes: this driver, Mosquitto (as benchmarks/mqtt.py starts it), the fleet
worker (``--worker``: one :class:`mcpgen.runtime.MqttFleet` on the runtime's loop with
its callers inside it, JSON-line commands on stdin) and, per cycle, the devices
(``benchmarks.mqtt_emulator``, desk-lamp spec). Each cycle N devices connect, the worker
opens a handle on each and a caller per device calls ``self.light.set_rgb`` back to back;
after ``--calls-seconds`` the emulator is killed (SIGKILL: the broker publishes every
device's Last Will ``offline``, so the handles close with calls in flight, as when a
site loses power). The worker's memory is read (``tests/support/memstats.py``: RSS,
``smaps_rollup``, ``mallinfo2``, CPython arenas) when empty (connected to the broker, no
device yet), at the peak, 3 s after the last handle closed (its own trim has run), and at
the end after a driver-asked ``gc.collect`` + ``malloc_trim`` (the floor), with the object
types whose count grew and the worker's own tables. Each allocator of ``--allocators``
gets a fresh broker and worker: ``default`` (CPython's obmalloc for small objects) and
``malloc`` (``PYTHONMALLOC=malloc``: every object in glibc's heap, what a trim can return).

By default the same device ids come back each cycle (a fleet whose devices reconnect);
``--fresh-ids`` gives each cycle new ids (tables keyed by device id must not keep the
departed ones). ``--trace`` adds a ``tracemalloc`` diff between the empty worker and the
end of the last cycle (where the blocks that stayed were allocated; slow); ``--arenas``
what keeps each sparse CPython arena at the end (``benchmarks.arena_map``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from benchmarks.procutil import Proc, child_env, raise_nofile_limit
from tests.support import memstats

MiB = memstats.MiB


def _tables(fleet: Any) -> dict[str, int]:
    """Sizes of what the worker keys by device, session or topic (must not keep growing)."""
    broker = fleet._broker
    fast = broker._fast
    return {
        "handles": len(fleet._handles),
        "by_token": len(fleet._by_token),
        "opening": len(fleet._opening),
        "online_events": len(fleet._online),
        "presence": len(fleet._presence),
        "tasks": len(fleet._tasks),
        "paho_out_packets": len(broker.paho._out_packet) if broker.paho is not None else -1,
        "paho_in_messages": len(broker.paho._in_messages) if broker.paho is not None else -1,
        "fast_feed": len(fast._feed) if fast is not None else -1,
        "asyncio_tasks": len(asyncio.all_tasks()),
    }


async def _worker(port: int) -> int:
    from benchmarks.gw_worker import ARGS, TOOL, commands
    from mcpgen.runtime import McpDeviceError, MqttFleet

    fleet = MqttFleet("127.0.0.1", port, worker_id="memory", policy="off", call_timeout=10.0)
    await fleet.start()
    callers: set[asyncio.Task[None]] = set()
    counts = {"calls": 0, "errors": 0}

    async def caller(device: Any) -> None:
        # Back to back until the device leaves (its Last Will closes the handle).
        while not device.closed:
            try:
                await device.call(TOOL, ARGS)
                counts["calls"] += 1
            except McpDeviceError:
                counts["errors"] += 1

    async def open_all(ids: list[str], timeout: float) -> int:
        sem = asyncio.Semaphore(64)
        opened = 0

        async def one(d: str) -> None:
            nonlocal opened
            async with sem:
                try:
                    device = await fleet.device(d, timeout=timeout)
                except McpDeviceError:
                    return
            opened += 1
            task = asyncio.ensure_future(caller(device))
            callers.add(task)
            task.add_done_callback(callers.discard)

        await asyncio.gather(*(one(d) for d in ids))
        return opened

    gc.collect()
    probe = memstats.Probe()
    print(json.dumps({"ready": True}), flush=True)
    try:
        async for cmd in commands():
            op = cmd.get("cmd")
            if op == "quit":
                break
            if op == "mem":
                if cmd.get("trim"):
                    fleet._trimmer.trim()
                out: dict[str, Any] = memstats.snapshot()
                out["tables"] = _tables(fleet)
                out["trims"] = fleet._trimmer.trims
            elif op == "open":
                t0 = time.monotonic()
                out = {"opened": await open_all(list(cmd["devices"]), float(cmd.get("timeout", 120)))}
                out["seconds"] = round(time.monotonic() - t0, 2)
            elif op == "await_gone":  # every handle closed and every caller finished
                deadline = time.monotonic() + float(cmd.get("timeout", 120))
                while (fleet._by_token or callers) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                out = {"callers": len(callers), **counts, "tables": _tables(fleet)}
                counts.update(calls=0, errors=0)
            else:
                common = await probe.handle(op, cmd)
                out = common if common is not None else {"error": f"unknown command {op!r}"}
            print(json.dumps(out), flush=True)
    finally:
        for task in list(callers):
            task.cancel()
        await fleet.close()
    return 0


def _tables_line(t: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in t.items())


def run_one(args: argparse.Namespace, allocator: str) -> dict[str, Any]:
    from benchmarks.mqtt import _Broker
    from mcpgen.codegen.resources import example_spec

    env = child_env()
    env.pop("PYTHONMALLOC", None)
    if allocator == "malloc":
        env["PYTHONMALLOC"] = "malloc"
    workdir = Path(tempfile.mkdtemp(prefix="mqtt-memory-"))
    broker = _Broker(workdir)
    worker = Proc(["-m", "benchmarks.mqtt_memory", "--worker", "--port", str(broker.port)], env)
    emu: Optional[Proc] = None
    print(f"== allocator {allocator} ({args.devices} devices, {args.cycles} cycles)", flush=True)
    try:
        worker.ask()
        if args.trace:
            worker.ask({"cmd": "tm_start"})
        empty = worker.ask({"cmd": "mem"})
        worker.ask({"cmd": "types"})
        if args.trace:
            worker.ask({"cmd": "tm_snap"})
        print(f"empty:      {memstats.summary(empty)}", flush=True)
        peak = after = empty
        for cycle in range(args.cycles):
            prefix = f"mem{cycle}" if args.fresh_ids else "mem"
            emu = Proc(["-m", "benchmarks.mqtt_emulator", "--port", str(broker.port), "--count",
                        str(args.devices), "--id-prefix", prefix, "--spec", str(example_spec("desk_lamp")),
                        "--max-seconds", "600"])  # fmt: skip
            up = emu.ask()
            ids = [f"{prefix}-{i}" for i in range(args.devices)]
            opened = worker.ask({"cmd": "open", "devices": ids, "timeout": 60})
            worker.ask({"cmd": "sleep", "seconds": args.calls_seconds})
            peak = worker.ask({"cmd": "mem"})
            emu.p.send_signal(signal.SIGKILL)  # no clean DISCONNECT: the broker sends the wills
            emu.p.wait(30)
            emu = None
            gone = worker.ask({"cmd": "await_gone", "timeout": 120})
            worker.ask({"cmd": "sleep", "seconds": 3.0})
            after = worker.ask({"cmd": "mem"})
            print(f"cycle {cycle}: {up.get('connected')} devices up, {opened['opened']} opened in "
                  f"{opened['seconds']} s, {gone['calls']} calls, {gone['errors']} failed calls "
                  f"(the departure), callers left {gone['callers']}", flush=True)  # fmt: skip
            print(f"  peak:     {memstats.summary(peak)}", flush=True)
            print(f"  after:    {memstats.summary(after)} (trims {after['trims']})", flush=True)
            print(f"  tables:   {_tables_line(after['tables'])}", flush=True)
            print(f"  live:     {(memstats.live_bytes(after) - memstats.live_bytes(empty)) / MiB:+.2f} MiB "
                  "over empty (objects' bytes, both allocators)", flush=True)  # fmt: skip
            print("  grown object types:", worker.ask({"cmd": "types"}), flush=True)
        if args.trace:
            worker.ask({"cmd": "tm_snap"})
            for line in worker.ask({"cmd": "tm_diff"})["top"]:
                print(line)
        if getattr(args, "arenas", False):
            memstats.print_arenas("after the last cycle", worker.ask({"cmd": "arenas"}))
        floor = worker.ask({"cmd": "mem", "trim": True})
        print(f"  trimmed:  {memstats.summary(floor)}", flush=True)
        res = {
            "allocator": allocator,
            "rss_over_empty_mib": (after["rss"] - empty["rss"]) / MiB,
            "peak_over_empty_mib": (peak["rss"] - empty["rss"]) / MiB,
            "floor_over_empty_mib": (floor["rss"] - empty["rss"]) / MiB,
            "live_over_empty_mib": (memstats.live_bytes(after) - memstats.live_bytes(empty)) / MiB,
            "empty_mib": empty["rss"] / MiB,
        }
        print(
            f"RSS over empty after the last cycle ({allocator}): +{res['rss_over_empty_mib']:.1f} MiB "
            f"(empty {res['empty_mib']:.1f} MiB; peak +{res['peak_over_empty_mib']:.1f}; after a "
            f"driver-asked trim +{res['floor_over_empty_mib']:.1f}; live objects "
            f"{res['live_over_empty_mib']:+.2f})",
            flush=True,
        )
        assert worker.p.stdin is not None
        worker.p.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
        worker.p.stdin.close()
        worker.p.wait(30)
        return res
    finally:
        if emu is not None:
            emu.stop()
        worker.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--cycles", type=int, default=2)
    ap.add_argument("--calls-seconds", type=float, default=5.0)
    ap.add_argument("--allocators", default="default,malloc",
                    help="comma-separated: default (obmalloc), malloc (PYTHONMALLOC=malloc)")  # fmt: skip
    ap.add_argument("--fresh-ids", action="store_true", help="new device ids each cycle")
    ap.add_argument("--trace", action="store_true", help="tracemalloc diff of empty vs the end")
    ap.add_argument("--arenas", action="store_true", help="what keeps the sparse CPython arenas at the end")
    ap.add_argument("--json", action="store_true", help="end with the results as one JSON line")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    if args.worker:
        from mcpgen.runtime.core.loop import run

        return run(_worker(args.port))
    if shutil.which("mosquitto") is None and not os.path.exists("/usr/sbin/mosquitto"):
        print("mosquitto is not installed", file=sys.stderr)
        return 2
    results = [run_one(args, a.strip()) for a in args.allocators.split(",") if a.strip()]
    for r in results:
        print(
            f"summary {r['allocator']}: empty {r['empty_mib']:.1f} MiB, "
            f"peak +{r['peak_over_empty_mib']:.1f}, after +{r['rss_over_empty_mib']:.1f}, "
            f"floor +{r['floor_over_empty_mib']:.1f}, "
            f"live {r['live_over_empty_mib']:+.2f} MiB"
        )
    if args.json:
        print(json.dumps(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
