"""MqttFleet's own limits, each against a scripted device (a plain MQTT 5 client) on a real
Mosquitto: what a worker does with oversized replies and with devices that go away.

Regression tests for what the fault-injection suite (test_fleet_fault_mix.py) found.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, Optional

import orjson
import pytest
from mqtt_testlib import HOST, Broker

from mcpgen.runtime import DeviceDisconnected, DeviceTimeout, MqttFleet

pytestmark = pytest.mark.asyncio

INIT = {
    "protocolVersion": "2024-11-05",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "x", "version": "1"},
}
TOOLS = {"tools": [{"name": "echo", "description": "e", "inputSchema": {"type": "object", "properties": {}}}]}


@contextlib.asynccontextmanager
async def scripted_device(
    port: int, device_id: str, answer: Callable[[dict], Optional[bytes]], will: bool = True
) -> AsyncIterator[Any]:
    """A device that answers the setup itself and each ``tools/call`` with ``answer(req)``
    (bytes published as the reply, None for no reply)."""
    import aiomqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    state = f"mcpgen/{device_id}/state"
    async with aiomqtt.Client(
        HOST,
        port,
        identifier=f"scripted-{device_id}",
        protocol=aiomqtt.ProtocolVersion.V5,
        will=aiomqtt.Will(state, b"offline", qos=1, retain=True) if will else None,
    ) as client:
        paho = client._client  # answered in paho's callback: no task to cancel at the end

        def serve(_c: Any, _u: Any, m: Any) -> None:
            req = orjson.loads(m.payload)
            if "id" not in req:
                return
            method = req.get("method")
            if method == "tools/call":
                data = answer(req)
            else:
                result = INIT if method == "initialize" else TOOLS if method == "tools/list" else {}
                data = orjson.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result})
            if data is not None:
                props = Properties(PacketTypes.PUBLISH)
                props.CorrelationData = m.properties.CorrelationData
                paho.publish(m.properties.ResponseTopic, data, 0, False, props)

        paho.message_callback_add(f"mcpgen/{device_id}/down", serve)
        await client.subscribe(f"mcpgen/{device_id}/down")
        await client.publish(state, b"online", qos=1, retain=True)
        yield client


def text_reply(req: dict, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return orjson.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result})


async def test_a_reply_over_max_frame_closes_the_handle_at_once(broker: Broker) -> None:
    # The gateway closes a device's connection on a frame over max_frame (1009); the fleet
    # has no connection per device, so it closes that handle: its calls fail typed at once
    # instead of a worker parsing (and handing the caller) a reply of any size.
    sizes = iter([10, 100_000, 10])
    async with (
        MqttFleet(HOST, broker.port, call_timeout=5, max_frame=64 * 1024) as fleet,
        scripted_device(broker.port, "big-1", lambda req: text_reply(req, "x" * next(sizes))),
    ):
        device = await fleet.device("big-1")
        assert await device.call("echo", {}) == "x" * 10
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(DeviceDisconnected, match="max_frame"):
            await device.call("echo", {})
        assert loop.time() - t0 < 2  # not the 5 s call timeout
        assert device.closed
        again = await fleet.device("big-1")  # a fresh session works
        assert again is not device and await again.call("echo", {}) == "x" * 10


async def test_waiting_for_a_device_that_never_comes_leaves_nothing_behind(broker: Broker) -> None:
    async with MqttFleet(HOST, broker.port) as fleet:
        for i in range(50):
            with pytest.raises(DeviceTimeout):
                await fleet.device(f"ghost-{i}", timeout=0.01)
        # One presence Event per id that was ever waited for would be a leak that grows
        # with every typo'd or departed device id a backend asks for.
        assert len(fleet._online) == 0


async def test_a_cleared_retained_state_forgets_the_device(broker: Broker) -> None:
    import aiomqtt

    async with (
        MqttFleet(HOST, broker.port) as fleet,
        aiomqtt.Client(HOST, broker.port, protocol=aiomqtt.ProtocolVersion.V5) as admin,
    ):
        await admin.publish("mcpgen/gone-1/state", b"offline", qos=1, retain=True)
        for _ in range(100):
            if fleet.is_online("gone-1") is False:
                break
            await asyncio.sleep(0.02)
        assert fleet.is_online("gone-1") is False
        # A decommissioned device's retained state is cleared (an empty retained message):
        # the worker forgets it too, or its presence table only ever grows.
        await admin.publish("mcpgen/gone-1/state", b"", qos=1, retain=True)
        for _ in range(100):
            if fleet.is_online("gone-1") is None:
                break
            await asyncio.sleep(0.02)
        assert fleet.is_online("gone-1") is None


async def test_a_lost_broker_leaves_no_handle_referenced(tmp_path: Any) -> None:
    import gc
    import weakref

    broker = Broker(tmp_path).start()
    try:
        async with MqttFleet(HOST, broker.port, call_timeout=2) as fleet:
            # No will: the handle is closed by the lost broker link, not by "offline".
            async with scripted_device(broker.port, "ref-1", lambda req: text_reply(req, "ok"), will=False):
                device = await fleet.device("ref-1")
                assert await device.call("echo", {}) == "ok"
                ref = weakref.ref(device)
                del device
                broker.stop()
                for _ in range(100):
                    if not fleet.connected:
                        break
                    await asyncio.sleep(0.05)
                assert not fleet.connected
                await asyncio.sleep(2.1)  # the finished call's (cancelled) timeout timer expires
                gc.collect()
                # Closed handles belong to their callers alone: the worker's reconnect loop
                # kept the last one it closed alive until the next broker loss.
                assert ref() is None, [type(r).__name__ for r in gc.get_referrers(ref())]
    finally:
        broker.stop()
