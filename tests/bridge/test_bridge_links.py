"""The bridge command line with devices on a serial line and behind an MQTT broker; their
events reach the MCP client as log messages."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from bridge_testlib import subprocess_env
from link_fakes import broker, mosquitto, mqtt_device, serial_device
from mcp import Client, StdioServerParameters

Events = asyncio.Queue[types.LoggingMessageNotificationParams]


@contextlib.asynccontextmanager
async def cli_client(*argv: str) -> AsyncIterator[tuple[Client, Events]]:
    events: Events = asyncio.Queue()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        await events.put(params)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpgen.runtime.bridge", "--log-level", "WARNING", *argv],
        env=subprocess_env(),
    )
    async with Client(params, mode="legacy", read_timeout_seconds=20, logging_callback=on_log) as client:
        yield client, events


async def wait_for_tools(client: Client, present: bool) -> list[str]:
    names: list[str] = []
    for _ in range(100):
        names = [t.name for t in (await client.list_tools(cache_mode="bypass")).tools]
        if bool(names) == present:
            return names
        await asyncio.sleep(0.1)
    return names


async def test_cli_serial_device() -> None:
    pytest.importorskip("serial")
    async with serial_device() as url, cli_client("--serial", url) as (client, events):
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["self__audio_speaker__set_volume", "self__button__press"]
        ok = await client.call_tool("self__audio_speaker__set_volume", {"volume": 5})
        assert ok.content[0].text == "volume 5 on uart-fake"
        pressed = await client.call_tool("self__button__press", {})
        assert not pressed.is_error
        event = await asyncio.wait_for(events.get(), 10)
        assert event.data == {"event": "button_pressed", "device": f"serial:{url}", "arguments": {"count": 1}}


@pytest.mark.skipif(mosquitto() is None, reason="mosquitto (Debian package 'mosquitto') is not installed")
async def test_cli_mqtt_devices(tmp_path: Path) -> None:
    pytest.importorskip("aiomqtt")
    stop = asyncio.Event()
    with broker(tmp_path) as port:
        async with cli_client("--mqtt-broker", f"127.0.0.1:{port}") as (client, events):
            device = asyncio.ensure_future(mqtt_device(port, "kitchen", stop))
            try:
                names = await wait_for_tools(client, present=True)
                assert names == ["kitchen__self__audio_speaker__set_volume", "kitchen__self__button__press"]
                ok = await client.call_tool(names[0], {"volume": 9})
                assert ok.content[0].text == "volume 9 on kitchen"
                await client.call_tool(names[1], {})
                event = await asyncio.wait_for(events.get(), 10)
                assert event.logger == "mcpgen.device.kitchen"
                expected = {"event": "button_pressed", "device": "kitchen", "arguments": {"count": 1}}
                assert event.data == expected
                stop.set()
                await asyncio.wait_for(device, 10)
                assert await wait_for_tools(client, present=False) == []
                gone = await client.call_tool(names[0], {"volume": 1})
                assert gone.is_error and "kitchen" in gone.content[0].text
            finally:
                stop.set()
                device.cancel()
                with contextlib.suppress(BaseException):
                    await device
