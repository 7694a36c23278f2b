"""Device events (``notifications/events/<name>`` from a device) reach MCP clients as
``notifications/message`` log messages carrying the event as structured data."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
import mcp_types as types
from bridge_fakes import FakeDevice
from bridge_testlib import HttpBridge
from mcp import Client

from mcpgen.runtime.bridge import Bridge


def req(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


async def _legacy_session(bridge: Bridge) -> tuple[Any, list[dict[str, Any]]]:
    pushed: list[dict[str, Any]] = []

    async def push(message: dict[str, Any]) -> None:
        pushed.append(message)

    session = bridge.new_session("stdio", push=push)
    init = req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    reply = await bridge.handle(session, init)
    assert reply.message is not None and reply.message["result"]["capabilities"]["logging"] == {}
    return session, pushed


async def test_event_becomes_a_log_message_with_structured_data() -> None:
    bridge = Bridge(device_ids=["kitchen"])
    session, pushed = await _legacy_session(bridge)
    kitchen, hall = FakeDevice("kitchen"), FakeDevice("hall")
    bridge.add_device(kitchen)
    bridge.add_device(hall)  # not selected: its events are not served either
    await asyncio.sleep(0)
    pushed.clear()

    kitchen.notify("notifications/events/button_pressed", {"count": 3, "long": False})
    hall.notify("notifications/events/button_pressed", {"count": 9})
    kitchen.notify("notifications/other", {"x": 1})  # not an event: nothing to forward
    await asyncio.sleep(0)
    assert pushed == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {
                "level": "info",
                "logger": "mcpgen.device.kitchen",
                "data": {
                    "event": "button_pressed",
                    "device": "kitchen",
                    "arguments": {"count": 3, "long": False},
                },
            },
        }
    ]


async def test_set_level_above_info_silences_events_and_bad_levels_are_refused() -> None:
    bridge = Bridge()
    session, pushed = await _legacy_session(bridge)
    device = FakeDevice("one")
    bridge.add_device(device)
    await asyncio.sleep(0)
    pushed.clear()

    bad = await bridge.handle(session, req("logging/setLevel", {"level": "loud"}, id=2))
    assert bad.message is not None and bad.message["error"]["code"] == -32602
    assert "warning" in bad.message["error"]["message"]
    ok = await bridge.handle(session, req("logging/setLevel", {"level": "warning"}, id=3))
    assert ok.message == {"jsonrpc": "2.0", "id": 3, "result": {}}
    device.notify("notifications/events/motion", {"zone": 1})
    await asyncio.sleep(0)
    assert pushed == []

    await bridge.handle(session, req("logging/setLevel", {"level": "debug"}, id=4))
    device.notify("notifications/events/motion", {"zone": 2})
    await asyncio.sleep(0)
    assert [m["params"]["data"]["arguments"] for m in pushed] == [{"zone": 2}]


async def test_removed_device_events_are_not_forwarded() -> None:
    bridge = Bridge()
    _, pushed = await _legacy_session(bridge)
    device = FakeDevice("one")
    bridge.add_device(device)
    bridge.remove_device("one")
    await asyncio.sleep(0)
    pushed.clear()
    device.notify("notifications/events/motion", {"zone": 1})
    await asyncio.sleep(0)
    assert pushed == []


async def test_sdk_client_over_http_receives_device_events(http_bridge: HttpBridge) -> None:
    received: asyncio.Queue[types.LoggingMessageNotificationParams] = asyncio.Queue()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        await received.put(params)

    client = Client(http_bridge.url, mode="legacy", read_timeout_seconds=20, logging_callback=on_log)
    async with client:
        await client.list_tools()
        # The SDK opens the session's GET stream in the background; send until it is there.
        got = None
        for attempt in range(50):
            http_bridge.device.notify("notifications/events/button_pressed", {"count": attempt})
            try:
                got = await asyncio.wait_for(received.get(), 0.2)
                break
            except TimeoutError:
                continue
        assert got is not None, "no event arrived on the GET stream"
        assert got.level == "info" and got.logger == "mcpgen.device.sim-1"
        assert got.data["event"] == "button_pressed" and got.data["device"] == "sim-1"
        assert isinstance(got.data["arguments"]["count"], int)


async def _sse_events(response: httpx.Response) -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
    event_id: str | None = None
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            yield event_id, json.loads(line[5:].strip())
            event_id = None


async def test_get_stream_resumes_after_last_event_id(http_bridge: HttpBridge) -> None:
    url, device = http_bridge.url, http_bridge.device
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx.AsyncClient(timeout=10) as c:
        init = req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
        sid = (await c.post(url, content=json.dumps(init), headers=headers)).headers["mcp-session-id"]
        get = {"Accept": "text/event-stream", "Mcp-Session-Id": sid}
        async with c.stream("GET", url, headers=get) as stream:
            events = _sse_events(stream)
            await asyncio.sleep(0.1)
            device.notify("notifications/events/tick", {"n": 1})
            first_id, first = await asyncio.wait_for(events.__anext__(), 5)
            assert first_id is not None and first["params"]["data"]["arguments"] == {"n": 1}
        await asyncio.sleep(0.1)
        device.notify("notifications/events/tick", {"n": 2})  # while no stream is open
        device.notify("notifications/events/tick", {"n": 3})
        await asyncio.sleep(0.1)
        async with c.stream("GET", url, headers={**get, "Last-Event-ID": first_id}) as stream:
            events = _sse_events(stream)
            missed = [await asyncio.wait_for(events.__anext__(), 5) for _ in range(2)]
            assert [m["params"]["data"]["arguments"]["n"] for _, m in missed] == [2, 3]
            assert [int(i or 0) for i, _ in missed] == [int(first_id) + 1, int(first_id) + 2]
            device.notify("notifications/events/tick", {"n": 4})  # and live again after the replay
            live_id, live = await asyncio.wait_for(events.__anext__(), 5)
            assert live["params"]["data"]["arguments"] == {"n": 4} and int(live_id or 0) == int(first_id) + 3
        async with c.stream("GET", url, headers=get) as stream:  # no Last-Event-ID: nothing replayed
            events = _sse_events(stream)
            await asyncio.sleep(0.1)
            device.notify("notifications/events/tick", {"n": 5})
            _, only = await asyncio.wait_for(events.__anext__(), 5)
            assert only["params"]["data"]["arguments"] == {"n": 5}
