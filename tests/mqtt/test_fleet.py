"""MqttFleet: workers sharing devices through a real Mosquitto (MQTT 5), with the real
C++ simulator (libmosquitto) as the device."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest
from mqtt_testlib import Broker, Built, Spy, launch

from mcpgen.runtime import DeviceDisconnected, DeviceTimeout, MqttFleet, MqttGateway

pytestmark = pytest.mark.asyncio


async def test_two_workers_call_one_device_through_bindings(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    notes: list[tuple[str, str]] = []
    async with (
        MqttFleet("127.0.0.1", broker.port, worker_id="w1") as w1,
        MqttFleet("127.0.0.1", broker.port, worker_id="w2") as w2,
        Spy(broker.port) as spy,
        launch(built.exe, broker.port, "lamp-1", tmp_path) as sim,
    ):
        for w in (w1, w2):
            w.on_notification(lambda dev, method, _params: notes.append((dev, method)))
        await sim.wait_log("server hello, session_id=")
        # The hello went to exactly one worker of the shared group.
        assert w1.hellos + w2.hellos == 1
        d1 = await w1.device("lamp-1")
        d2 = await w2.device("lamp-1")
        assert d1 is not d2 and await w1.device("lamp-1") is d1
        sim1, sim2 = built.bindings(d1), built.bindings(d2)
        totals = await asyncio.gather(
            *(sim1.counter.add(amount=1) for _ in range(10)),
            *(sim2.counter.add(amount=1) for _ in range(10)),
        )
        assert sorted(totals) == list(range(1, 21))  # every call executed once, answered once
        assert d1.fingerprint == built.spec.fingerprint
        # The replies went to each worker's own response topic, with Correlation Data.
        replies = [m for m in spy.seen if "/reply/" in m.topic]
        assert {m.topic for m in replies} >= {"mcpgen/lamp-1/reply/w1", "mcpgen/lamp-1/reply/w2"}
        assert w1.stray_replies == w2.stray_replies == 0
        assert "reconnecting" not in sim.log()
        assert w1.is_online("lamp-1") is True and "lamp-1" in w2.online()


async def test_offline_device_fails_pending_calls_in_every_worker(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    async with (
        MqttFleet("127.0.0.1", broker.port, call_timeout=20) as w1,
        MqttFleet("127.0.0.1", broker.port, call_timeout=20) as w2,
        launch(built.exe, broker.port, "lamp-2", tmp_path) as sim,
    ):
        d1, d2 = await w1.device("lamp-2"), await w2.device("lamp-2")
        sim.stop()  # mute: the calls stay pending
        calls = [asyncio.ensure_future(d.call("self.counter.add", {"amount": 1})) for d in (d1, d2)]
        await asyncio.sleep(0.3)
        sim.kill()  # killed while mute, no DISCONNECT: the broker publishes the will at once
        for call in calls:
            with pytest.raises(DeviceDisconnected, match="last will"):
                await asyncio.wait_for(call, 5)
        assert w1.is_online("lamp-2") is False
        with pytest.raises(DeviceDisconnected, match="offline"):
            await w2.device("lamp-2", timeout=0.5)
    with pytest.raises(DeviceTimeout, match="no presence"):
        async with MqttFleet("127.0.0.1", broker.port) as w3:
            await w3.device("never-seen", timeout=0.5)


async def test_fleet_and_gateway_conventions_coexist(broker: Broker, built: Built, tmp_path: Path) -> None:
    # The same simulator answers the MqttGateway (no Response Topic: replies on up) and
    # a fleet worker (Response Topic) at once.
    async with (
        MqttGateway("127.0.0.1", broker.port) as gw,
        launch(built.exe, broker.port, "lamp-3", tmp_path),
    ):
        via_gw = await gw.wait_for_device("lamp-3", timeout=15)
        async with MqttFleet("127.0.0.1", broker.port) as w:
            via_fleet = await w.device("lamp-3")
            assert await via_gw.call("self.counter.add", {"amount": 2}) == 2
            assert await via_fleet.call("self.counter.add", {"amount": 3}) == 5
            assert await via_gw.call("self.counter.add", {"amount": 1}) == 6


async def test_device_notifications_reach_one_worker(broker: Broker, built: Built, tmp_path: Path) -> None:
    got: list[tuple[str, str, str]] = []
    async with (
        MqttFleet("127.0.0.1", broker.port, worker_id="n1") as w1,
        MqttFleet("127.0.0.1", broker.port, worker_id="n2") as w2,
        Spy(broker.port) as spy,
        launch(built.exe, broker.port, "lamp-4", tmp_path),
    ):
        w1.on_notification(lambda d, m, _p: got.append(("n1", d, m)))
        w2.on_notification(lambda d, m, _p: got.append(("n2", d, m)))
        await spy.wait(lambda m: m.topic == "mcpgen/lamp-4/up")
        note = {"jsonrpc": "2.0", "method": "notifications/state_changed", "params": {"newState": "idle"}}
        # What a device notification looks like on the wire (published here as the device).
        await spy.publish("mcpgen/lamp-4/up", orjson.dumps(note))
        for _ in range(100):
            if got:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        assert len(got) == 1 and got[0][1:] == ("lamp-4", "notifications/state_changed")


async def test_backend_sockets_have_tcp_nodelay(broker: Broker) -> None:
    # Nagle's algorithm would hold each small request until the broker's delayed ACK.
    import socket

    async with MqttFleet("127.0.0.1", broker.port) as fleet, MqttGateway("127.0.0.1", broker.port) as gw:
        for client in (fleet._broker.client, gw._broker.client):
            sock = client._client.socket()  # aiomqtt's paho client
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


async def test_a_worker_subscribes_where_it_names_its_reply_topic() -> None:
    # one spelling of the reply leaf (mqtt_topics.reply_leaf): the Response Topic a call
    # names is one the worker's reply subscription matches, and it gives the device back
    from mcpgen.mqtt_topics import device_topic, reply_leaf

    fleet = MqttFleet(topic_prefix="site/a", worker_id="w7")
    topic = fleet.reply_topic("lamp-1")
    assert topic == device_topic("site/a", "lamp-1", reply_leaf("w7")) == "site/a/lamp-1/reply/w7"
    assert fleet.device_of(topic, "/" + reply_leaf("w7")) == "lamp-1"
