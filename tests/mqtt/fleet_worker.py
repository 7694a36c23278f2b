"""One fleet worker process for the fault tests: calls devices in a loop and logs each call.

``python fleet_worker.py --port P --worker-id W --devices a,b,c --out calls.jsonl``
opens an :class:`MqttFleet` handle on every device, prints ``ready``, then keeps
``--concurrency`` calls of ``self.counter.add(amount=1)`` in flight over the devices
(round robin) with the call deadline ``--deadline``. Every finished call is one JSON line
``{"d": device, "t0": start, "t1": end, "ok": value}`` or ``{..., "err": class name,
"typed": is an McpDeviceError}``, flushed at once (a killed worker loses nothing it
finished). Stops when stdin says ``quit`` or closes, or after ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time

import orjson

from mcpgen.runtime import HmacAuth, McpDeviceError, MqttFleet


async def main_async(args: argparse.Namespace) -> int:
    devices = args.devices.split(",")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def watch_stdin() -> None:
        for line in sys.stdin:
            if "quit" in line:
                break
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch_stdin, daemon=True).start()
    loop.call_later(args.max_seconds, stop.set)
    out = open(args.out, "ab", buffering=0)  # noqa: SIM115 - closed below
    async with MqttFleet(
        "127.0.0.1",
        args.port,
        worker_id=args.worker_id,
        call_timeout=args.deadline,
        username=args.username,
        password=args.password,
        auth=HmacAuth(args.secret) if args.secret else None,
    ) as fleet:
        handles = await asyncio.gather(*(fleet.device(d, timeout=30) for d in devices))
        print("ready", flush=True)
        turn = iter(range(10**9))

        async def caller() -> None:
            while not stop.is_set():
                i = next(turn)
                name = devices[i % len(devices)]
                device = handles[i % len(handles)]
                if device.closed:
                    try:
                        device = handles[i % len(handles)] = await fleet.device(name, timeout=args.deadline)
                    except Exception as exc:  # noqa: BLE001 - logged as a failed call
                        rec = {"d": name, "t0": time.time(), "t1": time.time(), "err": type(exc).__name__}
                        rec["typed"] = isinstance(exc, McpDeviceError)
                        out.write(orjson.dumps(rec) + b"\n")
                        await asyncio.sleep(0.1)
                        continue
                t0 = time.time()
                rec = {"d": name, "t0": t0}
                try:
                    rec["ok"] = await device.call("self.counter.add", {"amount": 1}, timeout=args.deadline)
                except Exception as exc:  # noqa: BLE001 - recorded, the test judges it
                    rec["err"] = type(exc).__name__
                    rec["typed"] = isinstance(exc, McpDeviceError)
                rec["t1"] = time.time()
                out.write(orjson.dumps(rec) + b"\n")

        await asyncio.gather(*(caller() for _ in range(args.concurrency)))
    out.close()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--worker-id", required=True)
    ap.add_argument("--devices", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=5.0)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--max-seconds", type=float, default=120.0)
    ap.add_argument("--username", default=None, help="broker login")
    ap.add_argument("--password", default=None)
    ap.add_argument("--secret", default=None, help="HmacAuth secret for device hellos")
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
