"""Handshake-era HTTP sessions on the SDK's session manager: what the bridge's guard
adds in front of it (answer format, session cap, per-session state, cancellation)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2 as httpx
from bridge_fakes import FakeDevice
from bridge_testlib import HttpBridge, running_http
from test_bridge_http import init_msg, open_session, post, rpc

from mcpgen.runtime.bridge import Bridge

SLOW = {"name": "self__slow__count", "arguments": {"steps": 3}}


def _sse_data(text: str) -> list[str]:
    return [line[5:].strip() for line in text.replace("\r\n", "\n").split("\n") if line.startswith("data:")]


async def test_json_answer_unless_progress_was_asked_for(http_bridge: HttpBridge) -> None:
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url, "2025-06-18")
        plain = await post(c, http_bridge.url, rpc("tools/call", SLOW, id=2), Mcp_Session_Id=sid)
        assert plain.status_code == 200 and plain.headers["content-type"] == "application/json"
        assert plain.json()["result"]["content"][0]["text"] == "counted to 3"
        assert plain.headers["mcp-session-id"] == sid

        with_token = {**SLOW, "_meta": {"progressToken": "p-1"}}
        streamed = await post(c, http_bridge.url, rpc("tools/call", with_token, id=3), Mcp_Session_Id=sid)
        assert streamed.status_code == 200
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert streamed.headers["x-accel-buffering"] == "no"
        messages = [json.loads(d) for d in _sse_data(streamed.text) if d]
        progress = [m["params"] for m in messages if m.get("method") == "notifications/progress"]
        assert [p["progress"] for p in progress] == [1, 2, 3]
        assert all(p["progressToken"] == "p-1" for p in progress)
        assert messages[-1]["id"] == 3 and messages[-1]["result"]["content"][0]["text"] == "counted to 3"


async def test_a_2025_11_25_progress_stream_is_resumable(http_bridge: HttpBridge) -> None:
    # From 2025-11-25 the SDK opens a request's stream with a priming event (an id, no
    # data) and numbers each message from the session's event store.
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url, "2025-11-25")
        call = rpc("tools/call", {**SLOW, "_meta": {"progressToken": 7}}, id=2)
        r = await post(c, http_bridge.url, call, Mcp_Session_Id=sid, MCP_Protocol_Version="2025-11-25")
        lines = r.text.replace("\r\n", "\n").split("\n")
        ids = [line[3:].strip() for line in lines if line.startswith("id:")]
        assert len(ids) == 5 and all(i.startswith("r") for i in ids)  # priming, 3 progress, the answer
        assert _sse_data(r.text)[0] == ""


async def test_sessions_beyond_the_cap_end_the_least_recently_used() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, max_sessions=2) as port, httpx.AsyncClient(timeout=10) as c:
        url = f"http://127.0.0.1:{port}/mcp"
        first = await open_session(c, url)
        second = await open_session(c, url)
        assert (await post(c, url, rpc("ping", id=2), Mcp_Session_Id=first)).status_code == 200  # used last
        third = await open_session(c, url)
        assert (await post(c, url, rpc("ping", id=3), Mcp_Session_Id=second)).status_code == 404
        for kept in (first, third):
            assert (await post(c, url, rpc("ping", id=4), Mcp_Session_Id=kept)).json()["result"] == {}
        assert sum(1 for s in bridge.sessions() if s.transport == "http") <= 3  # 2 sessions + the shared one


async def test_a_failed_initialize_leaves_no_session(http_bridge: HttpBridge) -> None:
    no_info = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    async with httpx.AsyncClient(timeout=10) as c:
        counts = []
        for _ in range(3):
            r = await post(c, http_bridge.url, no_info)
            assert r.json()["error"]["code"] == -32602  # the SDK: clientInfo is required
            assert "mcp-session-id" not in r.headers
            counts.append(len(list(http_bridge.bridge.sessions())))
        assert counts == [1, 1, 1]  # the shared connection (2026-07-28, started on first use) alone


async def test_log_level_is_per_session(http_bridge: HttpBridge) -> None:
    async with httpx.AsyncClient(timeout=10) as c:
        quiet = await open_session(c, http_bridge.url)
        loud = await open_session(c, http_bridge.url)
        set_level = rpc("logging/setLevel", {"level": "error"}, id=2)
        r = await post(c, http_bridge.url, set_level, Mcp_Session_Id=quiet)
        assert r.json()["result"] == {}
        got: dict[str, list[Any]] = {quiet: [], loud: []}

        async def listen(sid: str) -> None:
            headers = {"Accept": "text/event-stream", "Mcp-Session-Id": sid}
            async with c.stream("GET", http_bridge.url, headers=headers) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        got[sid].append(json.loads(line[5:]))

        streams = [asyncio.ensure_future(listen(sid)) for sid in (quiet, loud)]
        await asyncio.sleep(0.2)
        http_bridge.device.notify("notifications/events/tick", {"n": 1})
        for _ in range(50):
            if got[loud]:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        assert [m["params"]["data"]["arguments"] for m in got[loud]] == [{"n": 1}]
        assert got[quiet] == []


async def test_legacy_dropped_post_does_not_cancel_the_call(http_bridge: HttpBridge) -> None:
    # 2025-11-25: disconnection SHOULD NOT be read as cancellation (2026-07-28 differs).
    http_bridge.device.step = 0.1
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url)
        call = rpc("tools/call", {"name": "self__slow__count", "arguments": {"steps": 5}}, id=2)
        with_client_gone = asyncio.ensure_future(post(c, http_bridge.url, call, Mcp_Session_Id=sid))
        await asyncio.sleep(0.2)
        with_client_gone.cancel()  # closes the connection mid-call
        await asyncio.gather(with_client_gone, return_exceptions=True)
        await asyncio.sleep(0.6)
    assert http_bridge.device.cancelled == []
    assert ("self.slow.count", {"steps": 5}) in http_bridge.device.calls


async def test_initialize_answer_is_json_with_the_session_id(http_bridge: HttpBridge) -> None:
    async with httpx.AsyncClient(timeout=10) as c:
        r = await post(c, http_bridge.url, init_msg("2025-03-26"))
        assert r.headers["content-type"] == "application/json"
        assert r.json()["result"]["protocolVersion"] == "2025-03-26"
        assert len(r.headers["mcp-session-id"]) >= 32


async def test_each_session_replays_only_its_own_events(http_bridge: HttpBridge) -> None:
    # The SDK files every session's GET stream under one name; a store shared between
    # sessions would replay session A's history to session B.
    async with httpx.AsyncClient(timeout=10) as c:
        first = await open_session(c, http_bridge.url)
        for n in range(3):
            http_bridge.device.notify("notifications/events/tick", {"n": n})
        await asyncio.sleep(0.1)
        second = await open_session(c, http_bridge.url)
        http_bridge.device.notify("notifications/events/tick", {"n": 3})
        await asyncio.sleep(0.1)
        for sid, expected in [(first, [0, 1, 2, 3]), (second, [3])]:
            headers = {"Accept": "text/event-stream", "Mcp-Session-Id": sid, "Last-Event-ID": "0"}
            got: list[int] = []
            async with c.stream("GET", http_bridge.url, headers=headers) as stream:
                lines = stream.aiter_lines()
                while len(got) < len(expected):
                    line = await asyncio.wait_for(lines.__anext__(), 5)
                    if line.startswith("data:") and line[5:].strip():
                        got.append(json.loads(line[5:])["params"]["data"]["arguments"]["n"])
            assert got == expected, sid
