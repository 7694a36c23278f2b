"""The bridge's edges against hostile HTTP clients (issue 18 item 5)."""

from __future__ import annotations

import asyncio
import hmac
import json
from typing import Any

import httpx2 as httpx
import pytest
from bridge_fakes import FakeDevice
from bridge_testlib import HttpBridge, running_http

from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.bridge import http as bridge_http
from mcpgen.runtime.bridge.protocol import MAX_JSON_DEPTH, RpcFailure, parse_message

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


async def post_raw(url: str, body: bytes | str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as c:
        return await c.post(url, content=body, headers={**HEADERS, **headers})


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5000, 200_000])
async def test_deeply_nested_body_is_a_parse_error_not_a_500(http_bridge: HttpBridge, depth: int) -> None:
    # Before: a RecursionError escaped as HTTP 500 with a traceback.
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":' + "[" * depth + "]" * depth + "}}"
    r = await post_raw(http_bridge.url, body)
    assert r.status_code == 400
    message = f"Parse error: JSON nested deeper than {MAX_JSON_DEPTH} levels"
    assert r.json()["error"] == {"code": -32700, "message": message}


def test_nesting_up_to_the_limit_is_accepted() -> None:
    text = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_message(text) is not None
    with pytest.raises(RpcFailure) as info:
        parse_message("[" + text + "]")
    assert info.value.code == -32700


async def test_duplicate_keys_are_refused_before_anything_reaches_a_device(http_bridge: HttpBridge) -> None:
    # The device core read the first duplicate "name", Python the last: a checker could see
    # one tool while the device ran another. No end may pick: -32600.
    async with httpx.AsyncClient(timeout=10) as c:
        r = await c.post(http_bridge.url, content=json.dumps(INIT), headers=HEADERS)
        sid = r.headers["mcp-session-id"]
    body = (
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":'
        '{"name":"self__light__set_rgb","name":"self__reboot","arguments":{"r":1,"g":2,"b":3}}}'
    )
    r = await post_raw(http_bridge.url, body, **{"Mcp-Session-Id": sid})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == -32600 and "duplicate key 'name'" in error["message"]
    nested_dup = (
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":'
        '{"name":"self__light__set_rgb","arguments":{"r":1,"r":200,"g":2,"b":3}}}'
    )
    r = await post_raw(http_bridge.url, nested_dup, **{"Mcp-Session-Id": sid})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600
    assert http_bridge.device.calls == []


def test_stdio_and_http_share_one_parser() -> None:
    with pytest.raises(RpcFailure) as info:
        parse_message(b'{"a":1,"a":1}')
    assert info.value.code == -32600
    with pytest.raises(RpcFailure) as info:
        parse_message(b"\xff")
    assert info.value.code == -32700


# ---------------------------------------------------------------- slow bodies


async def test_stalled_upload_gets_408_and_the_connection_is_closed() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, body_timeout=0.5) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\n"
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":'.encode()
        )
        await writer.drain()
        # Before: no answer at all, the connection stayed open for as long as the client liked.
        response = await asyncio.wait_for(reader.read(), 10)  # read() returns at EOF: closed
        writer.close()
        head, _, body = response.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408")
        assert b'"message":"Request Timeout: the body did not arrive within 0.5 s"' in body  # (chunked)


# ---------------------------------------------------------------- Host (DNS rebinding)


async def test_host_header_must_name_this_bridge(http_bridge: HttpBridge) -> None:
    port = http_bridge.port
    for host in [
        "evil.example",
        f"evil.example:{port}",
        f"127.0.0.1:{port + 1}",
        f"localhost:{port}x",
        "[::1",
        "",
    ]:
        r = await post_raw(http_bridge.url, json.dumps(INIT), Host=host)
        assert r.status_code == 421, host
        assert r.json()["error"]["code"] == -32600 and "--allowed-host" in r.json()["error"]["message"]
    for host in [f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", "127.0.0.1", f"[::1]:{port}"]:
        r = await post_raw(http_bridge.url, json.dumps(INIT), Host=host)
        assert r.status_code == 200, host


async def test_allowed_hosts_are_configurable() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, allowed_hosts=["mybox.lan"]) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert (await post_raw(url, json.dumps(INIT), Host=f"mybox.lan:{port}")).status_code == 200
        assert (await post_raw(url, json.dumps(INIT), Host=f"other.lan:{port}")).status_code == 421
    async with running_http(bridge, allowed_hosts=["*"]) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert (await post_raw(url, json.dumps(INIT), Host="anything.example")).status_code == 200


def test_default_allowed_hosts_follow_the_bind_address() -> None:
    assert bridge_http.default_allowed_hosts("127.0.0.1") == {"127.0.0.1"}
    assert bridge_http.default_allowed_hosts("mybox.lan") == {"mybox.lan"}
    wildcard = bridge_http.default_allowed_hosts("0.0.0.0")
    assert "0.0.0.0" not in wildcard and wildcard  # this machine's own names


# ---------------------------------------------------------------- client token


async def test_client_token_scheme_is_case_insensitive_and_compared_in_constant_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(bridge_http.hmac, "compare_digest", spy)
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, client_token="s3cret") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        for value in ["bearer s3cret", "BEARER s3cret", "Bearer  s3cret", "Bearer s3cret"]:
            assert (await post_raw(url, json.dumps(INIT), Authorization=value)).status_code == 200, value
        for value in ["Bearer wrong", "Bearer s3cre", "Basic czNjcmV0", "s3cret", "Bearer"]:
            r = await post_raw(url, json.dumps(INIT), Authorization=value)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", value
    assert (b"s3cre", b"s3cret") in compared and (b"wrong", b"s3cret") in compared


# ---------------------------------------------------------------- slow headers


async def test_headers_sent_one_byte_per_second_get_408_and_the_connection_is_closed() -> None:
    # uvicorn alone never times out a request whose headers trickle in (its keep-alive
    # timer is cancelled by each byte; its size limit is 16 KiB): a slowloris held the
    # connection for hours. header_timeout puts a deadline on the request line + headers.
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, header_timeout=2.0) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: {'a' * 40}\r\n\r\n".encode()
        loop = asyncio.get_running_loop()
        start = loop.time()
        answer = asyncio.ensure_future(reader.read())  # everything the server sends, up to EOF
        for byte in request:  # one byte a second, far slower than the deadline allows
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except ConnectionError:
                break
            done, _ = await asyncio.wait({answer}, timeout=1.0)
            if done:
                break
        closed_after = loop.time() - start
        await asyncio.wait({answer}, timeout=2.0)  # a write that failed first: the answer is due
        writer.close()
        assert answer.done(), "the server kept a slow-header connection open"
        assert closed_after < 6.0
        data = answer.result()
        assert data.startswith(b"HTTP/1.1 408")


async def test_header_deadline_restarts_for_each_request_on_a_kept_alive_connection() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, header_timeout=0.5) as port:
        async with httpx.AsyncClient(timeout=10) as c:  # one connection, reused
            url = f"http://127.0.0.1:{port}/mcp"
            for _ in range(3):
                r = await c.post(url, content=json.dumps(INIT), headers=HEADERS)
                assert r.status_code == 200
                await asyncio.sleep(0.3)  # pauses add up past the deadline; each request is quick


# ---------------------------------------------------------------- idle sessions


async def test_idle_sessions_expire_but_streaming_ones_stay() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, session_idle_timeout=0.3) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient(timeout=10) as c:
            idle = (await c.post(url, content=json.dumps(INIT), headers=HEADERS)).headers["mcp-session-id"]
            live = (await c.post(url, content=json.dumps(INIT), headers=HEADERS)).headers["mcp-session-id"]
            get_headers = {"Accept": "text/event-stream", "Mcp-Session-Id": live}
            async with c.stream("GET", url, headers=get_headers) as stream:
                assert stream.status_code == 200
                await asyncio.sleep(0.6)
                ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                body = json.dumps(ping)
                gone = await c.post(url, content=body, headers={**HEADERS, "Mcp-Session-Id": idle})
                assert gone.status_code == 404  # the client must initialize again
                kept = await c.post(url, content=body, headers={**HEADERS, "Mcp-Session-Id": live})
                assert kept.status_code == 200 and kept.json()["result"] == {}


async def test_slow_headers_of_a_second_request_on_a_kept_alive_connection_get_408() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice())
    async with running_http(bridge, header_timeout=1.0) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        first = b""
        while b"not found" not in first:  # the first answer (404), the connection kept alive
            first += await asyncio.wait_for(reader.read(1024), 5)
        assert first.startswith(b"HTTP/1.1 404")
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the next request stalls
        answer = await asyncio.wait_for(reader.read(), 10)  # returns at EOF: the bridge closed it
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408")
