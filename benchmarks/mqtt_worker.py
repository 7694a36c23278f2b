"""One fleet worker under test (benchmarks/mqtt.py): an MqttFleet driven by JSON lines.

``python -m benchmarks.mqtt_worker --port P --worker-id W`` attaches an
:class:`mcpgen.runtime.MqttFleet` to the broker on 127.0.0.1:P and answers one JSON line
per command on stdin:

* ``{"cmd": "open", "devices": [...], "timeout": s}``: opens a handle on each device
  (presence, ``initialize``, ``tools/list``); reports the count and the time taken.
* ``{"cmd": "bench", "duration": s}``: the gateway benchmark's round
  (:func:`benchmarks.gw_worker.bench`: one ``tools/call`` in flight per opened device,
  latency percentiles, this process's CPU time per call).
* ``{"cmd": "serial", "duration": s}``: one call in flight in total, round robin over
  the opened devices: the unloaded round-trip latency (p50/p99).
* ``{"cmd": "quit"}``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from types import SimpleNamespace
from typing import Any, Optional

from benchmarks.gw_worker import ARGS, TOOL, _emit, _percentile, bench, commands
from benchmarks.procutil import raise_nofile_limit


async def _open_all(fleet: Any, handles: dict[str, Any], ids: list[str], timeout: float) -> None:
    sem = asyncio.Semaphore(64)

    async def open_one(d: str) -> None:
        async with sem:
            handles[d] = await fleet.device(d, timeout=timeout)

    await asyncio.gather(*(open_one(d) for d in ids))


async def _serial(devices: list[Any], duration: float) -> dict[str, Any]:
    lat: list[int] = []
    stop_at = time.perf_counter() + duration
    i = 0
    while time.perf_counter() < stop_at:
        t0 = time.perf_counter_ns()
        await devices[i % len(devices)].call(TOOL, ARGS)
        lat.append(time.perf_counter_ns() - t0)
        i += 1
    lat.sort()
    return {
        "calls": len(lat),
        "p50_us": _percentile(lat, 0.5) / 1000,
        "p99_us": _percentile(lat, 0.99) / 1000,
    }


def _io_counts(fleet: Any) -> dict[str, int]:
    """The broker link's fast-path counters (empty on the paho path): how many replies
    each socket read brought and how many requests each write carried."""
    fast = fleet._broker._fast
    if fast is None:
        return {}
    return {
        "reads": fast.reads,
        "messages_in": fast.messages_in,
        "writes": fast.batches_out,
        "messages_out": fast.messages_out,
    }


async def main_async(port: int, worker_id: str) -> int:
    from mcpgen import runtime
    from mcpgen.runtime import MqttFleet

    fleet = MqttFleet("127.0.0.1", port, worker_id=worker_id, policy="off", call_timeout=30.0)
    await fleet.start()
    handles: dict[str, Any] = {}
    _emit({"worker": worker_id, "compiled": bool(runtime.COMPILED)})
    try:
        async for cmd in commands():
            op = cmd.get("cmd")
            try:
                if op == "quit":
                    break
                if op == "open":
                    t0 = time.perf_counter()
                    ids = list(cmd["devices"])
                    await _open_all(fleet, handles, ids, float(cmd.get("timeout", 120)))
                    _emit({"opened": len(handles), "seconds": time.perf_counter() - t0})
                elif op == "bench":
                    before = _io_counts(fleet)
                    result = await bench(
                        SimpleNamespace(connected=handles), float(cmd.get("duration", 1.0)), 1 << 30, None
                    )
                    after = _io_counts(fleet)
                    result["io"] = {k: after[k] - before[k] for k in after}  # fast path only
                    _emit(result)
                elif op == "serial":
                    _emit(await _serial(list(handles.values()), float(cmd.get("duration", 1.0))))
                else:
                    _emit({"error": f"unknown command {op!r}"})
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                _emit({"error": repr(exc)})
    finally:
        await fleet.close()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="fleet worker process of the MQTT benchmark")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--worker-id", required=True)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    # The loop the gateway worker runs on too (uvloop where installed): same-run ratios
    # compare the transports, not two event loops.
    from mcpgen.runtime.core.loop import run

    return run(main_async(args.port, args.worker_id))


if __name__ == "__main__":
    sys.exit(main())
