"""The real command line (`python -m mcpgen.runtime.bridge`, what `codegen bridge` runs) with a
device process launched through runtime.connect_process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
import sys
from collections.abc import AsyncIterator

import pytest
from bridge_testlib import HERE, subprocess_env
from mcp import Client, StdioServerParameters

DEVICE_CMD = shlex.join([sys.executable, str(HERE / "fake_device_proc.py")])


def _runtime_ready() -> bool:
    try:
        from mcpgen import runtime

        return callable(getattr(runtime, "connect_process", None))
    except Exception:
        return False


pytestmark = pytest.mark.skipif(not _runtime_ready(), reason="runtime.connect_process is not importable yet")


def bridge_argv(*extra: str) -> list[str]:
    return ["-m", "mcpgen.runtime.bridge", "--device-cmd", DEVICE_CMD, "--log-level", "WARNING", *extra]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cli_stdio_with_process_device(mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=bridge_argv("--transport", "stdio"), env=subprocess_env()
    )
    async with Client(params, mode=mode, read_timeout_seconds=20) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["self__audio_speaker__set_volume", "self__slow__count", "self__system__exit"]
        ok = await client.call_tool("self__audio_speaker__set_volume", {"volume": 42})
        assert not ok.is_error and ok.content[0].text == "true"
        bad = await client.call_tool("self__audio_speaker__set_volume", {"volume": "loud"})
        assert bad.is_error and "volume" in bad.content[0].text
        gone = await client.call_tool("self__system__exit", {})
        assert gone.is_error  # the device process died mid-call
        after = await client.call_tool("self__audio_speaker__set_volume", {"volume": 1})
        assert after.is_error and "not connected" in after.content[0].text


async def test_cli_device_command_after_a_double_dash_keeps_its_words() -> None:
    """``-- CMD ARG...``: what MCP Inspector's argument list (which splits a quoted
    --device-cmd at its spaces) cannot break; the device's own options stay its own."""
    argv = [
        "-m",
        "mcpgen.runtime.bridge",
        "--transport",
        "stdio",
        "--log-level",
        "WARNING",
        "--",
        sys.executable,
        str(HERE / "fake_device_proc.py"),
        "--stock-camera",
    ]
    params = StdioServerParameters(command=sys.executable, args=argv, env=subprocess_env())
    async with Client(params, mode="legacy", read_timeout_seconds=20) as client:
        photo = await client.call_tool("self__camera__take_photo", {})  # only with --stock-camera
        assert not photo.is_error and photo.content[0].type == "image"


async def test_stock_nested_image_reaches_mcp_clients_as_image_content() -> None:
    """A stock device's image (a JSON string nested in the item) arrives as MCP image content."""
    argv = bridge_argv("--transport", "stdio")
    argv[argv.index(DEVICE_CMD)] = DEVICE_CMD + " --stock-camera"
    params = StdioServerParameters(command=sys.executable, args=argv, env=subprocess_env())
    async with Client(params, mode="legacy", read_timeout_seconds=20) as client:
        photo = await client.call_tool("self__camera__take_photo", {})
        assert not photo.is_error
        [item] = photo.content
        assert item.type == "image" and item.mime_type == "image/png" and item.data == "iVBORw0KGgo="


async def test_cli_user_tools_flag() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=bridge_argv("--user-tools", "--prefix-tools"), env=subprocess_env()
    )
    async with Client(params, mode="legacy", read_timeout_seconds=20) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert len(names) == 4 and all(n.startswith("process_") for n in names)
        assert any(n.endswith("__self__system__reboot") for n in names)


@contextlib.asynccontextmanager
async def http_bridge_process(*extra: str) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpgen.runtime.bridge",
        "--device-cmd",
        DEVICE_CMD,
        "--transport",
        "http",
        "--port",
        "0",
        "--log-level",
        "INFO",
        *extra,
        stderr=asyncio.subprocess.PIPE,
        env=subprocess_env(),
    )
    assert proc.stderr is not None
    try:
        url = None
        while url is None:
            line = (await asyncio.wait_for(proc.stderr.readline(), 20)).decode()
            assert line, "bridge exited before serving"
            found = re.search(r"MCP endpoint: (http://\S+)", line)
            url = found.group(1) if found else None
        yield url
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cli_http_with_process_device(mode: str) -> None:
    async with http_bridge_process() as url, Client(url, mode=mode, read_timeout_seconds=20) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "self__audio_speaker__set_volume" in names
        ok = await client.call_tool("self__audio_speaker__set_volume", {"volume": 7})
        assert not ok.is_error
        bad = await client.call_tool("self__audio_speaker__set_volume", {"volume": 700})
        assert bad.is_error


async def test_cli_cancellation_reaches_the_device() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *bridge_argv("--transport", "stdio"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=subprocess_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def send(message: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")

    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    first = json.loads(await asyncio.wait_for(proc.stdout.readline(), 20))
    assert first["result"]["protocolVersion"] == "2025-06-18"
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "self__slow__count", "arguments": {"steps": 200}}
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    await asyncio.sleep(0.5)
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    third = json.loads(await asyncio.wait_for(proc.stdout.readline(), 20))
    assert third == {"jsonrpc": "2.0", "id": 3, "result": {}}  # and nothing for the cancelled id 2
    await asyncio.sleep(0.3)
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 20)
    assert await proc.stdout.read() == b""
    assert b"fake device: cancelled" in await proc.stderr.read()


async def ws_device(url: str, device_id: str, token: str, stop: asyncio.Event) -> None:
    """A minimal xiaozhi-style WebSocket device with one tool."""
    import websockets

    headers = {
        "Authorization": f"Bearer {token}",
        "Device-Id": device_id,
        "Client-Id": "c1",
        "Protocol-Version": "1",
    }
    async with websockets.connect(url, additional_headers=headers) as ws:
        await ws.send(
            json.dumps({"type": "hello", "version": 1, "features": {"mcp": True}, "transport": "websocket"})
        )
        hello = json.loads(await ws.recv())
        sid = hello["session_id"]

        async def serve() -> None:
            async for frame in ws:
                msg = json.loads(frame)
                req = msg.get("payload") or {}
                if "id" not in req:
                    continue
                method = req.get("method")
                if method == "initialize":
                    result: dict[str, object] = {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "ws-fake", "version": "1"},
                    }
                elif method == "tools/list":
                    schema = {
                        "type": "object",
                        "properties": {"volume": {"type": "integer"}},
                        "required": ["volume"],
                    }
                    result = {
                        "tools": [
                            {
                                "name": "self.audio_speaker.set_volume",
                                "description": "",
                                "inputSchema": schema,
                            }
                        ]
                    }
                else:
                    volume = req["params"]["arguments"]["volume"]
                    result = {"content": [{"type": "text", "text": f"volume {volume}"}], "isError": False}
                reply = {"jsonrpc": "2.0", "id": req["id"], "result": result}
                await ws.send(json.dumps({"session_id": sid, "type": "mcp", "payload": reply}))

        server = asyncio.ensure_future(serve())
        await stop.wait()
        server.cancel()


async def test_cli_http_with_gateway_devices() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpgen.runtime.bridge",
        "--transport",
        "http",
        "--port",
        "0",
        "--gateway-port",
        "0",
        "--auth-token",
        "kitchen=s3cret",
        stderr=asyncio.subprocess.PIPE,
        env=subprocess_env(),
    )
    assert proc.stderr is not None
    stop = asyncio.Event()
    try:
        url = gateway = None
        while url is None or gateway is None:
            line = (await asyncio.wait_for(proc.stderr.readline(), 20)).decode()
            assert line, "bridge exited before serving"
            if m := re.search(r"MCP endpoint: (http://\S+)", line):
                url = m.group(1)
            if m := re.search(r"device gateway listening on ([\d.]+):(\d+)", line):
                gateway = f"ws://{m.group(1)}:{m.group(2)}/"
        device = asyncio.ensure_future(ws_device(gateway, "kitchen", "s3cret", stop))
        from websockets.exceptions import InvalidStatus

        with pytest.raises(InvalidStatus) as refused:  # a wrong token is refused at the handshake
            await ws_device(gateway, "hall", "wrong", stop)
        assert refused.value.response.status_code == 401
        async with Client(url, mode="auto", read_timeout_seconds=20) as client:
            for _ in range(100):
                names = [t.name for t in (await client.list_tools(cache_mode="bypass")).tools]
                if names:
                    break
                await asyncio.sleep(0.1)
            assert names == ["kitchen__self__audio_speaker__set_volume"]
            result = await client.call_tool(names[0], {"volume": 9})
            assert result.content[0].text == "volume 9"
            stop.set()
            await device
            for _ in range(100):
                if not (await client.list_tools(cache_mode="bypass")).tools:
                    break
                await asyncio.sleep(0.1)
            gone = await client.call_tool(names[0], {"volume": 1})
            assert gone.is_error and "kitchen" in gone.content[0].text
    finally:
        stop.set()
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)


async def test_cli_allowed_host_and_body_timeout() -> None:
    import httpx2 as httpx

    flags = ["--body-timeout", "5", "--header-timeout", "1", "--session-idle-timeout", "60"]
    async with http_bridge_process("--allowed-host", "mybox.lan", *flags) as url:
        port = url.split(":")[2].split("/")[0]
        params = {"protocolVersion": "2025-06-18"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        async with httpx.AsyncClient(timeout=10) as c:
            cases = [(f"mybox.lan:{port}", 200), (f"evil.example:{port}", 421), ("127.0.0.1", 200)]
            for host, status in cases:
                r = await c.post(url, content=json.dumps(init), headers={**headers, "Host": host})
                assert r.status_code == status, host
        reader, writer = await asyncio.open_connection("127.0.0.1", int(port))
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and then nothing
        answer = await asyncio.wait_for(reader.read(), 10)  # returns at EOF: the bridge closed it
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408")
