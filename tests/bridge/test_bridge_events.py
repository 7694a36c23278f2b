"""Device events (``notifications/events/<name>`` from a device) reach MCP clients as
``notifications/message`` log messages carrying the event as structured data."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
import mcp_types as types
import pytest
from bridge_fakes import FakeDevice
from bridge_testlib import HttpBridge
from mcp import Client
from mcp.server.streamable_http import GET_STREAM_KEY, EventMessage
from mcp_types import JSONRPCNotification
from sdk_harness import RawClient

from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.bridge.event_store import SessionEventStore


def req(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


async def test_event_becomes_a_log_message_with_structured_data() -> None:
    bridge = Bridge(device_ids=["kitchen"])
    async with RawClient(bridge) as client:
        assert client.initialize_result is not None
        assert client.initialize_result["capabilities"]["logging"] == {}
        pushed = client.notifications
        kitchen, hall = FakeDevice("kitchen"), FakeDevice("hall")
        bridge.add_device(kitchen)
        bridge.add_device(hall)  # not selected: its events are not served either
        await client.settle()
        pushed.clear()

        kitchen.notify("notifications/events/button_pressed", {"count": 3, "long": False})
        hall.notify("notifications/events/button_pressed", {"count": 9})
        kitchen.notify("notifications/other", {"x": 1})  # not an event: nothing to forward
        await client.settle()
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
    async with RawClient(bridge) as client:
        pushed = client.notifications
        device = FakeDevice("one")
        bridge.add_device(device)
        await client.settle()
        pushed.clear()

        bad = await client.request(req("logging/setLevel", {"level": "loud"}, id=2))
        assert bad["error"]["code"] == -32602
        ok = await client.request(req("logging/setLevel", {"level": "warning"}, id=3))
        assert ok == {"jsonrpc": "2.0", "id": 3, "result": {}}
        device.notify("notifications/events/motion", {"zone": 1})
        await client.settle()
        assert pushed == []

        await client.request(req("logging/setLevel", {"level": "debug"}, id=4))
        device.notify("notifications/events/motion", {"zone": 2})
        await client.settle()
        assert [m["params"]["data"]["arguments"] for m in pushed] == [{"zone": 2}]


async def test_removed_device_events_are_not_forwarded() -> None:
    bridge = Bridge()
    async with RawClient(bridge) as client:
        device = FakeDevice("one")
        bridge.add_device(device)
        bridge.remove_device("one")
        await client.settle()
        client.notifications.clear()
        device.notify("notifications/events/motion", {"zone": 1})
        await client.settle()
        assert client.notifications == []


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
        # the SDK holds initialize to the spec: clientInfo is required
        info = {"name": "t", "version": "0"}
        init = req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info})
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


# ---------------------------------------------------------------- events as resources

EVENTS_URI = "mcpgen://devices/aa%3Abb/events"


async def test_events_resource_list_read_and_subscribe() -> None:
    bridge = Bridge()
    async with RawClient(bridge) as client:
        pushed = client.notifications
        device = FakeDevice("aa:bb")
        bridge.add_device(device)
        listed = await client.request(req("resources/list", id=2))
        assert [r["uri"] for r in listed["result"]["resources"]] == [EVENTS_URI]
        sub = await client.request(req("resources/subscribe", {"uri": EVENTS_URI}, id=3))
        assert sub == {"jsonrpc": "2.0", "id": 3, "result": {}}
        # (a URI with a scheme is the one device's to answer: test_bridge_device_resources)
        bad = await client.request(req("resources/subscribe", {"uri": "etc/passwd"}, id=4))
        assert bad["error"]["code"] == -32602
        assert "not a device events URI" not in bad["error"]["message"]  # device resources count too
        assert "is not a resource that can be subscribed to" in bad["error"]["message"]
        await client.settle()
        pushed.clear()

        for n in range(40):  # more than the 32 kept
            device.notify("notifications/events/tick", {"n": n})
        await client.wait_for(80)
        updated = [m for m in pushed if m["method"] == "notifications/resources/updated"]
        assert len(updated) == 40 and updated[0]["params"] == {"uri": EVENTS_URI}
        read = await client.request(req("resources/read", {"uri": EVENTS_URI}, id=5))
        content = read["result"]["contents"][0]
        assert content["uri"] == EVENTS_URI and content["mimeType"] == "application/json"
        body = json.loads(content["text"])
        assert body["device"] == "aa:bb"
        assert [e["arguments"]["n"] for e in body["events"]] == list(range(8, 40))
        assert {e["event"] for e in body["events"]} == {"tick"}

        await client.request(req("resources/unsubscribe", {"uri": EVENTS_URI}, id=6))
        pushed.clear()
        device.notify("notifications/events/tick", {"n": 99})
        await client.settle()
        assert [m["method"] for m in pushed] == ["notifications/message"]

        # an unknown device's events: -32002, as resources/read answers (it answered {})
        unknown = await client.request(req("resources/subscribe", {"uri": "mcpgen://devices/x/events"}, id=9))
        assert unknown["error"]["code"] == -32002
        assert "no device 'x' is connected" in unknown["error"]["message"]

        bridge.remove_device("aa:bb")
        gone = await client.request(req("resources/read", {"uri": EVENTS_URI}, id=7))
        assert gone["error"]["code"] == -32002


async def test_modern_listen_delivers_resource_updates_for_events(http_bridge: HttpBridge) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    uri = "mcpgen://devices/sim-1/events"
    wanted = {"resourceSubscriptions": [uri, "https://elsewhere.example/x"]}
    listen = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": wanted},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
    }
    async with (
        httpx.AsyncClient(timeout=10) as c,
        c.stream("POST", http_bridge.url, content=json.dumps(listen), headers=headers) as r,
    ):
        messages = _sse_events(r)
        _, ack = await asyncio.wait_for(messages.__anext__(), 5)
        assert ack["params"]["notifications"] == {"resourceSubscriptions": [uri]}
        http_bridge.device.notify("notifications/events/button_pressed", {"count": 2})
        _, updated = await asyncio.wait_for(messages.__anext__(), 5)
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == uri
        assert updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
        read = {"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"_meta": meta, "uri": uri}}
        rh = {**headers, "Mcp-Method": "resources/read", "Mcp-Name": uri}
        got = await c.post(http_bridge.url, content=json.dumps(read), headers=rh)
        assert got.status_code == 200
        events = json.loads(got.json()["result"]["contents"][0]["text"])["events"]
        assert [(e["event"], e["arguments"]) for e in events] == [("button_pressed", {"count": 2})]


async def test_sdk_client_lists_and_reads_the_events_resource(http_bridge: HttpBridge) -> None:
    http_bridge.device.notify("notifications/events/button_pressed", {"count": 5})
    for mode in ("legacy", "auto"):
        async with Client(http_bridge.url, mode=mode, read_timeout_seconds=20) as client:
            listed = await client.list_resources()
            uris = [str(r.uri) for r in listed.resources]
            assert uris == ["mcpgen://devices/sim-1/events"], mode
            read = await client.read_resource(uris[0])
            body = json.loads(read.contents[0].text)
            assert body["events"][-1]["arguments"] == {"count": 5}, mode


async def test_event_store_replays_after_an_id_and_ignores_foreign_ones() -> None:
    store = SessionEventStore(get_history=2)
    ids = [await store.store_event(GET_STREAM_KEY, _note(n)) for n in range(3)]
    assert ids == ["1", "2", "3"]  # consecutive on the GET stream; the oldest (1) is dropped
    post = await store.store_event("7", _note(9))
    assert post == "r1"  # a POST stream's ids never collide with the GET stream's

    async def replay(last: str) -> tuple[str | None, list[str]]:
        got: list[str] = []

        async def collect(event: EventMessage) -> None:
            got.append(str(event.event_id))

        return await store.replay_events_after(last, collect), got

    assert await replay("2") == (GET_STREAM_KEY, ["3"])
    assert await replay("0") == (GET_STREAM_KEY, ["2", "3"])  # older than kept: all that is kept
    assert await replay("r1") == ("7", [])
    for foreign in ["", "²", "9" * 5000, "abc", "-1", "3", str(10**6), "r99", "r" + "9" * 50]:
        # another session's or a forged id: nothing replayed, the GET stream resumes live
        assert await replay(foreign) == (GET_STREAM_KEY, []), foreign


def _note(n: int) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"n": n})


async def test_subscriptions_per_session_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpgen.runtime.bridge import core

    monkeypatch.setattr(core, "MAX_SUBSCRIPTIONS", 2)
    bridge = Bridge()
    async with RawClient(bridge) as client:
        for n in range(3):
            bridge.add_device(FakeDevice(f"d{n}"))
        for n in range(2):
            uri = f"mcpgen://devices/d{n}/events"
            ok = await client.request(req("resources/subscribe", {"uri": uri}, id=n + 1))
            assert ok["result"] == {}
        full = await client.request(req("resources/subscribe", {"uri": "mcpgen://devices/d2/events"}, id=9))
        assert full["error"]["code"] == -32602 and "at most 2 subscriptions" in full["error"]["message"]


async def test_a_device_refusing_a_subscription_is_quoted_without_the_code_again() -> None:
    from mcpgen.runtime.errors import RpcError

    class Refusing(FakeDevice):
        async def request(self, method: str, params: Any, timeout: Any = None) -> Any:
            raise RpcError(-32602, "Invalid params: resource icon does not support subscribe")

    bridge = Bridge()
    async with RawClient(bridge) as client:
        bridge.add_device(Refusing("lamp"))
        uri = "mcpgen://devices/lamp/lamp://icon.png"
        answer = await client.request(req("resources/subscribe", {"uri": uri}, id=2))
    assert answer["error"] == {
        "code": -32602,
        "message": "Invalid params: resource icon does not support subscribe",
    }  # not "[-32602] Invalid params: ..."
