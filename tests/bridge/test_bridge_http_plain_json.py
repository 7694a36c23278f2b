"""A ``tools/call`` over Streamable HTTP without a progress token: one plain JSON answer
written by the bridge's guard (not the SDK's SSE path re-emitted), arguments checked by
the runtime's own validator, and one write per request to the device (issue 43 item 5)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import jsonschema
import pytest
from bridge_testlib import HERE, HttpBridge, running_http
from test_bridge_http import ACCEPT, open_session, post, rpc

from mcpgen.runtime import connect_process
from mcpgen.runtime.bridge import Bridge, core
from mcpgen.runtime.bridge.sdk_http import SessionManager


@pytest.fixture
def sdk_requests(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The bodies of the POSTs the SDK's session manager handles."""
    seen: list[bytes] = []
    handle = SessionManager.handle_request

    async def counting(self: SessionManager, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("method") == "POST":
            first = await receive()
            seen.append(first.get("body", b""))
            sent = False

            async def again() -> Any:
                nonlocal sent
                if not sent:
                    sent = True
                    return first
                return await receive()

            return await handle(self, scope, again, send)
        return await handle(self, scope, receive, send)

    monkeypatch.setattr(SessionManager, "handle_request", counting)
    yield seen


async def test_a_call_without_a_progress_token_is_answered_as_json_by_the_guard(
    http_bridge: HttpBridge, sdk_requests: list[bytes]
) -> None:
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url)
        before = len(sdk_requests)
        call = rpc(
            "tools/call", {"name": "self__light__set_rgb", "arguments": {"r": 1, "g": 2, "b": 3}}, id=7
        )
        r = await post(c, http_bridge.url, call, Mcp_Session_Id=sid)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    assert r.headers["mcp-session-id"] == sid
    assert r.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [{"type": "text", "text": "rgb 1,2,3"}]},
    }
    assert sdk_requests[before:] == [], "the call went through the SDK's session manager"


async def test_a_call_with_a_progress_token_still_streams_through_the_sdk(
    http_bridge: HttpBridge, sdk_requests: list[bytes]
) -> None:
    http_bridge.device.step = 0.01
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url)
        before = len(sdk_requests)
        params = {"name": "self__slow__count", "arguments": {"steps": 2}, "_meta": {"progressToken": "p"}}
        r = await post(c, http_bridge.url, rpc("tools/call", params, id=8), Mcp_Session_Id=sid)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert len(sdk_requests[before:]) == 1


async def test_errors_of_a_guard_answered_call_are_json_rpc_errors(http_bridge: HttpBridge) -> None:
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url)
        r = await post(
            c, http_bridge.url, rpc("tools/call", {"name": "no_such_tool"}, id="x"), Mcp_Session_Id=sid
        )
        assert r.status_code == 200
        body = r.json()
        assert body["id"] == "x" and body["error"]["code"] == -32602
        assert "no_such_tool" in body["error"]["message"]
        r = await post(
            c, http_bridge.url, rpc("tools/call", {"name": "self__fail"}, id=3), Mcp_Session_Id=sid
        )
        assert r.json()["result"]["isError"] is True


async def test_arguments_are_checked_by_the_runtime_validator_not_jsonschema(
    http_bridge: HttpBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[dict[str, Any]] = []
    real = core.SchemaValidator

    def recording(schema: dict[str, Any]) -> Any:
        made.append(schema)
        return real(schema)

    def no_jsonschema(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("jsonschema used on the call path")

    monkeypatch.setattr(core, "SchemaValidator", recording)
    monkeypatch.setattr(jsonschema, "validate", no_jsonschema)
    monkeypatch.setattr(jsonschema.validators, "validator_for", no_jsonschema)
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url)
        bad = rpc(
            "tools/call", {"name": "self__light__set_rgb", "arguments": {"r": 300, "g": 0, "b": 0}}, id=1
        )
        r = await post(c, http_bridge.url, bad, Mcp_Session_Id=sid)
        good = rpc(
            "tools/call", {"name": "self__light__set_rgb", "arguments": {"r": 3, "g": 0, "b": 0}}, id=2
        )
        ok = await post(c, http_bridge.url, good, Mcp_Session_Id=sid)
    result = r.json()["result"]
    assert result["isError"] is True
    assert "300" in result["content"][0]["text"] and "255" in result["content"][0]["text"]
    assert ok.json()["result"]["content"][0]["text"] == "rgb 3,0,0"
    assert len(made) == 1  # built once per tool, used for both calls
    assert ("self.light.set_rgb", {"r": 300, "g": 0, "b": 0}) not in http_bridge.device.calls


async def test_one_write_per_request_to_a_stdio_device_through_the_bridge() -> None:
    """Counted on the device process's stdin (the transport's writer): the request and
    its newline went out in two writes (two pipe syscalls per call)."""
    device = await connect_process([sys.executable, str(HERE / "fake_device_proc.py")], stderr="devnull")
    stdin = device._transport.proc.stdin  # type: ignore[attr-defined]
    writes: list[bytes] = []
    write = stdin.write

    def counting(data: bytes) -> None:
        writes.append(bytes(data))
        write(data)

    stdin.write = counting
    bridge = Bridge()
    bridge.add_device(device)
    async with running_http(bridge) as port, httpx.AsyncClient(timeout=10) as c:
        url = f"http://127.0.0.1:{port}/mcp"
        sid = await open_session(c, url)
        for volume in (10, 20, 30):
            call = rpc(
                "tools/call", {"name": "self__audio_speaker__set_volume", "arguments": {"volume": volume}}
            )
            r = await c.post(
                url,
                json=call,
                headers={"Accept": ACCEPT, "Content-Type": "application/json", "Mcp-Session-Id": sid},
            )
            assert "error" not in r.json() and r.json()["result"].get("isError") is not True
    calls = [w for w in writes if b'"tools/call"' in w]
    assert len(calls) == 3
    assert all(w.endswith(b"\n") and w.count(b"\n") == 1 for w in calls)
    assert len(writes) == 3, f"{len(writes)} writes for 3 requests: {writes}"
    await asyncio.sleep(0)
