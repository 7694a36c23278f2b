"""A gateway that keeps calling its devices, for a profiler to attach to.

``python -m benchmarks.scale_probe --devices 10000 --mode fanout --seconds 14`` starts
``runtime.Gateway`` in this process and one emulator process (``benchmarks.gw_emulator``),
waits for every session, warms up, prints ``READY <pid>`` (attach then, e.g.
``perf record -F 1999 -g -p <pid> -- sleep 8``), then for ``--seconds`` makes fan-out calls
to all devices (``--mode fanout``) or single calls, one in flight per device (``--mode
single``), and prints the user and system CPU per device-call (``getrusage``) and the
time the cyclic garbage collector took meanwhile (``gc.callbacks``), per device-call.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import sys
import time
from typing import Any, Optional

from benchmarks.procutil import Child, raise_nofile_limit

TOOL = "self.light.set_rgb"
ARGS = {"r": 255, "g": 128, "b": 0}


async def main_async(devices: int, mode: str, seconds: float) -> int:
    from benchmarks.gw_worker import drive
    from mcpgen.runtime import Gateway
    from mcpgen.runtime.core import codec
    from mcpgen.runtime.session.fanout import Fanout

    gw = Gateway("127.0.0.1", 0, policy="off", call_timeout=60.0, hello_timeout=120.0, max_frame=1 << 20)
    await gw.start()
    emu = Child(
        [
            "-m",
            "benchmarks.gw_emulator",
            "--url",
            f"ws://127.0.0.1:{gw.port}/",
            "--count",
            str(devices),
            "--source",
            "127.0.0.60",
        ],
        name="emulator",
    )
    try:
        while sum(1 for d in gw.connected.values() if not d.closed) < devices:
            await asyncio.sleep(0.2)
        devs = [d for d in gw.connected.values() if not d.closed]
        fan = Fanout(devs)
        kind = codec.KIND_BOOLEAN

        def single(dev: Any) -> Any:
            invoke = dev.invoker
            return lambda: invoke(TOOL, ARGS, kind)

        callers = [single(d) for d in devs]
        await drive(callers, 1.0, 1 << 30) if mode == "single" else await fan.invoke(TOOL, ARGS, kind)
        print(f"READY {os.getpid()}", flush=True)
        await asyncio.sleep(1.0)
        gc_time = [0.0, 0.0, 0]  # seconds in collections, when the running one started, collections

        def on_gc(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                gc_time[1] = time.perf_counter()
            else:
                gc_time[0] += time.perf_counter() - gc_time[1]
                gc_time[2] += 1

        gc.callbacks.append(on_gc)
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        if mode == "single":
            calls = (await drive(callers, seconds, 1 << 30))["calls"]
        else:
            calls = 0
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                await fan.invoke(TOOL, ARGS, kind)
                calls += len(devs)
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        gc.callbacks.remove(on_gc)
        user = (ru1.ru_utime - ru0.ru_utime) / calls * 1e6
        system = (ru1.ru_stime - ru0.ru_stime) / calls * 1e6
        print(
            f"{mode}: {calls:,} device-calls, {user:.2f} us user + {system:.2f} us system each; "
            f"{int(gc_time[2])} GC collections, {gc_time[0] / calls * 1e6:.2f} us each",
            flush=True,
        )
    finally:
        emu.stop()
        await gw.close()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=10000)
    ap.add_argument("--mode", choices=("fanout", "single"), default="fanout")
    ap.add_argument("--seconds", type=float, default=14.0)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    from mcpgen.runtime.core.loop import run

    return run(main_async(args.devices, args.mode, args.seconds))


if __name__ == "__main__":
    sys.exit(main())
