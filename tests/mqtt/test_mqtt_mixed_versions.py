"""One MqttFleet worker, two firmware versions of the desk lamp on the broker, the v2
bindings: each device is served typed by its own version (policy "compatible")."""

from __future__ import annotations

import pytest
from lamp_versions import LampVersions, build_versions, exercise_mixed_fleet
from mqtt_testlib import Broker, launch

from mcpgen.runtime import MqttFleet


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> LampVersions:
    return build_versions(tmp_path_factory.mktemp("mqtt_lamp_versions"))


async def test_one_fleet_serves_v1_and_v2_typed(
    broker: Broker, versions: LampVersions, tmp_path: object
) -> None:
    mod = versions.module
    async with (
        MqttFleet("127.0.0.1", broker.port, fingerprint=mod.RELEASES, policy="compatible") as fleet,
        launch(versions.exe_v1, broker.port, "lamp-v1", tmp_path) as sim1,  # type: ignore[arg-type]
        launch(versions.exe_v2, broker.port, "lamp-v2", tmp_path) as sim2,  # type: ignore[arg-type]
    ):
        for sim in (sim1, sim2):
            await sim.wait_log("server hello, session_id=")
        d1 = await fleet.device("lamp-v1")
        d2 = await fleet.device("lamp-v2")
        await exercise_mixed_fleet(versions, d1, d2, events=False)
