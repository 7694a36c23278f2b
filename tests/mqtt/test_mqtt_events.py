"""Spec events over MQTT: the simulator publishes them on its own up topic (from inside a
handler, under the port's send lock) and the typed bindings get them."""

from __future__ import annotations

from pathlib import Path

import pytest
from mqtt_testlib import REPO, Broker, Built, build, launch

from mcpgen.runtime import MqttGateway


@pytest.fixture(scope="module")
def built_lamp(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(REPO / "toolspec" / "desk_lamp.yaml", tmp_path_factory.mktemp("mqtt_lamp"))


async def test_events_over_mqtt(broker: Broker, built_lamp: Built, tmp_path: Path) -> None:
    sim = launch(built_lamp.exe, broker.port, "lamp-m", tmp_path)
    async with MqttGateway("127.0.0.1", broker.port) as gw, sim:
        lamp = built_lamp.bindings(await gw.wait_for_device("lamp-m", timeout=15), policy="strict")
        mod = built_lamp.module
        presses = lamp.events.button_pressed()
        power = lamp.events.power_changed()
        assert await lamp.button.press(count=3) is True
        assert await presses.next(timeout=5) == mod.ButtonPressedEvent(count=3)
        assert await power.next(timeout=5) == mod.PowerChangedEvent(on=True, source="button")
        assert await lamp.light.set_power(on=False) is True
        assert await power.next(timeout=5) == mod.PowerChangedEvent(on=False, source="assistant")
