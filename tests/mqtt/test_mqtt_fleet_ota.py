"""Over-the-air rollout through `MqttFleet` workers (docs/ota.md, "Through an MQTT fleet"):
supervised simulators in --mqtt mode are updated by one worker of a fleet, reboot, come back
online (their Last Will said offline meanwhile), mark the new image valid at the server hello
that any worker of the group answers, and open a new session with the rolling worker. A broken
image rolls back and halts the rollout; a device that is not online is reported offline."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from contextlib import AbstractAsyncContextManager as AsyncContextManager
from pathlib import Path

import pytest
from mqtt_testlib import Broker, Sim, launch
from ota_fleet import OtaLamps, build_ota_lamps, fake_image, ota_state

from mcpgen.runtime import MqttFleet
from mcpgen.runtime.ota import ImageServer, read_image, rollout


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> OtaLamps:
    return build_ota_lamps(tmp_path_factory.mktemp("fleet_ota_lamps"))


def _sim(lamps: OtaLamps, broker: Broker, device_id: str, tmp: Path) -> AsyncContextManager[Sim]:
    """A supervised v1 simulator in --mqtt mode with its OTA directory ``tmp/<id>.ota``."""
    return launch(lamps.exe_v1, broker.port, device_id, tmp, "--ota-dir", str(tmp / f"{device_id}.ota"))


async def test_rollout_through_a_fleet_worker(broker: Broker, lamps: OtaLamps, tmp_path: Path) -> None:
    ids = ["fl-1", "fl-2", "fl-3", "fl-4"]
    image = read_image(lamps.exe_v2)
    results: list[str] = []
    async with (
        MqttFleet("127.0.0.1", broker.port, worker_id="roller") as roller,
        MqttFleet("127.0.0.1", broker.port, worker_id="other") as other,
        ImageServer(image) as server,
        contextlib.AsyncExitStack() as stack,
    ):
        for i in ids:
            await stack.enter_async_context(_sim(lamps, broker, i, tmp_path))
        for i in ids:
            assert (await roller.device(i, timeout=60)).fingerprint == lamps.fingerprint_v1
        report = await rollout(
            roller,
            ids,
            image,
            server.url,
            batch=2,
            deadline=60,
            on_result=lambda r: results.append(r.device_id),
        )
        assert [r.outcome for r in report.results] == ["updated"] * 4, [r.line() for r in report.results]
        assert not report.halted and sorted(results) == ids
        for r in report.results:
            assert (r.old_version, r.new_version) == ("0.3.1", "0.4.0")
            assert (r.old_fingerprint, r.new_fingerprint) == (lamps.fingerprint_v1, lamps.fingerprint_v2)
            assert r.duration > 0
            assert ota_state(tmp_path, r.device_id) == "active=b\npending=0\nattempts=0\n"
        assert server.requests == 4 and server.bytes_served == 4 * image.size
        # Every worker sees the new image: the other one's session is set up afresh.
        for i in ids:
            assert (await other.device(i, timeout=30)).fingerprint == lamps.fingerprint_v2
            assert (await roller.device(i)).fingerprint == lamps.fingerprint_v2


async def test_broken_image_rolls_back_and_halts_through_a_fleet(
    broker: Broker, lamps: OtaLamps, tmp_path: Path
) -> None:
    ids = ["fb-1", "fb-2", "fb-3"]
    broken = read_image(
        fake_image(
            tmp_path / "broken-v2",
            name="desk-lamp",
            version="0.4.0",
            fingerprint=lamps.fingerprint_v2,
            body="exit 3",
        )
    )
    async with (
        MqttFleet("127.0.0.1", broker.port) as fleet,
        ImageServer(broken) as server,
        contextlib.AsyncExitStack() as stack,
    ):
        sims = [await stack.enter_async_context(_sim(lamps, broker, i, tmp_path)) for i in ids]
        for i in ids:
            await fleet.device(i, timeout=60)
        report = await rollout(fleet, ids, broken, server.url, batch=1, max_failures=0, deadline=60)
        assert [r.outcome for r in report.results] == ["rolled_back", "skipped", "skipped"], [
            r.line() for r in report.results
        ]
        assert report.halted and report.failures == 1
        first = report.results[0]
        assert first.new_fingerprint == first.old_fingerprint == lamps.fingerprint_v1
        assert server.requests == 1  # the others were never asked
        for i in ids:
            device = await fleet.device(i, timeout=30)
            assert device.fingerprint == lamps.fingerprint_v1
            assert await device.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3}) is True
            assert ota_state(tmp_path, i) == "active=a\npending=0\nattempts=0\n"
        log = sims[0].log_path.read_text(encoding="utf-8")
        assert "exited (code 3) before reaching the backend" in log and "rolling back to slot a" in log


async def test_a_device_that_is_not_online_is_reported_offline(
    broker: Broker, lamps: OtaLamps, tmp_path: Path
) -> None:
    image = read_image(lamps.exe_v2)
    async with MqttFleet("127.0.0.1", broker.port) as fleet, ImageServer(image) as server:
        report = await rollout(fleet, ["fo-absent"], image, server.url, deadline=2)
    assert [(r.outcome, r.detail) for r in report.results] == [("offline", "not connected")]
    assert report.halted and server.requests == 0


async def test_codegen_ota_rolls_a_fleet_through_the_broker(
    broker: Broker, lamps: OtaLamps, tmp_path: Path
) -> None:
    """`codegen ota IMAGE --mqtt HOST:PORT --devices N`: the CLI joins as a fleet worker."""
    ids = ["fc-1", "fc-2"]
    async with contextlib.AsyncExitStack() as stack, MqttFleet("127.0.0.1", broker.port) as watcher:
        for i in ids:
            await stack.enter_async_context(_sim(lamps, broker, i, tmp_path))
        for i in ids:  # both online (their retained state) before the CLI looks
            await watcher.device(i, timeout=60)
        cli = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mcpgen.codegen.cli",
            "ota",
            str(lamps.exe_v2),
            "--mqtt",
            f"127.0.0.1:{broker.port}",
            "--devices",
            "2",
            "--batch",
            "2",
            "--wait",
            "30",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(cli.communicate(), 120)
    text = out.decode()
    assert cli.returncode == 0, text
    lines = text.splitlines()
    assert lines[0] == f"MQTT broker mqtt://127.0.0.1:{broker.port}/mcpgen: waiting for 2 device(s)", lines[0]
    progress = [line for line in lines if line.startswith("[")]
    assert [p[:5] for p in progress] == ["[1/2]", "[2/2]"], text
    assert sorted(p.split()[1] for p in progress) == ids, text
    for line in progress:
        assert f" updated 0.3.1 ({lamps.fingerprint_v1}) -> 0.4.0 ({lamps.fingerprint_v2})" in line.replace(
            "  ", " "
        ), line
    assert lines[-1].startswith("2 devices in ") and lines[-1].endswith(": 2 updated"), lines[-1]
