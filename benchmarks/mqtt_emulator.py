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

Why the MQTT is written by hand here (benchmark code, not the product): the emulator must
cost far less CPU per answered call than the system under test, or it, not the worker, sets
the pace of the benchmark. One aiomqtt/paho client per device answered about 7,000 calls/s
on one core (paho's Python framing, a task and callbacks per message), so the worker got
few replies per read and paid its fixed per-read costs for few calls (docs/mqtt.md,
"Figures"). Each device is now one asyncio Protocol on one TCP_NODELAY connection speaking
the small MQTT 5 subset a device needs: CONNECT (with the will), CONNACK, SUBSCRIBE/SUBACK,
PUBLISH QoS 0 and 1 both ways (PUBACK), PINGREQ. PUBLISH packets are framed by the
project's compiled :mod:`mcpgen.runtime.links.mqtt.mqttwire`; every request that arrived in one read is
answered with one write.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
import threading
from typing import Optional, cast

import orjson

from benchmarks.procutil import raise_nofile_limit
from mcpgen.codegen.resources import example_spec
from mcpgen.mqtt_topics import DEFAULT_PREFIX, DOWN, OFFLINE, ONLINE, STATE, UP, device_topic
from mcpgen.runtime.links.mqtt.mqttwire import decode_publish, packet_end, publish_packet
from tests.support.device_replies import Model, _reply_json

MAX_DEVICES = 2000
CONNECT_CONCURRENCY = 32
CONNECT_TIMEOUT = 30.0
KEEPALIVE = 60  # seconds, sent in CONNECT; a PINGREQ goes out every KEEPALIVE / 2
RECONNECT_DELAY = 0.5


class Stats:
    def __init__(self) -> None:
        self.connected = 0
        self.failed = 0
        self.calls = 0
        self.reconnects = 0


# --- the few MQTT 5 packets a device sends besides PUBLISH QoS 0 (hand-encoded) ---------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 127, n >> 7
        out.append(b | (128 if n else 0))
        if not n:
            return bytes(out)


def _utf8(s: str) -> bytes:
    b = s.encode()
    return len(b).to_bytes(2, "big") + b


def _packet(first: int, body: bytes) -> bytes:
    return bytes([first]) + _varint(len(body)) + body


def connect_packet(client_id: str, will_topic: str, will_payload: bytes) -> bytes:
    """CONNECT, MQTT 5, clean start, will QoS 1 retained, no properties."""
    flags = 0x02 | 0x04 | (1 << 3) | 0x20  # clean start, will flag, will QoS 1, will retain
    body = (
        _utf8("MQTT") + bytes([5, flags]) + KEEPALIVE.to_bytes(2, "big") + b"\x00"
        + _utf8(client_id) + b"\x00" + _utf8(will_topic)
        + len(will_payload).to_bytes(2, "big") + will_payload
    )  # fmt: skip
    return _packet(0x10, body)


def subscribe_packet(pid: int, topic: str, qos: int) -> bytes:
    return _packet(0x82, pid.to_bytes(2, "big") + b"\x00" + _utf8(topic) + bytes([qos]))


def publish_qos1(pid: int, topic: str, payload: bytes, retain: bool = False, props: bytes = b"\x00") -> bytes:
    return _packet(0x32 | int(retain), _utf8(topic) + pid.to_bytes(2, "big") + props + payload)


def correlation_props(corr: bytes) -> bytes:
    """The property block of a reply: its Correlation Data only."""
    body = b"\x09" + len(corr).to_bytes(2, "big") + corr
    return _varint(len(body)) + body


PINGREQ = b"\xc0\x00"
DISCONNECT = b"\xe0\x00"


Qos1Publish = tuple[int, bytes, Optional[str], bytes]


def _decode_publish_qos1(buf: bytes, start: int, end: int) -> Optional[Qos1Publish]:
    """(packet id, payload, response topic, correlation data) of a QoS 1 PUBLISH (rare here:
    a worker configured with ``qos=1``); None when malformed."""
    i = start + 1
    while buf[i] & 128:
        i += 1
    i += 1
    tlen = int.from_bytes(buf[i : i + 2], "big")
    i += 2 + tlen
    pid = int.from_bytes(buf[i : i + 2], "big")
    i += 2
    plen = shift = 0
    while True:
        b = buf[i]
        i += 1
        plen |= (b & 127) << shift
        shift += 7
        if not b & 128:
            break
    pend = i + plen
    rtopic: Optional[str] = None
    corr = b""
    while i < pend:
        prop = buf[i]
        i += 1
        if prop in (0x08, 0x09, 0x03):
            n = int.from_bytes(buf[i : i + 2], "big")
            val = buf[i + 2 : i + 2 + n]
            i += 2 + n
            if prop == 0x08:
                rtopic = val.decode()
            elif prop == 0x09:
                corr = val
        elif prop == 0x01:
            i += 1
        elif prop == 0x02:
            i += 4
        elif prop == 0x26:
            for _ in range(2):
                i += 2 + int.from_bytes(buf[i : i + 2], "big")
        elif prop == 0x0B:
            while buf[i] & 128:
                i += 1
            i += 1
        else:
            return None
    if pend > end:
        return None
    return pid, buf[pend:end], rtopic, corr


class Device(asyncio.Protocol):
    """One emulated device's broker connection (one per connect attempt)."""

    def __init__(self, dev: DeviceInfo, model: Model, stats: Stats, counters: dict[str, int]) -> None:
        self.dev = dev
        self.model = model
        self.stats = stats
        self.counters = counters
        self.transport: Optional[asyncio.Transport] = None
        self.buf = b""
        self.pid = 10
        loop = asyncio.get_running_loop()
        self.up: asyncio.Future[bool] = loop.create_future()  # hello acknowledged, or failed
        self.lost: asyncio.Future[None] = loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        d = self.dev
        transport.write(connect_packet(f"emu-{d.device_id}", d.state, OFFLINE))

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if not self.up.done():
            self.up.set_result(False)
        if not self.lost.done():
            self.lost.set_result(None)

    def _next_pid(self) -> int:
        self.pid = self.pid + 1 if self.pid < 65535 else 10
        return self.pid

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        pos, n = 0, len(buf)
        out: list[bytes] = []
        while pos < n:
            end = packet_end(buf, pos)
            if end <= 0:
                if end < 0:
                    assert self.transport is not None
                    self.transport.close()
                    return
                break
            kind = buf[pos] & 0xF0
            if kind == 0x30:
                self._on_publish(buf, pos, end, out)
            elif kind == 0x40:  # PUBACK
                if buf[pos + 2] == 0 and buf[pos + 3] == 3 and not self.up.done():  # the hello's
                    self.up.set_result(True)
            elif kind == 0x20:  # CONNACK: flags, reason code
                if end - pos < 4 or buf[pos + 3] != 0:
                    print(f"device {self.dev.device_id}: CONNACK reason {buf[pos + 3]}", file=sys.stderr)
                    assert self.transport is not None
                    self.transport.close()
                    return
                d = self.dev
                out.append(subscribe_packet(1, d.down, 1))
                out.append(publish_qos1(2, d.state, ONLINE, retain=True))
                out.append(publish_qos1(3, d.up, d.hello))
            # SUBACK, PINGRESP and anything else: nothing to do.
            pos = end
        self.buf = buf[pos:] if pos < n else b""
        if out:
            assert self.transport is not None
            self.transport.write(b"".join(out))

    def _on_publish(self, buf: bytes, start: int, end: int, out: list[bytes]) -> None:
        qos = (buf[start] >> 1) & 3
        if qos == 0:
            msg = decode_publish(buf, start, end)
            if msg is None:
                return
            payload, rtopic, corr = msg.payload, msg.ResponseTopic, msg.CorrelationData
            pid = 0
        else:
            got = _decode_publish_qos1(buf, start, end)
            if got is None:
                return
            pid, payload, rtopic, corr = got
            out.append(b"\x40\x02" + pid.to_bytes(2, "big"))  # PUBACK
        try:
            msg_json = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return
        if not isinstance(msg_json, dict):
            return
        envelope = msg_json.get("type") == "mcp"
        req = msg_json.get("payload") if envelope else msg_json
        if not isinstance(req, dict):
            return
        reply = _reply_json(self.model, self.counters, self.dev.device_id, req)
        if reply is None:
            return
        if req.get("method") == "tools/call":
            self.stats.calls += 1
        if rtopic:
            props = correlation_props(bytes(corr or b""))
            if qos == 0:
                out.append(publish_packet(rtopic, reply, props))
            else:
                out.append(publish_qos1(self._next_pid(), rtopic, reply, props=props))
        else:
            if envelope:
                sid = orjson.dumps(msg_json.get("session_id"))
                reply = b'{"session_id":' + sid + b',"type":"mcp","payload":' + reply + b"}"
            out.append(publish_qos1(self._next_pid(), self.dev.up, reply))


class DeviceInfo:
    """One device's fixed identity: id, topics and hello."""

    def __init__(self, prefix: str, device_id: str) -> None:
        self.device_id = device_id
        self.up, self.down, self.state = (device_topic(prefix, device_id, leaf) for leaf in (UP, DOWN, STATE))
        self.hello = orjson.dumps(
            {
                "type": "hello",
                "version": 3,
                "features": {"mcp": True},
                "transport": "mqtt",
                "client_id": device_id,
            }
        )


async def run_device(
    port: int,
    dev: DeviceInfo,
    model: Model,
    stats: Stats,
    counters: dict[str, int],
    gate: asyncio.Semaphore,
    ready: asyncio.Event,
    target: int,
    stop: asyncio.Event,
    live: set[Device],
) -> None:
    loop = asyncio.get_running_loop()
    first = True
    while not stop.is_set():
        proto: Optional[Device] = None
        try:
            async with gate:
                _, proto = await asyncio.wait_for(
                    loop.create_connection(lambda: Device(dev, model, stats, counters), "127.0.0.1", port),
                    CONNECT_TIMEOUT,
                )
                ok = await asyncio.wait_for(proto.up, CONNECT_TIMEOUT)
            if not ok:
                raise ConnectionError("connection closed before the hello was acknowledged")
            live.add(proto)
            if first:
                first = False
                stats.connected += 1
                if stats.connected + stats.failed >= target:
                    ready.set()
            await proto.lost
        except (TimeoutError, OSError) as exc:
            if proto is not None and proto.transport is not None:
                proto.transport.abort()
            if first:
                first = False
                stats.failed += 1
                print(f"device {dev.device_id}: {exc!r}", file=sys.stderr)
                if stats.connected + stats.failed >= target:
                    ready.set()
        finally:
            if proto is not None:
                live.discard(proto)
        if stop.is_set():
            return
        stats.reconnects += 1
        await asyncio.sleep(RECONNECT_DELAY)


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    for line in sys.stdin:
        if "quit" in line:
            break
    loop.call_soon_threadsafe(stop.set)


async def _keepalive(live: set[Device], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), KEEPALIVE / 2)
        except TimeoutError:
            for d in list(live):
                if d.transport is not None and not d.transport.is_closing():
                    d.transport.write(PINGREQ)


async def main_async(args: argparse.Namespace) -> int:
    count = min(args.count, MAX_DEVICES)
    model = Model(args.spec)
    stats = Stats()
    counters: dict[str, int] = {}
    live: set[Device] = set()
    ready, stop = asyncio.Event(), asyncio.Event()
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    loop = asyncio.get_running_loop()
    threading.Thread(target=_watch_stdin, args=(loop, stop), daemon=True).start()
    loop.call_later(args.max_seconds, stop.set)
    tasks = [
        loop.create_task(
            run_device(
                args.port,
                DeviceInfo(args.prefix, f"{args.id_prefix}-{i}"),
                model,
                stats,
                counters,
                gate,
                ready,
                count,
                stop,
                live,
            )
        )
        for i in range(count)
    ]
    pinger = loop.create_task(_keepalive(live, stop))
    waiter = loop.create_task(stop.wait())
    await asyncio.wait([loop.create_task(ready.wait()), waiter], return_when=asyncio.FIRST_COMPLETED)
    print(orjson.dumps({"connected": stats.connected, "failed": stats.failed}).decode(), flush=True)
    await stop.wait()
    for d in list(live):  # a clean DISCONNECT: the broker drops the will
        if d.transport is not None and not d.transport.is_closing():
            d.transport.write(DISCONNECT)
            d.transport.close()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, pinger, return_exceptions=True)
    print(orjson.dumps({"calls": stats.calls, "reconnects": stats.reconnects}).decode(), flush=True)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True, help="broker port on 127.0.0.1")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--prefix", default=DEFAULT_PREFIX, help="topic prefix")
    ap.add_argument("--id-prefix", default="emu", help="device ids are ID-PREFIX-<index>")
    ap.add_argument("--spec", default=str(example_spec("default_device")))
    ap.add_argument("--max-seconds", type=float, default=600.0)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    logging.basicConfig(level=logging.WARNING)
    try:
        import uvloop
    except ImportError:  # the default loop works, only slower
        return asyncio.run(main_async(args))
    return uvloop.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
