"""A swarm of misbehaving MQTT devices and hostile MQTT peers (its own process).

    python mqtt_swarm.py PLAN.json

PLAN: {"port", "prefix", "secret", "duration", "seed", "call_timeout",
"peers": [{"id", "kind", "victim"}...]}. Every peer logs in to the broker as its own
user (user name = device id, password ``pw-<id>``; ``wrongpass`` peers use a wrong one),
runs for ``duration`` seconds, then leaves (half publish ``offline`` themselves, half
drop the socket so the broker publishes their Last Will). The process prints one JSON
report on stdout: counters of what the devices did and what each hostile peer received.

Devices answer as ``benchmarks/mqtt_emulator.py`` does (a real per-device counter behind
``self.counter.add``, so a request executed or answered twice shows as a repeated
total); each kind misbehaves in its own way (``KINDS`` in test_fleet_fault_mix.py).
It runs in its own process so the memory the test measures is the worker's alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any, Optional

import aiomqtt
import orjson
from device_replies import Model, _reply  # tests/support, on PYTHONPATH (test_fleet_fault_mix.py)
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from mcpgen.mqtt_topics import DOWN, OFFLINE, ONLINE, STATE, UP, device_topic
from mcpgen.runtime import HmacAuth

NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
BIG_REPLY = 256 * 1024  # above the worker's max_frame (64 KiB), below the broker's limit
GARBAGE_REPLIES = [
    b"not json at all",
    b"\x00\x01binary",
    b"[]",
    b'"a string"',
    b'{"jsonrpc":"2.0","id":[1],"result":{}}',
    b'{"jsonrpc":"2.0","id":{"a":1},"result":{}}',
    '{"jsonrpc":"2.0","id":"\u00b2","result":{}}'.encode(),
    b'{"jsonrpc":"2.0","id":1e400,"result":{}}',
    b'{"jsonrpc":"2.0","id":null,"result":{"content":[]}}',
    b'{"jsonrpc":"2.0","method":"notifications/message","params":7}',
]
GARBAGE_UP = [
    b"not json",
    b"\xff\xfe",
    b"[1,2]",
    b'{"type":"mcp"}',
    b'{"type":"mcp","payload":"a string"}',
    b'{"type":"hello"}',
    b'{"jsonrpc":"2.0","method":"notifications/message","params":7}',
]


class Report:
    def __init__(self) -> None:
        self.counters: dict[str, int] = {}
        self.hostile: list[dict[str, Any]] = []  # what each hostile peer received
        self.errors: list[str] = []

    def add(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n


def _props(kind: PacketTypes, **values: Any) -> Properties:
    p = Properties(kind)
    for name, value in values.items():
        setattr(p, name, value)
    return p


def _drop(paho: Any) -> None:
    """Ends the TCP connection with a reset and no DISCONNECT: to the broker the device
    vanished (it publishes the will, at once or after the will's delay)."""
    sock = paho.socket()
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class Device:
    """One device of a misbehaving kind; reconnects (0.3 s) until the swarm leaves."""

    def __init__(self, plan: dict, peer: dict, model: Model, counters: dict[str, int], rep: Report) -> None:
        self.id: str = peer["id"]
        self.kind: str = peer["kind"]
        self.prefix: str = plan["prefix"]
        self.port: int = plan["port"]
        self.stop_at = time.monotonic() + plan["duration"]
        self.away = plan["call_timeout"] + 1.0  # how long a "late" device stays away
        self.model, self.counters, self.rep = model, counters, rep
        self.rng = random.Random(self.id)
        self.calls = 0
        self.token = HmacAuth(plan["secret"]).token_for(self.id) if self.kind != "badtoken" else "forged"
        self.up, self.down, self.state = (
            device_topic(self.prefix, self.id, leaf) for leaf in (UP, DOWN, STATE)
        )
        self.paho: Any = None
        self.conns = 0
        self.stale: Optional[aiomqtt.Client] = None  # taken over by the next connection
        self.dropped: Optional[asyncio.Future[None]] = None

    def client(self) -> aiomqtt.Client:
        will_props = None
        connect_props = None
        if self.kind == "late":
            # The will waits 30 s (and the session outlives the connection for it): the
            # device vanishes and the workers learn nothing in time.
            will_props = _props(PacketTypes.WILLMESSAGE, WillDelayInterval=30)
            connect_props = _props(PacketTypes.CONNECT, SessionExpiryInterval=60)
        return aiomqtt.Client(
            "127.0.0.1",
            self.port,
            username=self.id,
            password=f"pw-{self.id}",
            identifier=f"dev-{self.id}",
            protocol=aiomqtt.ProtocolVersion.V5,
            clean_start=True,
            keepalive=60,
            will=aiomqtt.Will(self.state, OFFLINE, qos=1, retain=True, properties=will_props),
            properties=connect_props,
            socket_options=NODELAY,
            timeout=10,
        )

    async def run(self) -> None:
        if not await self.live():
            # Its time ran out between two connections (a storm, a vanished device): it
            # comes back once to leave, so every device of the swarm ends offline.
            client = self.client()
            try:
                async with client:
                    await client.publish(self.state, OFFLINE, qos=1, retain=True)
                    self.rep.add("left.after_return")
            except aiomqtt.MqttError as exc:
                self.rep.errors.append(f"{self.id} could not leave: {exc}")

    async def live(self) -> bool:
        """Runs until the swarm's time is up; True if it left while connected."""
        while time.monotonic() < self.stop_at:
            client = self.client()
            try:
                await client.__aenter__()
            except aiomqtt.MqttError:
                self.rep.add(f"{self.kind}.connect_failed")
                await asyncio.sleep(0.5)
                continue
            self.rep.add(f"{self.kind}.connections")
            self.conns += 1
            if self.stale is not None:  # the broker closed it when this one connected
                stale, self.stale = self.stale, None
                try:
                    await asyncio.wait_for(stale.__aexit__(None, None, None), 5)
                except Exception:  # noqa: BLE001 - already gone
                    pass
            loop = asyncio.get_running_loop()
            self.dropped = loop.create_future()
            paho = self.paho = client._client
            try:
                paho.message_callback_add(self.down, lambda _c, _u, m: self.on_down(m))
                await client.subscribe(self.down, qos=1)
                await client.publish(self.state, ONLINE, qos=1, retain=True)
                hello = {"type": "hello", "version": 3, "features": {"mcp": True}, "transport": "mqtt",
                         "client_id": self.id, "token": self.token}  # fmt: skip
                await client.publish(self.up, orjson.dumps(hello), qos=1)
                if self.kind == "garbage":
                    for g in GARBAGE_UP:
                        await client.publish(self.up, g, qos=0)
                left = self.stop_at - time.monotonic()
                stay = self.rng.uniform(0.2, 1.0) if self.kind == "storm" else left
                reader = loop.create_task(self.drain(client))
                await asyncio.wait(
                    {reader, self.dropped}, timeout=max(stay, 0.01), return_when=asyncio.FIRST_COMPLETED
                )
                reader.cancel()
                if reader.done() and not reader.cancelled() and not self.dropped.done():
                    # The broker went away (a restart): reconnect as a device does.
                    self.rep.add(f"{self.kind}.link_lost")
                    await asyncio.sleep(0.5)
                    continue
                if self.dropped.done():  # vanished mid-call (vanish/late kinds)
                    await asyncio.sleep(self.away if self.kind == "late" else 0.3)
                    continue
                if time.monotonic() >= self.stop_at:
                    await self.leave(client)
                    return True
                # A storm device goes and comes back: by a reset (the broker publishes its
                # will), by a clean DISCONNECT (no will: its state stays online), or by a
                # second connection with the same client id taking the session over.
                mode = self.conns % 3
                if mode == 0:
                    _drop(paho)
                elif mode == 2:
                    self.rep.add("storm.takeovers")
                    self.stale, client = client, None  # the next connection takes over
            except aiomqtt.MqttError:
                self.rep.add(f"{self.kind}.link_lost")
                await asyncio.sleep(0.5)
            finally:
                if client is not None:  # (None: kept open for a takeover)
                    try:
                        await asyncio.wait_for(client.__aexit__(None, None, None), 5)
                    except Exception:  # noqa: BLE001 - already gone
                        pass
        return False

    async def drain(self, client: aiomqtt.Client) -> None:
        async for _m in client.messages:  # ends (raises) when the link drops
            pass

    async def leave(self, client: aiomqtt.Client) -> None:
        if self.rng.random() < 0.5 and self.kind != "late":
            _drop(self.paho)  # the broker publishes the will
            self.rep.add("left.by_will")
        else:
            await client.publish(self.state, OFFLINE, qos=1, retain=True)
            self.rep.add("left.by_offline")

    def on_down(self, message: Any) -> None:
        try:
            self.answer(message)
        except Exception as exc:  # noqa: BLE001 - reported, the test fails on it
            self.rep.errors.append(f"{self.id}: {type(exc).__name__}: {exc}")

    def answer(self, message: Any) -> None:
        msg = orjson.loads(message.payload)
        if not isinstance(msg, dict):
            return
        if msg.get("type") == "hello":
            self.rep.add(f"{self.kind}.server_hellos")
            return
        reply = _reply(self.model, self.counters, self.id, msg)
        if reply is None:
            return
        props = message.properties
        topic = getattr(props, "ResponseTopic", None)
        corr = bytes(getattr(props, "CorrelationData", b"") or b"")
        if not topic:
            self.rep.add(f"{self.kind}.request_without_response_topic")
            return
        out = _props(PacketTypes.PUBLISH, CorrelationData=corr)
        publish = self.paho.publish
        if msg.get("method") != "tools/call":
            publish(topic, orjson.dumps(reply), 0, False, out)
            return
        self.calls += 1
        n = self.calls
        kind = self.kind
        if kind == "silent":
            self.rep.add("silent.ignored")
            return
        if kind in ("vanish", "late") and n % 2 == 0:
            self.rep.add(f"{kind}.vanished_mid_call")
            _drop(self.paho)
            if self.dropped is not None and not self.dropped.done():
                self.dropped.set_result(None)
            return
        if kind == "garbage":
            rid = msg.get("id")
            wrong = dict(reply, id=rid + 1_000_000 if isinstance(rid, int) else 1_000_000)
            for g in [*GARBAGE_REPLIES, orjson.dumps(wrong)]:
                publish(topic, g, 0, False, out)
            # The right reply with someone else's Correlation Data goes nowhere.
            publish(
                topic,
                orjson.dumps(reply),
                0,
                False,
                _props(PacketTypes.PUBLISH, CorrelationData=os.urandom(12)),
            )
            self.rep.add("garbage.sent")
        if kind == "big" and n % 2 == 0:
            pad = {"jsonrpc": "2.0", "id": msg.get("id"), "result": {"content": [{"type": "text",
                   "text": "x" * BIG_REPLY}], "isError": False}}  # fmt: skip
            publish(topic, orjson.dumps(pad), 0, False, out)
            self.rep.add("big.sent_oversized")
            return
        data = orjson.dumps(reply)
        publish(topic, data, 0, False, out)
        if kind == "dup":
            publish(topic, data, 0, False, out)


async def wrong_password(plan: dict, peer: dict, rep: Report) -> None:
    """Tries to log in as its victim (a real device id) with a wrong password."""
    seen: dict[str, Any] = {
        "kind": "wrongpass",
        "id": peer["id"],
        "connected": 0,
        "refused": 0,
        "received": [],
    }
    for i in range(4):
        client = aiomqtt.Client("127.0.0.1", plan["port"], username=peer["victim"], password=f"guess-{i}",
                                identifier=f"wp-{peer['id']}-{i}", protocol=aiomqtt.ProtocolVersion.V5,
                                timeout=10)  # fmt: skip
        try:
            async with client:
                seen["connected"] += 1
                await client.subscribe(f"{plan['prefix']}/#")

                async def listen(c: aiomqtt.Client = client) -> None:
                    async for m in c.messages:
                        seen["received"].append(m.topic.value)

                try:
                    await asyncio.wait_for(listen(), 0.3)
                except TimeoutError:
                    pass
        except aiomqtt.MqttCodeError:
            seen["refused"] += 1
        except (aiomqtt.MqttError, TimeoutError):
            pass
        await asyncio.sleep(0.2)
    rep.hostile.append(seen)


async def impostor(plan: dict, peer: dict, rep: Report) -> None:
    """Logged in as itself, tries to read and speak for its victim (a good device)."""
    prefix, me, victim = plan["prefix"], peer["id"], peer["victim"]
    seen: dict[str, Any] = {"kind": "impostor", "id": me, "received": [], "published": 0}
    try:
        async with aiomqtt.Client("127.0.0.1", plan["port"], username=me, password=f"pw-{me}",
                                  identifier=f"imp-{me}", protocol=aiomqtt.ProtocolVersion.V5,
                                  timeout=10) as client:  # fmt: skip

            async def listen() -> None:
                async for m in client.messages:
                    seen["received"].append(m.topic.value)

            task = asyncio.get_running_loop().create_task(listen())
            for pattern in (f"{prefix}/#", f"{prefix}/+/down", f"$share/mcpgen-workers/{prefix}/+/up",
                            f"{prefix}/{victim}/reply/+", "#"):  # fmt: skip
                try:
                    await client.subscribe(pattern, qos=1)
                except aiomqtt.MqttError:
                    pass
            forged = orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}})
            stop_at = time.monotonic() + plan["duration"]
            while time.monotonic() < stop_at:
                corr = _props(PacketTypes.PUBLISH, CorrelationData=os.urandom(12))
                for topic, payload, props, retain in (
                    (f"{prefix}/{victim}/reply/main", forged, corr, False),
                    (f"{prefix}/{victim}/state", b"offline", None, True),
                    (f"{prefix}/{victim}/up", b'{"type":"hello","features":{"mcp":true}}', None, False),
                    (f"{prefix}/{victim}/down", forged, None, False),
                ):
                    await client.publish(topic, payload, qos=1, retain=retain, properties=props)
                    seen["published"] += 1
                await asyncio.sleep(0.5)
            task.cancel()
    except aiomqtt.MqttError as exc:
        rep.errors.append(f"impostor {me}: {exc}")
    rep.hostile.append(seen)


async def main_async(plan: dict) -> dict:
    model = Model(str(plan["spec"]))
    rep = Report()
    counters: dict[str, int] = {}
    tasks = []
    for peer in plan["peers"]:
        kind = peer["kind"]
        if kind == "wrongpass":
            coro: Any = wrong_password(plan, peer, rep)
        elif kind == "impostor":
            coro = impostor(plan, peer, rep)
        else:
            coro = Device(plan, peer, model, counters, rep).run()
        tasks.append(asyncio.get_running_loop().create_task(coro))
        await asyncio.sleep(0.002)  # not all CONNECTs in one instant
    results = await asyncio.gather(*tasks, return_exceptions=True)
    rep.errors += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    return {"counters": rep.counters, "hostile": rep.hostile, "errors": rep.errors}


def main() -> int:
    plan = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    report = asyncio.run(main_async(plan))
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
