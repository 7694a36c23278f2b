"""Light MQTT 5 device emulators (a separate process) for the fleet tests and benchmark.

``python -m benchmarks.mqtt_emulator --port P --count N`` connects N devices to the broker
on 127.0.0.1:P, each speaking the topics of docs/mqtt.md exactly as the host simulator's
``--mqtt`` mode does: Last Will ``offline`` (retained) on ``<prefix>/<id>/state``, a
retained ``online``, the device hello on ``<prefix>/<id>/up``, requests on
``<prefix>/<id>/down`` answered on the request's Response Topic with its Correlation Data
(or on ``up`` without them). It answers ``initialize``, ``tools/list`` (the spec's tools),
``ping`` and ``tools/call``: ``self.counter.add`` keeps a real counter per device (so a
request executed twice shows as a repeated value), other tools the fixed replies of the
gateway benchmark's emulator (benchmarks/gw_emulator.py).

Device ids are ``<id-prefix>-<index>``. Bounded: at most ``MAX_DEVICES`` devices, only
loopback, exits after ``--max-seconds`` or when stdin closes or says ``quit``. Prints
``{"connected": n, "failed": m}`` once every device is up, and on exit
``{"calls": c, "reconnects": r}`` (broker connections lost by any device).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
import threading
from typing import Any, Optional

import aiomqtt
import orjson
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from benchmarks.gw_emulator import Replies
from benchmarks.procutil import raise_nofile_limit
from mcpgen.codegen.resources import example_spec
from mcpgen.codegen.spec import mcp_json
from mcpgen.codegen.spec.loader import load_spec

MAX_DEVICES = 2000
CONNECT_CONCURRENCY = 32
NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


class Model:
    """What every emulated device answers, from one spec."""

    def __init__(self, spec_path: str) -> None:
        spec = load_spec(spec_path)
        self.tools = {"tools": mcp_json.tools_list(spec)}
        self.init = {
            "protocolVersion": spec.device.protocol_version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": spec.device.name, "version": spec.device.version},
            "_meta": {"mcpgen/fingerprint": spec.fingerprint},
        }
        # Other tools get the gateway benchmark emulator's replies (the same bytes).
        self.results = Replies(spec_path).results
        self.fixed = {"content": [], "isError": False}


class Stats:
    def __init__(self) -> None:
        self.connected = 0
        self.failed = 0
        self.calls = 0
        self.reconnects = 0


def _reply(model: Model, counters: dict[str, int], device_id: str, req: dict) -> Optional[dict]:
    rid = req.get("id")
    method = req.get("method")
    if rid is None or not isinstance(method, str):
        return None  # notifications and stray replies
    if method == "initialize":
        result: Any = model.init
    elif method == "tools/list":
        result = model.tools
    elif method == "ping":
        result = {}
    elif method == "tools/call":
        params = req.get("params") or {}
        if params.get("name") == "self.counter.add":
            amount = (params.get("arguments") or {}).get("amount", 1)
            counters[device_id] = counters.get(device_id, 0) + int(amount)
            result = {"content": [{"type": "text", "text": str(counters[device_id])}], "isError": False}
        else:
            result = model.results.get(str(params.get("name")), model.fixed)
    else:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32601, "message": f"Method not found: {method}"},
        }
    return {"jsonrpc": "2.0", "id": rid, "result": result}


async def run_device(
    port: int,
    prefix: str,
    device_id: str,
    model: Model,
    stats: Stats,
    counters: dict[str, int],
    gate: asyncio.Semaphore,
    ready: asyncio.Event,
    target: int,
    stop: asyncio.Event,
) -> None:
    up, down, state = f"{prefix}/{device_id}/up", f"{prefix}/{device_id}/down", f"{prefix}/{device_id}/state"
    hello = orjson.dumps(
        {
            "type": "hello",
            "version": 3,
            "features": {"mcp": True},
            "transport": "mqtt",
            "client_id": device_id,
        }
    )
    first = True
    while not stop.is_set():
        try:
            async with gate:
                client = aiomqtt.Client(
                    "127.0.0.1",
                    port,
                    identifier=f"emu-{device_id}",
                    protocol=aiomqtt.ProtocolVersion.V5,
                    clean_start=True,
                    keepalive=60,
                    will=aiomqtt.Will(state, b"offline", qos=1, retain=True),
                    socket_options=NODELAY,
                    timeout=30,
                )
                await client.__aenter__()
            try:
                paho = client._client  # aiomqtt's paho client: requests are answered in its callback
                replies = _ReplyProperties()
                paho.message_callback_add(
                    down,
                    lambda _c, _u, m, p=paho, r=replies: _on_down(
                        p, m, model, counters, device_id, up, stats, r
                    ),
                )
                await client.subscribe(down, qos=1)
                await client.publish(state, b"online", qos=1, retain=True)
                await client.publish(up, hello, qos=1)
                if first:
                    first = False
                    stats.connected += 1
                    if stats.connected + stats.failed >= target:
                        ready.set()
                async for _message in client.messages:  # ends when the link drops
                    pass
            finally:
                try:
                    await client.__aexit__(None, None, None)
                except Exception:  # noqa: BLE001 - already gone
                    pass
        except aiomqtt.MqttError as exc:
            if first:
                first = False
                stats.failed += 1
                print(f"device {device_id}: {exc}", file=sys.stderr)
                if stats.connected + stats.failed >= target:
                    ready.set()
        if stop.is_set():
            return
        stats.reconnects += 1
        await asyncio.sleep(0.5)


class _ReplyProperties:
    """Correlation Data for a reply, packed by hand.

    paho serialises PUBLISH properties by walking all of its ~40 property names for
    every message, which made this emulator (not the backend under test) the
    bottleneck; the one property a reply carries is a fixed 0x09 tag, a 2-byte length
    and the bytes, after the properties' variable-length size.
    """

    def __init__(self) -> None:
        self.props = Properties(PacketTypes.PUBLISH)
        self._packed = b"\x00"
        object.__setattr__(self.props, "pack", lambda: self._packed)

    def set(self, corr: bytes) -> Properties:
        body = b"\x09" + len(corr).to_bytes(2, "big") + corr
        n, size = len(body), bytearray()
        while True:
            byte, n = n % 128, n // 128
            size.append(byte | (0x80 if n else 0))
            if not n:
                break
        self._packed = bytes(size) + body
        return self.props


def _on_down(
    paho: Any,
    message: Any,
    model: Model,
    counters: dict[str, int],
    device_id: str,
    up: str,
    stats: Stats,
    reply_props: _ReplyProperties,
) -> None:
    """Answers one request, in paho's callback (no queue, no task per message)."""
    try:
        msg = orjson.loads(message.payload)
    except orjson.JSONDecodeError:
        return
    if not isinstance(msg, dict):
        return
    envelope = msg.get("type") == "mcp"
    req = msg.get("payload") if envelope else msg
    if not isinstance(req, dict):
        return
    reply = _reply(model, counters, device_id, req)
    if reply is None:
        return
    if req.get("method") == "tools/call":
        stats.calls += 1
    props_in = getattr(message, "properties", None)
    topic = getattr(props_in, "ResponseTopic", None) if props_in is not None else None
    if topic:
        corr = getattr(props_in, "CorrelationData", None) or b""
        paho.publish(topic, orjson.dumps(reply), min(message.qos, 1), False, reply_props.set(bytes(corr)))
    else:
        if envelope:
            reply = {"session_id": msg.get("session_id"), "type": "mcp", "payload": reply}
        paho.publish(up, orjson.dumps(reply), 1, False, None)


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    for line in sys.stdin:
        if "quit" in line:
            break
    loop.call_soon_threadsafe(stop.set)


async def main_async(args: argparse.Namespace) -> int:
    count = min(args.count, MAX_DEVICES)
    model = Model(args.spec)
    stats = Stats()
    counters: dict[str, int] = {}
    ready, stop = asyncio.Event(), asyncio.Event()
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    loop = asyncio.get_running_loop()
    threading.Thread(target=_watch_stdin, args=(loop, stop), daemon=True).start()
    loop.call_later(args.max_seconds, stop.set)
    tasks = [
        loop.create_task(
            run_device(
                args.port,
                args.prefix,
                f"{args.id_prefix}-{i}",
                model,
                stats,
                counters,
                gate,
                ready,
                count,
                stop,
            )
        )
        for i in range(count)
    ]
    waiter = loop.create_task(stop.wait())
    await asyncio.wait([loop.create_task(ready.wait()), waiter], return_when=asyncio.FIRST_COMPLETED)
    print(orjson.dumps({"connected": stats.connected, "failed": stats.failed}).decode(), flush=True)
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(orjson.dumps({"calls": stats.calls, "reconnects": stats.reconnects}).decode(), flush=True)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True, help="broker port on 127.0.0.1")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--prefix", default="mcpgen", help="topic prefix")
    ap.add_argument("--id-prefix", default="emu", help="device ids are ID-PREFIX-<index>")
    ap.add_argument("--spec", default=str(example_spec("default_device")))
    ap.add_argument("--max-seconds", type=float, default=600.0)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    logging.basicConfig(level=logging.WARNING)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
