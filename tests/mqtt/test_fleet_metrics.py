"""FleetMetrics on an MqttFleet worker: devices online, calls timed through the bindings,
refused hellos, device notifications and reconnects, scraped in the Prometheus format."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mqtt_testlib import Broker, Built, Spy, launch
from prometheus_client.parser import text_string_to_metric_families

from mcpgen.runtime import MqttFleet, ValidationError
from mcpgen.runtime.console import FleetMetrics


def scrape(metrics: FleetMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.render()[0].decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def until(metrics: FleetMetrics, key: tuple[str, tuple[tuple[str, str], ...]], want: float) -> None:
    for _ in range(200):
        if scrape(metrics).get(key, 0.0) == want:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{key} never became {want}: {scrape(metrics).get(key)}")


FLEET = (("transport", "mqtt-fleet"),)
VOLUME = "self.audio_speaker.set_volume"


async def test_fleet_worker_metrics(broker: Broker, built: Built, tmp_path: Path) -> None:
    metrics = FleetMetrics(process_metrics=False)
    async with MqttFleet("127.0.0.1", broker.port, worker_id="m1") as worker, Spy(broker.port) as spy:
        metrics.watch_fleet(worker)
        async with launch(built.exe, broker.port, "spk-1", tmp_path) as sim:
            await sim.wait_log("server hello, session_id=")
            await until(metrics, ("mcpgen_devices_connected", FLEET), 1)
            speaker = built.bindings(await worker.device("spk-1"))
            async with metrics.timing(VOLUME):
                assert await speaker.audio_speaker.set_volume(volume=30) is True
            with pytest.raises(ValidationError):
                async with metrics.timing(VOLUME):
                    await speaker.audio_speaker.set_volume(volume=420)  # refused by the bindings
            sim.kill()
            await until(metrics, ("mcpgen_devices_connected", FLEET), 0)
        async with launch(built.exe, broker.port, "spk-1", tmp_path) as sim:
            await sim.wait_log("server hello, session_id=")
            await until(metrics, ("mcpgen_reconnects_total", FLEET), 1)
        # a hello that is not an MCP device's is refused and counted
        await spy.publish("mcpgen/odd-1/up", b'{"type":"hello","features":{"mcp":false}}')
        await until(metrics, ("mcpgen_rejected_handshakes_total", FLEET), 1)
        samples = scrape(metrics)
        assert samples[("mcpgen_calls_total", (("outcome", "ok"), ("tool", VOLUME)))] == 1
        assert samples[("mcpgen_calls_total", (("outcome", "invalid"), ("tool", VOLUME)))] == 1
        assert samples[("mcpgen_call_duration_seconds_count", (("tool", VOLUME),))] == 1
