"""Raw Streamable HTTP: every header and status rule, checked with plain HTTP requests."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
from bridge_fakes import FakeDevice
from bridge_testlib import HttpBridge, running_http

from mcpgen.runtime.bridge import Bridge

ACCEPT = "application/json, text/event-stream"
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
}


def rpc(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return msg


def init_msg(version: str = "2025-06-18") -> dict[str, Any]:
    return rpc(
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    )


@contextlib.asynccontextmanager
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def post(client: httpx.AsyncClient, url: str, body: Any, **headers: str) -> httpx.Response:
    h = {"Accept": ACCEPT, "Content-Type": "application/json"}
    h.update({k.replace("_", "-"): v for k, v in headers.items()})
    return await client.post(url, content=json.dumps(body), headers=h)


async def open_session(client: httpx.AsyncClient, url: str, version: str = "2025-06-18") -> str:
    r = await post(client, url, init_msg(version))
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    r = await post(client, url, rpc("notifications/initialized", id=None), Mcp_Session_Id=sid)
    assert r.status_code == 202
    return sid


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    h = {"MCP_Protocol_Version": MODERN, "Mcp_Method": method}
    if name is not None:
        h["Mcp_Name"] = name
    return h


async def sse_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            yield json.loads(line[5:].strip())


# ---------------------------------------------------------------- legacy sessions


async def test_initialize_issues_session_and_negotiates_version(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        for asked, answered in [
            ("2025-06-18", "2025-06-18"),
            ("2024-11-05", "2024-11-05"),
            ("2025-03-26", "2025-03-26"),
            ("2025-11-25", "2025-11-25"),
            ("2099-01-01", "2025-11-25"),  # unknown: the server answers its latest
        ]:
            r = await post(c, http_bridge.url, init_msg(asked))
            assert r.status_code == 200
            assert r.headers["content-type"] == "application/json"
            body = r.json()
            assert body["result"]["protocolVersion"] == answered
            assert body["result"]["capabilities"]["tools"] == {"listChanged": True}
            sid = r.headers["mcp-session-id"]
            assert sid and all(0x21 <= ord(ch) <= 0x7E for ch in sid)


async def test_accept_header_must_list_json_and_sse(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        for accept in ["application/json", "text/event-stream", "text/html"]:
            r = await c.post(
                http_bridge.url,
                content=json.dumps(init_msg()),
                headers={"Accept": accept, "Content-Type": "application/json"},
            )
            assert r.status_code == 406, accept
        r = await c.post(
            http_bridge.url,
            content=json.dumps(init_msg()),
            headers={"Accept": ACCEPT, "Content-Type": "text/plain"},
        )
        assert r.status_code == 415


async def test_session_id_required_and_must_be_known(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        await open_session(c, http_bridge.url)
        r = await post(c, http_bridge.url, rpc("tools/list", {}))
        assert r.status_code == 400
        r = await post(c, http_bridge.url, rpc("tools/list", {}), Mcp_Session_Id="no-such-session")
        assert r.status_code == 404


async def test_notifications_and_responses_get_202_without_body(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        sid = await open_session(c, http_bridge.url)
        r = await post(
            c, http_bridge.url, rpc("notifications/roots/list_changed", id=None), Mcp_Session_Id=sid
        )
        assert r.status_code == 202 and r.content == b""
        r = await post(c, http_bridge.url, {"jsonrpc": "2.0", "id": 7, "result": {}}, Mcp_Session_Id=sid)
        assert r.status_code == 202 and r.content == b""


async def test_protocol_version_header_checked(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        sid = await open_session(c, http_bridge.url, "2025-06-18")
        ok = await post(
            c, http_bridge.url, rpc("tools/list", {}), Mcp_Session_Id=sid, MCP_Protocol_Version="2025-06-18"
        )
        assert ok.status_code == 200 and len(ok.json()["result"]["tools"]) == 5
        # absent header: the spec says assume 2025-03-26-style clients, so it is served
        ok = await post(c, http_bridge.url, rpc("tools/list", {}), Mcp_Session_Id=sid)
        assert ok.status_code == 200
        for bad in ["1999-01-01", "2025-11-26"]:
            r = await post(
                c, http_bridge.url, rpc("tools/list", {}), Mcp_Session_Id=sid, MCP_Protocol_Version=bad
            )
            assert r.status_code == 400, bad
        # another supported version is served, in the session's own version (issue 31 item 8)
        ok = await post(
            c, http_bridge.url, rpc("tools/list", {}), Mcp_Session_Id=sid, MCP_Protocol_Version="2025-11-25"
        )
        assert ok.status_code == 200 and len(ok.json()["result"]["tools"]) == 5


async def test_delete_terminates_session(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        sid = await open_session(c, http_bridge.url)
        r = await c.delete(http_bridge.url, headers={"Mcp-Session-Id": sid})
        assert r.status_code == 200
        r = await post(c, http_bridge.url, rpc("tools/list", {}), Mcp_Session_Id=sid)
        assert r.status_code == 404
        r = await c.delete(http_bridge.url, headers={"Mcp-Session-Id": sid})
        assert r.status_code == 404
        r = await c.delete(http_bridge.url)
        assert r.status_code == 400


async def test_other_methods_and_paths(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        r = await c.put(http_bridge.url, content=b"{}")
        assert r.status_code == 405 and "POST" in r.headers["allow"]
        r = await c.get(http_bridge.url, headers={"Accept": "text/event-stream"})
        assert r.status_code == 405  # no session: nothing to stream
        r = await c.get(
            http_bridge.url, headers={"Accept": "text/event-stream", "MCP-Protocol-Version": MODERN}
        )
        assert r.status_code == 405
        r = await c.post(http_bridge.url.replace("/mcp", "/other"), content=b"{}")
        assert r.status_code == 404


async def test_parse_error_and_invalid_message(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        r = await c.post(
            http_bridge.url,
            content=b"{not json",
            headers={"Accept": ACCEPT, "Content-Type": "application/json"},
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700
        r = await post(c, http_bridge.url, "just a string")
        assert r.status_code == 400 and r.json()["error"]["code"] == -32600


async def test_origin_validation() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, allowed_origins=["https://app.example"]) as port, http_client() as c:
        url = f"http://127.0.0.1:{port}/mcp"
        # Issue 18: any localhost port used to count as local; a page on another port is
        # another origin (another program), so only the bridge's own origin and the
        # configured ones pass.
        for origin in [
            "https://evil.example",
            "http://localhost:3000",
            f"http://127.0.0.1:{port + 1}",
            "http://127.0.0.1",
            "null",
            f"https://127.0.0.1:{port}",
        ]:
            r = await post(c, url, init_msg(), Origin=origin)
            assert r.status_code == 403, origin
            assert r.json()["error"]["code"] == -32600 and r.json()["id"] is None
        for origin in [f"http://127.0.0.1:{port}", "https://app.example", "HTTPS://APP.example/"]:
            r = await post(c, url, init_msg(), Origin=origin)
            assert r.status_code == 200, origin
        r = await post(c, url, init_msg())  # no Origin: not a browser
        assert r.status_code == 200


async def test_client_bearer_token() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, client_token="s3cret") as port, http_client() as c:
        url = f"http://127.0.0.1:{port}/mcp"
        r = await post(c, url, init_msg())
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        r = await post(c, url, init_msg(), Authorization="Bearer s3cret")
        assert r.status_code == 200


async def test_batches_only_in_2025_03_26(http_bridge: HttpBridge) -> None:
    batch = [
        rpc("tools/list", {}, id=1),
        rpc("tools/call", {"name": "self__light__set_rgb", "arguments": {"r": 1, "g": 2, "b": 3}}, id=2),
        rpc("notifications/roots/list_changed", id=None),
    ]
    async with http_client() as c:
        sid = await open_session(c, http_bridge.url, "2025-03-26")
        r = await post(c, http_bridge.url, batch, Mcp_Session_Id=sid)
        assert r.status_code == 200
        replies = {m["id"]: m for m in r.json()}
        assert set(replies) == {1, 2}
        assert replies[2]["result"]["content"][0]["text"] == "rgb 1,2,3"
        only_notes = [rpc("notifications/roots/list_changed", id=None)]
        r = await post(c, http_bridge.url, only_notes, Mcp_Session_Id=sid)
        assert r.status_code == 202
        sid = await open_session(c, http_bridge.url, "2025-06-18")
        r = await post(c, http_bridge.url, batch, Mcp_Session_Id=sid)
        assert r.status_code == 400


async def test_get_stream_delivers_tools_list_changed(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        sid = await open_session(c, http_bridge.url)
        r = await c.get(http_bridge.url, headers={"Accept": "application/json", "Mcp-Session-Id": sid})
        assert r.status_code == 406
        r = await c.get(http_bridge.url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": "nope"})
        assert r.status_code == 404
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
        async with c.stream("GET", http_bridge.url, headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            await asyncio.sleep(0.1)
            http_bridge.bridge.add_device(FakeDevice("sim-2"))
            messages = sse_messages(stream)
            first = await asyncio.wait_for(messages.__anext__(), 5)
            assert first == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            second = await c.get(http_bridge.url, headers=headers)
            assert second.status_code == 409


async def test_legacy_cancellation_notification_cancels_device_call(http_bridge: HttpBridge) -> None:
    http_bridge.device.step = 0.2
    async with http_client() as c:
        sid = await open_session(c, http_bridge.url)
        call = asyncio.ensure_future(
            post(
                c,
                http_bridge.url,
                rpc("tools/call", {"name": "self__slow__count", "arguments": {"steps": 50}}, id=9),
                Mcp_Session_Id=sid,
            )
        )
        await asyncio.sleep(0.3)
        note = rpc("notifications/cancelled", {"requestId": 9, "reason": "user"}, id=None)
        r = await post(c, http_bridge.url, note, Mcp_Session_Id=sid)
        assert r.status_code == 202
        answer = await asyncio.wait_for(call, 5)
        assert "result" not in answer.json()
        assert http_bridge.device.cancelled == ["self.slow.count"]


# ---------------------------------------------------------------- stateless 2026-07-28


async def test_modern_discover(http_bridge: HttpBridge) -> None:
    async with http_client() as c:
        r = await post(
            c,
            http_bridge.url,
            rpc("server/discover", {"_meta": MODERN_META}),
            **modern_headers("server/discover"),
        )
        assert r.status_code == 200
        result = r.json()["result"]
        assert result["supportedVersions"] == [MODERN]
        assert result["resultType"] == "complete"
        assert result["capabilities"]["tools"] == {"listChanged": True}
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpgen-bridge"
        assert "mcp-session-id" not in r.headers
        r = await post(
            c, http_bridge.url, rpc("tools/list", {"_meta": MODERN_META}), **modern_headers("tools/list")
        )
        result = r.json()["result"]
        assert result["cacheScope"] in ("private", "public") and isinstance(result["ttlMs"], int)
        assert len(result["tools"]) == 5


async def test_modern_header_rules(http_bridge: HttpBridge) -> None:
    url = http_bridge.url
    call = rpc("tools/call", {"name": "self__fail", "arguments": {}, "_meta": MODERN_META})
    async with http_client() as c:
        r = await post(c, url, call, Mcp_Method="tools/call", Mcp_Name="self__fail")
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # no MCP-Protocol-Version
        r = await post(
            c, url, call, MCP_Protocol_Version="2025-11-25", Mcp_Method="tools/call", Mcp_Name="self__fail"
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # header != _meta
        r = await post(c, url, call, MCP_Protocol_Version=MODERN, Mcp_Name="self__fail")
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # no Mcp-Method
        r = await post(c, url, call, **modern_headers("tools/list", "self__fail"))
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # wrong Mcp-Method
        r = await post(c, url, call, **modern_headers("tools/call"))
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # no Mcp-Name
        r = await post(c, url, call, **modern_headers("tools/call", "other"))
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020  # wrong Mcp-Name
        encoded = "=?base64?" + base64.b64encode(b"self__fail").decode() + "?="
        r = await post(c, url, call, **modern_headers("tools/call", encoded))
        assert r.status_code == 200 and r.json()["result"]["isError"] is True
        assert r.json()["result"]["resultType"] == "complete"


async def test_modern_version_and_meta_errors(http_bridge: HttpBridge) -> None:
    url = http_bridge.url
    async with http_client() as c:
        meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        r = await post(
            c,
            url,
            rpc("tools/list", {"_meta": meta}),
            MCP_Protocol_Version="2099-01-01",
            Mcp_Method="tools/list",
        )
        assert r.status_code == 400
        err = r.json()["error"]
        assert err["code"] == -32022
        assert err["data"]["requested"] == "2099-01-01" and MODERN in err["data"]["supported"]
        no_caps = {"io.modelcontextprotocol/protocolVersion": MODERN}
        r = await post(c, url, rpc("tools/list", {"_meta": no_caps}), **modern_headers("tools/list"))
        assert r.status_code == 400 and r.json()["error"]["code"] == -32602
        # (resources/list served devices' events since they became resources; prompts are not served)
        r = await post(c, url, rpc("prompts/list", {"_meta": MODERN_META}), **modern_headers("prompts/list"))
        assert r.status_code == 404 and r.json()["error"]["code"] == -32601
        r = await post(c, url, rpc("ping", {"_meta": MODERN_META}), **modern_headers("ping"))
        assert r.status_code == 404  # ping is gone in 2026-07-28


async def test_modern_progress_streams_sse(http_bridge: HttpBridge) -> None:
    meta = {**MODERN_META, "progressToken": "tok-1"}
    call = rpc("tools/call", {"name": "self__slow__count", "arguments": {"steps": 3}, "_meta": meta}, id="c1")
    async with http_client() as c:
        h = {
            "Accept": ACCEPT,
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "self__slow__count",
        }
        async with c.stream("POST", http_bridge.url, content=json.dumps(call), headers=h) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            assert r.headers["x-accel-buffering"] == "no"
            got = [m async for m in sse_messages(r)]
    progress = [m["params"] for m in got if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert all(p["progressToken"] == "tok-1" for p in progress)
    assert got[-1]["id"] == "c1" and got[-1]["result"]["content"][0]["text"] == "counted to 3"


async def test_modern_disconnect_cancels_the_call(http_bridge: HttpBridge) -> None:
    http_bridge.device.step = 0.2
    call = rpc("tools/call", {"name": "self__slow__count", "arguments": {"steps": 50}, "_meta": MODERN_META})
    async with http_client() as c:
        task = asyncio.ensure_future(
            post(c, http_bridge.url, call, **modern_headers("tools/call", "self__slow__count"))
        )
        await asyncio.sleep(0.4)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    for _ in range(50):
        if http_bridge.device.cancelled:
            break
        await asyncio.sleep(0.05)
    assert http_bridge.device.cancelled == ["self.slow.count"]


async def test_modern_subscriptions_listen(http_bridge: HttpBridge) -> None:
    params = {"_meta": MODERN_META, "notifications": {"toolsListChanged": True, "promptsListChanged": True}}
    listen = rpc("subscriptions/listen", params, id=42)
    h = {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    async with (
        http_client() as c,
        c.stream("POST", http_bridge.url, content=json.dumps(listen), headers=h) as r,
    ):
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        messages = sse_messages(r)
        ack = await asyncio.wait_for(messages.__anext__(), 5)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 42
        assert ack["params"]["notifications"] == {"toolsListChanged": True}  # prompts: not offered
        http_bridge.bridge.add_device(FakeDevice("sim-2"))
        changed = await asyncio.wait_for(messages.__anext__(), 5)
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 42
