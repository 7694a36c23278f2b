"""The official MCP Python SDK client against the bridge, over stdio and Streamable HTTP,
in the handshake era (mode="legacy": initialize) and the stateless 2026-07-28 era
(mode="auto": the SDK probes server/discover first)."""

from __future__ import annotations

import json
import sys

import pytest
from bridge_testlib import HERE, HttpBridge, subprocess_env
from mcp import Client, MCPError, StdioServerParameters

MODES = ["legacy", "auto"]
EXPECTED_VERSION = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def stdio_params(*device_ids: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(HERE / "fake_bridge_main.py"), *device_ids], env=subprocess_env()
    )


async def exercise(client: Client, mode: str, prefix: str = "") -> None:
    assert client.protocol_version == EXPECTED_VERSION[mode]
    assert client.server_info is not None and client.server_info.name == "mcpgen-bridge"

    listed = await client.list_tools()
    names = [t.name for t in listed.tools if t.name.startswith(prefix)]
    assert names == [
        f"{prefix}self__get_device_status",
        f"{prefix}self__audio_speaker__set_volume",
        f"{prefix}self__light__set_rgb",
        f"{prefix}self__slow__count",
        f"{prefix}self__fail",
    ]  # the user-only self.reboot is hidden
    volume = next(t for t in listed.tools if t.name.endswith("set_volume"))
    assert volume.input_schema["properties"]["volume"]["maximum"] == 100

    ok = await client.call_tool(f"{prefix}self__audio_speaker__set_volume", {"volume": 20})
    assert not ok.is_error
    assert ok.content[0].text == "true"
    assert ok.structured_content == {"ok": True}
    status = await client.call_tool(f"{prefix}self__get_device_status", {})
    assert json.loads(status.content[0].text)["volume"] == 20

    bad = await client.call_tool(f"{prefix}self__audio_speaker__set_volume", {"volume": 200})
    assert bad.is_error
    assert "volume" in bad.content[0].text and "100" in bad.content[0].text
    missing = await client.call_tool(f"{prefix}self__light__set_rgb", {"r": 1})
    assert missing.is_error and "g: is required" in missing.content[0].text

    failed = await client.call_tool(f"{prefix}self__fail", {})
    assert failed.is_error and failed.content[0].text == "the motor is stuck"

    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    slow = await client.call_tool(f"{prefix}self__slow__count", {"steps": 3}, progress_callback=on_progress)
    assert slow.content[0].text == "counted to 3"
    assert seen == [1, 2, 3]

    with pytest.raises(MCPError) as unknown:
        await client.call_tool(f"{prefix}no_such_tool", {})
    assert unknown.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_over_stdio(mode: str) -> None:
    async with Client(stdio_params(), mode=mode, read_timeout_seconds=20) as client:
        await exercise(client, mode)


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_over_stdio_many_devices_prefixed(mode: str) -> None:
    async with Client(
        stdio_params("kitchen", "aa:bb:cc:dd:ee:ff"), mode=mode, read_timeout_seconds=20
    ) as client:
        await exercise(client, mode, prefix="kitchen__")
        names = [t.name for t in (await client.list_tools()).tools]
        assert "aa_bb_cc_dd_ee_ff__self__fail" in names
        assert len(names) == 10
        assert all(len(n) <= 64 for n in names)


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_over_http(http_bridge: HttpBridge, mode: str) -> None:
    async with Client(http_bridge.url, mode=mode, read_timeout_seconds=20) as client:
        await exercise(client, mode)
    assert ("self.audio_speaker.set_volume", {"volume": 200}) not in http_bridge.device.calls


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_sees_device_going_away_as_tool_error(http_bridge: HttpBridge, mode: str) -> None:
    async with Client(http_bridge.url, mode=mode, read_timeout_seconds=20) as client:
        await client.list_tools()
        await http_bridge.device.close()
        http_bridge.bridge.prune_closed()
        result = await client.call_tool("self__get_device_status", {})
        assert result.is_error
        assert "sim-1" in result.content[0].text and "not connected" in result.content[0].text
        assert (await client.list_tools(cache_mode="bypass")).tools == []


async def test_stdio_modern_listen_grants_only_what_the_bridge_has() -> None:
    """2026-07-28 ``subscriptions/listen`` over stdio, served by the SDK's listen handler:
    the acknowledgement grants tool-list changes and device events URIs only, then
    device events and tool changes arrive tagged with the subscription id."""
    import asyncio
    import os

    from bridge_fakes import FakeDevice

    from mcpgen.runtime.bridge import Bridge, StdioServer

    bridge = Bridge()
    device = FakeDevice("sim-1")
    bridge.add_device(device)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = StdioServer(bridge, os.fdopen(in_r, "rb", buffering=0), os.fdopen(out_w, "wb", buffering=0))
    server.drain_timeout = 0.2
    serving = asyncio.ensure_future(server.serve())
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", buffering=0)
    )

    async def next_message() -> dict[str, object]:
        return json.loads(await asyncio.wait_for(reader.readline(), 5))

    uri = "mcpgen://devices/sim-1/events"
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    wanted = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": [uri, "file:///etc/passwd"],
    }
    listen = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": wanted},
    }
    os.write(in_w, json.dumps(listen).encode() + b"\n")
    try:
        ack = await next_message()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        params = ack["params"]
        assert isinstance(params, dict)
        assert params["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": [uri]}
        device.notify("notifications/events/button_pressed", {"count": 1})
        updated = await next_message()
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"] == {"uri": uri, "_meta": {"io.modelcontextprotocol/subscriptionId": 9}}
        device.set_tools(device.tools[:2])
        changed = await next_message()
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"] == {"_meta": {"io.modelcontextprotocol/subscriptionId": 9}}
    finally:
        os.close(in_w)
        await asyncio.wait_for(serving, 10)
        transport.close()
        await bridge.close()
