"""MqttFleet.fanout: one call on several devices of a shared fleet (real Mosquitto, the real
C++ simulator as the devices)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mqtt_testlib import Broker, Built, launch

from mcpgen.runtime import DeviceDisconnected, DeviceTimeout, FanoutResults, MqttFleet

pytestmark = pytest.mark.asyncio


async def test_fleet_fanout_calls_every_device_and_reports_each(
    broker: Broker, built: Built, tmp_path: Path
) -> None:
    async with (
        MqttFleet("127.0.0.1", broker.port, worker_id="fan", call_timeout=2.0) as fleet,
        launch(built.exe, broker.port, "fan-1", tmp_path) as sim1,
        launch(built.exe, broker.port, "fan-2", tmp_path) as sim2,
    ):
        for sim in (sim1, sim2):
            await sim.wait_log("server hello, session_id=")
        # "fan-gone" never connects: it times out waiting for presence, in its own slot.
        group = built.bindings.fanout(await fleet.fanout(["fan-1", "fan-2", "fan-gone"]))
        assert len(group) == 3
        first = await group.counter.add(amount=2)
        second = await group.counter.add(amount=5)
        assert isinstance(second, FanoutResults) and list(second) == ["fan-1", "fan-2", "fan-gone"]
        assert first.ok == {"fan-1": 2, "fan-2": 2} and second.ok == {"fan-1": 7, "fan-2": 7}
        assert isinstance(second.error("fan-gone"), (DeviceTimeout, DeviceDisconnected))
        # A device that goes quiet times out alone, like a single call.
        sim2.stop()
        third = await group.counter.add(amount=1)
        assert third["fan-1"] == 8
        assert isinstance(third.error("fan-2"), (DeviceTimeout, DeviceDisconnected))
        assert fleet.stray_replies == 0
        # The untyped form of the same group.
        raw = await (await fleet.fanout(["fan-1"])).call("self.counter.add", {"amount": 1})
        assert raw["fan-1"] == 9
        await asyncio.sleep(0)
