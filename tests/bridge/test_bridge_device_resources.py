"""The bridge's URIs for device resources (issue 30): reversible, templates kept, never
an events URI; served as the device gave them with one device, prefixed with several, as
tool names are (issue 41 item 6), checked with the official MCP SDK client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from bridge_fakes import FakeDevice
from bridge_testlib import running_http
from mcp import Client

from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.bridge.device_resources import bridge_uri, device_uri
from mcpgen.runtime.bridge.events import events_uri
from mcpgen.runtime.errors import RpcError


def test_device_uris_round_trip() -> None:
    for device_id, uri in [
        ("lamp-1", "lamp://status"),
        ("lamp 1/x", "lamp://pattern/{length}"),
        ("d", "urn:x:y"),
    ]:
        mapped = bridge_uri(device_id, uri)
        assert mapped is not None and mapped.startswith("mcpgen://devices/")
        assert device_uri(mapped) == (device_id, uri)


def test_what_is_not_a_device_resource() -> None:
    assert bridge_uri("d", "no-scheme") is None
    assert device_uri(events_uri("lamp-1")) is None  # the events resource stays the bridge's own
    assert device_uri("mcpgen://devices/") is None
    assert device_uri("file:///etc/passwd") is None


# ------------------------------------------------ URIs as the device gave them (issue 41 item 6)


class ResourceDevice(FakeDevice):
    """A fake device with a lamp's resources, as a runtime.Device serves them: a fixed URI,
    a template, subscriptions and notifications/resources/updated."""

    def __init__(self, device_id: str, body: str = "on") -> None:
        super().__init__(device_id)
        self.body = body
        self.asked: list[tuple[str, str]] = []
        self.listed = 0

    async def list_resources(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
        self.listed += 1
        return [{"uri": "lamp://status", "name": "status", "mimeType": "text/plain"}]

    async def list_resource_templates(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
        self.listed += 1
        return [{"uriTemplate": "lamp://effects/{name}", "name": "effects", "mimeType": "text/plain"}]

    async def request(self, method: str, params: Any, timeout: Any = None) -> Any:
        uri = params["uri"]
        self.asked.append((method, uri))
        if uri != "lamp://status" and not uri.startswith("lamp://effects/"):
            raise RpcError(-32002, f"Resource not found: {uri}")
        if method == "resources/read":
            return {
                "contents": [{"uri": uri, "mimeType": "text/plain", "text": f"{self.device_id}:{self.body}"}]
            }
        return {}


async def _served(bridge: Bridge, devices: list[FakeDevice]) -> AsyncIterator[str]:
    for d in devices:
        bridge.add_device(d)
    async with running_http(bridge) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def test_one_device_serves_its_uris_unchanged_to_the_sdk_client() -> None:
    """With one device (no prefix, as tool names), the official SDK client sees, reads,
    subscribes to and completes the device's own URIs; a URI known in advance reads
    without a list first; the bridge's events URI stays its own."""
    from mcp_types import ResourceTemplateReference

    lamp = ResourceDevice("lamp-1")
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: object) -> None:
        note = getattr(message, "root", message)
        if getattr(note, "method", None) == "notifications/resources/updated":
            await updated.put(str(note.params.uri))  # type: ignore[attr-defined]

    bridge = Bridge(template_schemas={"lamp://effects/{name}": {"name": {"enum": ["breathe", "candle"]}}})
    async for url in _served(bridge, [lamp]):
        async with Client(url, mode="legacy", read_timeout_seconds=20) as client:
            read = await client.read_resource("lamp://status")  # known in advance: no listing
            assert read.contents[0].text == "lamp-1:on" and str(read.contents[0].uri) == "lamp://status"
            assert lamp.listed == 0 and lamp.asked == [("resources/read", "lamp://status")]
            effect = await client.read_resource("lamp://effects/candle")
            assert str(effect.contents[0].uri) == "lamp://effects/candle"
            with pytest.raises(Exception, match="Resource not found"):
                await client.read_resource("lamp://nothing")

        async with Client(url, mode="legacy", read_timeout_seconds=20, message_handler=on_message) as client:
            listed = [(str(r.uri), r.name) for r in (await client.list_resources()).resources]
            assert listed == [
                ("mcpgen://devices/lamp-1/events", "lamp-1 events"),
                ("lamp://status", "status"),
            ]
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            assert templates == ["mcpgen://devices/{device}/events", "lamp://effects/{name}"]
            got = await client.complete(
                ResourceTemplateReference(uri="lamp://effects/{name}"), {"name": "name", "value": "c"}
            )
            assert got.completion.values == ["candle"]

            await client.subscribe_resource("lamp://status")
            assert lamp.asked[-1] == ("resources/subscribe", "lamp://status")
            lamp.notify("notifications/resources/updated", {"uri": "lamp://status"})
            assert await asyncio.wait_for(updated.get(), 10) == "lamp://status"
            await client.unsubscribe_resource("lamp://status")
            assert lamp.asked[-1] == ("resources/unsubscribe", "lamp://status")

            old = await client.read_resource(
                "mcpgen://devices/lamp-1/lamp://status"
            )  # the prefixed form still reads
            assert old.contents[0].text == "lamp-1:on"


async def test_several_devices_prefix_uris_like_tool_names() -> None:
    """With prefixes (several devices), each device's URIs carry its id, reads and
    updates included; a plain URI no longer says which device is meant."""
    a, b = ResourceDevice("a", "A"), ResourceDevice("b", "B")
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: object) -> None:
        note = getattr(message, "root", message)
        if getattr(note, "method", None) == "notifications/resources/updated":
            await updated.put(str(note.params.uri))  # type: ignore[attr-defined]

    async for url in _served(Bridge(prefix_tools=True), [a, b]):
        async with Client(url, mode="legacy", read_timeout_seconds=20, message_handler=on_message) as client:
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            assert "mcpgen://devices/a/lamp://status" in uris and "mcpgen://devices/b/lamp://status" in uris
            assert "lamp://status" not in uris
            read = await client.read_resource("mcpgen://devices/b/lamp://status")
            assert read.contents[0].text == "b:B"
            with pytest.raises(Exception, match="Resource not found"):
                await client.read_resource("lamp://status")
            await client.subscribe_resource("mcpgen://devices/b/lamp://status")
            a.notify("notifications/resources/updated", {"uri": "lamp://status"})  # not subscribed
            b.notify("notifications/resources/updated", {"uri": "lamp://status"})
            assert await asyncio.wait_for(updated.get(), 10) == "mcpgen://devices/b/lamp://status"
            assert updated.empty()


async def test_several_devices_without_prefix_serve_a_shared_uri_once() -> None:
    """--no-prefix-tools with several devices: a URI both offer is plain for the first
    device by id and prefixed for the other (as colliding tool names get a hash); a plain
    read goes to the device that lists it, a template instance to the one whose template
    matches."""

    class Other(ResourceDevice):
        async def list_resources(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
            return [{"uri": "fan://speed", "name": "speed"}, {"uri": "lamp://status", "name": "status"}]

        async def list_resource_templates(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
            return []

        async def request(self, method: str, params: Any, timeout: Any = None) -> Any:
            return {"contents": [{"uri": params["uri"], "text": "fan"}]}

    lamp, fan = ResourceDevice("a"), Other("b")
    async for url in _served(Bridge(prefix_tools=False), [lamp, fan]):
        async with Client(url, mode="legacy", read_timeout_seconds=20) as client:
            uris = [
                str(r.uri) for r in (await client.list_resources()).resources if "/events" not in str(r.uri)
            ]
            assert uris == ["lamp://status", "fan://speed", "mcpgen://devices/b/lamp://status"]
            assert (await client.read_resource("fan://speed")).contents[0].text == "fan"
            assert (await client.read_resource("lamp://status")).contents[0].text == "a:on"
            assert (await client.read_resource("lamp://effects/x")).contents[0].text == "a:on"
            assert (await client.read_resource("mcpgen://devices/b/lamp://status")).contents[0].text == "fan"
            with pytest.raises(Exception, match="Resource not found"):
                await client.read_resource("nope://x")
