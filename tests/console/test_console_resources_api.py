"""The console's resource API over HTTP, with a scripted device (the browser test drives
the real lamp simulator): lists, reads, template expansion, device errors as data, bad
requests, update notifications on the live feed, and subscriptions renewed when a device
reconnects."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2 as httpx
import pytest
from console_testlib import served

from mcpgen.runtime import RpcError
from mcpgen.runtime.console import Console

TOKEN = "t0ken"
STATUS = {"uri": "fake://status", "name": "status", "mimeType": "application/json"}
ITEM = {"uriTemplate": "fake://items/{name}", "name": "item", "mimeType": "text/plain"}


class ResourceDevice:
    """A device handle with ``request``: one subscribable text resource, one template."""

    def __init__(self, device_id: str = "fake-1", resources: bool = True) -> None:
        self.device_id = device_id
        self.tools: list[Any] = []
        self.closed = False
        self.resources = resources
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.callbacks: list[Any] = []

    def on_notification(self, callback: Any) -> Any:
        self.callbacks.append(callback)
        return lambda: None

    async def call_raw(self, name: str, arguments: Any, *, timeout: float | None = None) -> Any:
        raise AssertionError("no tool calls here")

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        params = params or {}
        self.requests.append((method, params))
        if not self.resources:
            raise RpcError(-32601, "Method not found")
        if method == "resources/list":
            return {"resources": [STATUS]}
        if method == "resources/templates/list":
            return {"resourceTemplates": [ITEM]}
        uri = params.get("uri")
        if method == "resources/read" and uri == "fake://status":
            return {"contents": [{"uri": uri, "mimeType": "application/json", "text": '{"on":true}'}]}
        if method == "resources/read" and str(uri).startswith("fake://items/"):
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"item at {uri}"}]}
        if method in ("resources/subscribe", "resources/unsubscribe") and uri == "fake://status":
            return {}
        if method == "resources/subscribe":
            raise RpcError(-32602, f"resource {uri} does not support subscribe")
        raise RpcError(-32002, "Resource not found", {"uri": uri})


@pytest.fixture
async def console_url() -> Any:
    console = Console()
    async with served(console, TOKEN) as port:
        yield console, f"http://127.0.0.1:{port}/"


def client() -> httpx.AsyncClient:
    return httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)


async def test_list_read_expand_and_device_errors(console_url: Any) -> None:
    console, url = console_url
    device = ResourceDevice()
    console.add_device(device, "custom")
    async with client() as c:
        listed = (await c.get(f"{url}api/resources", params={"id": "fake-1"})).json()
        assert listed == {"resources": [STATUS], "templates": [ITEM], "subscriptions": []}

        read = (await c.post(f"{url}api/read", json={"device": "fake-1", "uri": "fake://status"})).json()
        assert read["contents"][0]["text"] == '{"on":true}'
        body = {"device": "fake-1", "template": ITEM["uriTemplate"], "values": {"name": "a b/c"}}
        expanded = (await c.post(f"{url}api/read", json=body)).json()
        assert expanded["uri"] == "fake://items/a%20b%2Fc"  # RFC 6570: a value never adds a path part
        assert device.requests[-1] == ("resources/read", {"uri": "fake://items/a%20b%2Fc"})

        missing = await c.post(f"{url}api/read", json={**body, "values": {"name": ""}})
        assert missing.status_code == 400 and "fill in name" in missing.json()["error"]["message"]
        unknown = (await c.post(f"{url}api/read", json={"device": "fake-1", "uri": "fake://nothing"})).json()
        assert unknown["error"]["code"] == -32002 and unknown["error"]["type"] == "RpcError"
        neither = await c.post(f"{url}api/read", json={"device": "fake-1"})
        assert neither.status_code == 400
        no_device = await c.post(f"{url}api/read", json={"device": "nobody", "uri": "fake://status"})
        assert no_device.status_code == 404
        no_flag = await c.post(f"{url}api/subscribe", json={"device": "fake-1", "uri": "fake://status"})
        assert no_flag.status_code == 400
    async with httpx.AsyncClient(timeout=10) as stranger:
        anonymous = await stranger.get(f"{url}api/resources", params={"id": "fake-1"})
        assert anonymous.status_code == 401


async def test_a_device_without_resources_lists_nothing_and_no_error(console_url: Any) -> None:
    console, url = console_url
    console.add_device(ResourceDevice("plain", resources=False), "custom")
    async with client() as c:
        listed = (await c.get(f"{url}api/resources", params={"id": "plain"})).json()
        assert listed == {"resources": [], "templates": [], "subscriptions": []}


async def test_watch_updates_on_the_feed_and_renewed_on_reconnect(console_url: Any) -> None:
    console, url = console_url
    first = ResourceDevice()
    console.add_device(first, "custom")
    async with client() as c:
        icon = {"device": "fake-1", "uri": "fake://x", "subscribe": True}
        refused = (await c.post(f"{url}api/subscribe", json=icon)).json()
        assert refused["error"]["code"] == -32602 and refused["subscriptions"] == []
        watched = (
            await c.post(
                f"{url}api/subscribe", json={"device": "fake-1", "uri": "fake://status", "subscribe": True}
            )
        ).json()
        assert watched == {"uri": "fake://status", "subscriptions": ["fake://status"]}
        assert console.detail("fake-1")["subscriptions"] == ["fake://status"]

        async with console.subscribe() as feed:
            for callback in first.callbacks:
                callback("notifications/resources/updated", {"uri": "fake://status"})
            message = await asyncio.wait_for(feed.get(), 5)
            assert message is not None and message["type"] == "resource"
            assert (message["id"], message["uri"]) == ("fake-1", "fake://status")

        second = ResourceDevice()  # the same device id, a new session
        console.add_device(second, "custom")
        async with asyncio.timeout(5):
            while ("resources/subscribe", {"uri": "fake://status"}) not in second.requests:
                await asyncio.sleep(0.01)

        stopped = (
            await c.post(
                f"{url}api/subscribe", json={"device": "fake-1", "uri": "fake://status", "subscribe": False}
            )
        ).json()
        assert stopped["subscriptions"] == [] and second.requests[-1][0] == "resources/unsubscribe"


BIG_RESOURCE_DEVICE = r"""
import base64, json, sys
for line in sys.stdin:
    msg = json.loads(line)
    rid, method = msg.get("id"), msg.get("method")
    if rid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}, "resources": {}},
                  "serverInfo": {"name": "big", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": []}
    elif method == "resources/read":
        size = int(msg["params"]["uri"].rsplit("/", 1)[1])
        blob = base64.b64encode(b"\x07" * size).decode()
        item = {"uri": msg["params"]["uri"], "mimeType": "application/octet-stream", "blob": blob}
        result = {"contents": [item]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    sys.stdout.flush()
"""


async def test_a_2_mib_resource_read_through_the_console_keeps_a_stdio_device(tmp_path: Any) -> None:
    """Regression (issue 40): reading a 2 MiB resource through the console killed a stdio
    device: its reply was longer than the link's max_frame (1 MiB), and the transport
    closed the link and killed the process. The reply is now skipped (never held whole),
    the read answers with an error that says why, and the device serves the next read."""
    import sys

    from mcpgen.runtime import connect_process
    from mcpgen.runtime.console import resources as console_resources

    script = tmp_path / "big_device.py"
    script.write_text(BIG_RESOURCE_DEVICE, encoding="utf-8")
    device = await connect_process([sys.executable, str(script)], device_id="big-1", stderr="devnull")
    console = Console(call_timeout=10.0)
    try:
        console.add_device(device, "stdio")
        entry = console.entries["big-1"]
        big = await console_resources.read(entry, "big://blob/2097152", 10.0)
        assert big["error"]["type"] == "ProtocolError"
        assert "longer than max_frame=1048576 bytes and was dropped" in big["error"]["message"]
        assert not device.closed and entry.connected
        small = await console_resources.read(entry, "big://blob/3000", 10.0)
        assert "error" not in small and len(small["contents"][0]["blob"]) == 4000
    finally:
        await console.close()
        await device.close()
