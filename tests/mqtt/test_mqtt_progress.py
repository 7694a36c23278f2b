"""Progress over MQTT: the simulator sends notifications/progress on the link its request
came on (the up topic for the MqttGateway, the request's Response Topic with its
Correlation Data for a fleet worker), before the reply, and the call's on_progress gets them."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest
from mqtt_testlib import REPO, Broker, Built, build, launch

from mcpgen.runtime import MqttFleet, MqttGateway

FADE = {"r": 40, "g": 50, "b": 60, "seconds": 0}


@pytest.fixture(scope="module")
def built_lamp(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(REPO / "toolspec" / "desk_lamp.yaml", tmp_path_factory.mktemp("mqtt_progress_lamp"))


def recorder() -> tuple[list[tuple[float, Optional[float], Optional[str]]], object]:
    seen: list[tuple[float, Optional[float], Optional[str]]] = []

    def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        seen.append((progress, total, message))

    return seen, on_progress


def check(seen: list[tuple[float, Optional[float], Optional[str]]]) -> None:
    assert [p for p, _, _ in seen] == [float(i) for i in range(1, 11)]
    assert {t for _, t, _ in seen} == {10.0}
    assert seen[-1][2] == "rgb 40,50,60"


async def test_progress_over_the_mqtt_gateway(broker: Broker, built_lamp: Built, tmp_path: Path) -> None:
    async with (
        MqttGateway("127.0.0.1", broker.port) as gw,
        launch(built_lamp.exe, broker.port, "lamp-p", tmp_path),
    ):
        device = await gw.wait_for_device("lamp-p", timeout=15)
        seen, on_progress = recorder()
        assert await device.call("self.light.fade", FADE, on_progress=on_progress) is True
        check(seen)  # every report arrived before the reply resolved the call


async def test_progress_over_a_fleet_workers_response_topic(
    broker: Broker, built_lamp: Built, tmp_path: Path
) -> None:
    async with (
        MqttFleet("127.0.0.1", broker.port, worker_id="wp") as worker,
        launch(built_lamp.exe, broker.port, "lamp-q", tmp_path) as sim,
    ):
        await sim.wait_log("server hello, session_id=")
        device = await worker.device("lamp-q")
        seen, on_progress = recorder()
        assert await device.call("self.light.fade", FADE, on_progress=on_progress) is True
        check(seen)
