"""Over-the-air rollout through the MQTT gateway: supervised simulators in --mqtt mode
update, reboot, reconnect over the broker and mark the new image valid at its server hello."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from mqtt_testlib import Broker, launch
from ota_fleet import OtaLamps, build_ota_lamps, ota_state

from mcpgen.runtime import MqttGateway
from mcpgen.runtime.ota import ImageServer, read_image, rollout


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> OtaLamps:
    return build_ota_lamps(tmp_path_factory.mktemp("mqtt_ota_lamps"))


async def test_rollout_over_mqtt(broker: Broker, lamps: OtaLamps, tmp_path: Path) -> None:
    ids = ["mq-1", "mq-2", "mq-3"]
    image = read_image(lamps.exe_v2)
    async with (
        MqttGateway("127.0.0.1", broker.port) as gw,
        ImageServer(image) as server,
        contextlib.AsyncExitStack() as stack,
    ):
        for i in ids:
            await stack.enter_async_context(
                launch(lamps.exe_v1, broker.port, i, tmp_path, "--ota-dir", str(tmp_path / f"{i}.ota"))
            )
        for i in ids:
            assert (await gw.wait_for_device(i, timeout=60)).fingerprint == lamps.fingerprint_v1
        report = await rollout(gw, ids, image, server.url, batch=2, deadline=60)
        assert [r.outcome for r in report.results] == ["updated"] * 3, [r.line() for r in report.results]
        for i in ids:
            assert gw.connected[i].fingerprint == lamps.fingerprint_v2
            assert ota_state(tmp_path, i) == "active=b\npending=0\nattempts=0\n"
