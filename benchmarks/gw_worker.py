"""The gateway under test (a separate process per runtime build).

``python -m benchmarks.gw_worker`` starts ``runtime.Gateway`` on 127.0.0.1 (an ephemeral
port) and takes JSON-line commands on stdin, answering one JSON line each on stdout:

* ``{"cmd": "await", "n": N, "timeout": s}``: wait until N devices are ready; reports
  the process RSS (after a GC) and the setup time.
* ``{"cmd": "bench", "duration": s, "per_device": k}``: every ready device runs
  ``tools/call`` round trips back to back (one in flight per device) until the duration
  ends or it made ``k`` calls; reports calls, seconds, and latency percentiles. The call
  is ``DeskLamp(device).light.set_rgb(...)`` of the generated bindings when
  ``--bindings DIR`` names their build, else ``device.call`` (schema-validated).
  With ``"freeze": true`` the round runs after ``gc.freeze()`` (undone after it).
* ``{"cmd": "quit"}``.

Run it with ``MCPGEN_PURE_PYTHON=1`` to get the pure-Python runtime.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Optional

from benchmarks.procutil import raise_nofile_limit, rss_bytes

TOOL = "self.light.set_rgb"
ARGS = {"r": 255, "g": 128, "b": 0}


def _percentile(sorted_xs: list[int], q: float) -> float:
    if not sorted_xs:
        return 0.0
    k = min(len(sorted_xs) - 1, max(0, round(q * (len(sorted_xs) - 1))))
    return float(sorted_xs[k])


async def commands() -> AsyncIterator[dict[str, Any]]:
    """The driver's commands: one JSON object per stdin line until EOF (other lines skipped)."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        try:
            cmd = json.loads(line)
        except ValueError:
            continue
        if isinstance(cmd, dict):
            yield cmd


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


Caller = Callable[[], Awaitable[Any]]


def make_caller(dev: Any, bindings: Any) -> Caller:
    if bindings is not None:
        lamp = bindings.DeskLamp(dev, policy="strict")
        set_rgb = lamp.light.set_rgb
        return lambda: set_rgb(b=ARGS["b"], g=ARGS["g"], r=ARGS["r"])  # type: ignore[no-any-return]
    call = dev.call
    return lambda: call(TOOL, ARGS)  # type: ignore[no-any-return]


async def bench(
    gw: Any, duration: float, per_device: int, bindings: Any, freeze: bool = False
) -> dict[str, Any]:
    devices = [d for d in gw.connected.values() if not d.closed]
    callers = [make_caller(d, bindings) for d in devices]
    return await drive(callers, duration, per_device, freeze)


async def drive(
    callers: list[Caller], duration: float, per_device: int, freeze: bool = False
) -> dict[str, Any]:
    """Runs every caller back to back until ``duration`` ends; CPU and latency figures."""
    lat: list[int] = []
    errors = 0
    stop_at = time.perf_counter() + duration
    clock = time.perf_counter_ns

    async def worker(call: Caller) -> None:
        nonlocal errors
        for _ in range(per_device):
            if time.perf_counter() >= stop_at:
                return
            t0 = clock()
            try:
                await call()
            except Exception:  # noqa: BLE001 - counted
                errors += 1
                continue
            lat.append(clock() - t0)

    gc.collect()
    froze = freeze and gc.get_freeze_count() == 0  # the gateway may have frozen already (many devices)
    if froze:
        gc.freeze()  # setup's objects (sessions, tools, validators) leave the GC's scans
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in callers))
    elapsed = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    if froze:
        gc.unfreeze()
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    lat.sort()
    return {
        "devices": len(callers),
        "calls": len(lat),
        "errors": errors,
        "seconds": elapsed,
        "calls_per_s": len(lat) / elapsed if elapsed > 0 else 0.0,
        "p50_us": _percentile(lat, 0.50) / 1000,
        "p99_us": _percentile(lat, 0.99) / 1000,
        "max_us": (lat[-1] / 1000) if lat else 0.0,
        "cpu_seconds": cpu,
        "cpu_share": cpu / elapsed if elapsed > 0 else 0.0,  # 1.0 = one core busy all the time
        "cpu_us_per_call": cpu / len(lat) * 1e6 if lat else 0.0,
    }


async def main_async(bindings_dir: Optional[str], socket_transport: str = "aiofastnet") -> int:
    from mcpgen import runtime
    from mcpgen.runtime import Gateway

    bindings = None
    if bindings_dir:
        import importlib

        sys.path.insert(0, bindings_dir)
        bindings = importlib.import_module("desk_lamp_tools")

    loop = asyncio.get_running_loop()
    gw = Gateway(
        "127.0.0.1",
        0,
        policy="off",
        call_timeout=30.0,
        hello_timeout=60.0,
        max_frame=1 << 20,
        socket_transport=socket_transport,
    )
    await gw.start()
    gc.collect()
    _emit(
        {
            "port": gw.port,
            "compiled": bool(runtime.COMPILED),
            "rss": rss_bytes(),
            "nofile": list(raise_nofile_limit()),
            "bindings": None if bindings is None else {"compiled": bool(bindings.COMPILED)},
            "loop": type(loop).__module__,
            "socket_transport": socket_transport,
        }
    )
    try:
        async for cmd in commands():
            op = cmd.get("cmd")
            try:
                if op == "quit":
                    break
                if op == "await":
                    n = int(cmd["n"])
                    t0 = time.perf_counter()
                    deadline = t0 + float(cmd.get("timeout", 60))
                    while sum(1 for d in gw.connected.values() if not d.closed) < n:
                        if time.perf_counter() > deadline:
                            raise TimeoutError(f"only {len(gw.connected)} of {n} devices ready")
                        await asyncio.sleep(0.02)
                    gc.collect()
                    _emit(
                        {"ready": len(gw.connected), "rss": rss_bytes(), "seconds": time.perf_counter() - t0}
                    )
                elif op == "bench":
                    _emit(
                        await bench(
                            gw,
                            float(cmd.get("duration", 1.0)),
                            int(cmd.get("per_device", 1 << 30)),
                            bindings,
                            bool(cmd.get("freeze")),
                        )
                    )
                else:
                    _emit({"error": f"unknown command {op!r}"})
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                _emit({"error": repr(exc)})
    finally:
        await gw.close()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="gateway process of the gateway benchmark")
    ap.add_argument("--bindings", default=None, help="directory holding the built desk_lamp_tools package")
    ap.add_argument("--asyncio", action="store_true", help="plain asyncio loop instead of uvloop")
    ap.add_argument(
        "--socket-transport",
        choices=("aiofastnet", "loop"),
        default="aiofastnet",
        help="the gateway's socket transport (Gateway(socket_transport=...); default here aiofastnet, "
        "the echo's; 'loop': the event loop's own, Gateway's default)",
    )
    args = ap.parse_args(argv)
    raise_nofile_limit()
    from mcpgen.runtime.core.loop import run

    return run(main_async(args.bindings, args.socket_transport), use_uvloop=not args.asyncio)


if __name__ == "__main__":
    sys.exit(main())
