"""The simulator as a xiaozhi WebSocket device against a Python `websockets` server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from pathlib import Path
from typing import Any, Optional

from device_testlib import DEFAULT_SPEC
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from mcpgen.codegen.spec.loader import load_spec

DEVICE_HELLO = {
    "type": "hello",
    "version": 1,
    "features": {"mcp": True},
    "transport": "websocket",
    "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
}


def server_hello(session_id: str) -> str:
    return json.dumps(
        {
            "type": "hello",
            "transport": "websocket",
            "session_id": session_id,
            "audio_params": {"format": "opus", "sample_rate": 24000, "channels": 1, "frame_duration": 60},
        }
    )


class Peer:
    """Accepted connections, handed to the test one by one; a connection stays open
    until the test calls ``release``."""

    def __init__(self) -> None:
        self.connections: asyncio.Queue[tuple[ServerConnection, asyncio.Future[None]]] = asyncio.Queue()
        self.rejects_left = 0
        self.handshakes: list[float] = []

    async def handler(self, ws: ServerConnection) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self.connections.put((ws, done))
        await done

    def process_request(self, connection: ServerConnection, request: Request) -> Optional[Response]:
        self.handshakes.append(time.monotonic())
        if self.rejects_left > 0:
            self.rejects_left -= 1
            return connection.respond(HTTPStatus.UNAUTHORIZED, "bad token\n")
        return None

    async def next(self, timeout: float = 10.0) -> tuple[ServerConnection, asyncio.Future[None]]:
        return await asyncio.wait_for(self.connections.get(), timeout)


@asynccontextmanager
async def ws_device(
    exe: Path, tmp_path: Path, *extra: str, peer: Optional[Peer] = None
) -> AsyncIterator[Any]:
    peer = peer or Peer()
    async with serve(
        peer.handler, "127.0.0.1", 0, ping_interval=None, process_request=peer.process_request
    ) as server:
        port = server.sockets[0].getsockname()[1]
        log_path = tmp_path / "sim-ws.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [str(exe), "--ws", f"ws://127.0.0.1:{port}/xiaozhi/v1/?x=1", *extra],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            try:
                yield peer, proc, log_path
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()


async def recv_json(ws: ServerConnection, timeout: float = 5.0) -> dict[str, Any]:
    msg = await asyncio.wait_for(ws.recv(), timeout)
    assert isinstance(msg, str), "the device must send text frames"
    return json.loads(msg)


async def mcp(ws: ServerConnection, session: str, payload: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps({"session_id": session, "type": "mcp", "payload": payload}))
    reply = await recv_json(ws)
    assert reply["type"] == "mcp" and reply["session_id"] == session, reply
    assert reply["payload"]["id"] == payload["id"]
    return reply["payload"]


async def test_ws_session_tools_and_reconnect(default_sim_exe: Path, tmp_path: Path) -> None:
    spec = load_spec(DEFAULT_SPEC)
    args = ("--token", "secret-token", "--device-id", "aa:bb:cc:dd:ee:ff", "--client-id", "c0ffee-uuid")
    async with ws_device(default_sim_exe, tmp_path, *args, "--max-reconnects", "5") as (peer, proc, log):
        ws, done = await peer.next()
        headers = ws.request.headers
        assert headers["Authorization"] == "Bearer secret-token"
        assert headers["Protocol-Version"] == "1"
        assert headers["Device-Id"] == "aa:bb:cc:dd:ee:ff"
        assert headers["Client-Id"] == "c0ffee-uuid"
        assert ws.request.path == "/xiaozhi/v1/?x=1"

        assert await recv_json(ws) == DEVICE_HELLO
        await ws.send(server_hello("sess-1"))

        init = await mcp(
            ws,
            "sess-1",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {"vision": {"url": "http://v/x"}},
                },
            },
        )
        assert init["result"]["_meta"]["mcpgen/fingerprint"] == spec.fingerprint
        await ws.send(
            json.dumps(
                {
                    "session_id": "sess-1",
                    "type": "mcp",
                    "payload": {"jsonrpc": "2.0", "method": "notifications/initialized"},
                }
            )
        )
        # Non-MCP xiaozhi messages and binary (audio) frames are ignored.
        await ws.send(json.dumps({"session_id": "sess-1", "type": "tts", "state": "start"}))
        await ws.send(b"\x00\x01opus")
        listed = await mcp(
            ws, "sess-1", {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": ""}}
        )
        assert [t["name"] for t in listed["result"]["tools"]] == [
            t.name for t in spec.tools if not t.user_only
        ]

        call = {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 33}}
        reply = await mcp(ws, "sess-1", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        assert reply["result"] == {"content": [{"type": "text", "text": "true"}], "isError": False}

        # A fragmented text message.
        text = json.dumps(
            {
                "session_id": "sess-1",
                "type": "mcp",
                "payload": {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "self.get_device_status"},
                },
            }
        )
        await ws.send([text[:7], text[7:50], text[50:]])
        reply = await recv_json(ws)
        assert reply["payload"]["id"] == 4
        assert reply["payload"]["result"]["structuredContent"]["audio_speaker"]["volume"] == 33

        # ping -> pong
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 5)

        # A handler side effect becomes a device notification, enveloped with the session.
        call = {"name": "self.screen.set_theme", "arguments": {"theme": "dark"}}
        await mcp(ws, "sess-1", {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call})
        note = await recv_json(ws)
        assert note["session_id"] == "sess-1" and note["type"] == "mcp"
        assert note["payload"]["method"] == "notifications/state_changed"
        assert note["payload"]["params"]["newState"] == {"theme": "dark"}

        # A message larger than the request buffer: answered, connection kept.
        big = {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "x" * 9000}}
        await ws.send(json.dumps({"session_id": "sess-1", "type": "mcp", "payload": big}))
        err = await recv_json(ws)
        assert err["session_id"] == "sess-1"
        assert err["payload"]["error"]["code"] == -32600 and err["payload"]["id"] is None
        reply = await mcp(ws, "sess-1", {"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert reply["result"] == {}

        # Drop the connection (close handshake): the device reconnects and says hello again.
        done.set_result(None)
        ws2, done2 = await peer.next()
        assert await recv_json(ws2) == DEVICE_HELLO
        await ws2.send(server_hello("sess-2"))
        reply = await mcp(ws2, "sess-2", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert reply["result"] == {}
        # Device state survived the reconnect (same process).
        reply = await mcp(
            ws2,
            "sess-2",
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "self.get_device_status"}},
        )
        assert reply["result"]["structuredContent"]["screen"]["theme"] == "dark"

        # Abort the TCP connection without a close frame: reconnects again.
        assert ws2.transport is not None
        ws2.transport.abort()
        done2.set_result(None)
        ws3, done3 = await peer.next()
        assert await recv_json(ws3) == DEVICE_HELLO
        done3.set_result(None)
        assert proc.poll() is None
        text_log = log.read_text()
        assert "server hello, session_id=sess-1" in text_log
        assert "server hello, session_id=sess-2" in text_log
        assert "vision configured: url=http://v/x" in text_log


async def test_ws_reconnects_after_rejected_handshake_with_backoff(
    default_sim_exe: Path, tmp_path: Path
) -> None:
    peer = Peer()
    peer.rejects_left = 3
    async with ws_device(default_sim_exe, tmp_path, "--max-reconnects", "10", peer=peer) as (_, proc, log):
        ws, done = await peer.next(timeout=15)
        assert await recv_json(ws) == DEVICE_HELLO
        await ws.send(server_hello("after-rejects"))
        reply = await mcp(ws, "after-rejects", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert reply["result"] == {}
        done.set_result(None)
        gaps = [b - a for a, b in zip(peer.handshakes, peer.handshakes[1:4], strict=False)]
        # 0.2 s, 0.4 s, 0.8 s: exponential backoff between failed attempts.
        assert 0.15 < gaps[0] < 0.6, gaps
        assert gaps[1] > gaps[0] * 1.5 and gaps[2] > gaps[1] * 1.5, gaps
        assert "handshake rejected: HTTP/1.1 401" in log.read_text()
        assert ws.request.headers["Authorization"] == "Bearer test-token"  # default token
        assert len(ws.request.headers["Client-Id"]) == 36  # random UUID by default


async def test_ws_missing_server_hello_reconnects(default_sim_exe: Path, tmp_path: Path) -> None:
    args = ("--hello-timeout-ms", "300", "--max-reconnects", "3")
    async with ws_device(default_sim_exe, tmp_path, *args) as (peer, proc, log):
        ws, done = await peer.next()
        assert await recv_json(ws) == DEVICE_HELLO  # ... and no server hello
        ws2, done2 = await peer.next(timeout=5)
        assert await recv_json(ws2) == DEVICE_HELLO
        done.set_result(None)
        done2.set_result(None)
        assert "no server hello within 300 ms" in log.read_text()


def test_ws_gives_up_after_max_reconnects(default_sim_exe: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    proc = subprocess.run(
        [str(default_sim_exe), "--ws", f"ws://127.0.0.1:{port}/", "--max-reconnects", "2"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert proc.returncode == 1
    assert proc.stderr.count("cannot connect") == 3
    assert "giving up after 2 reconnects" in proc.stderr
    assert time.monotonic() - start >= 0.55  # 0.2 s + 0.4 s of backoff
    assert proc.stdout == ""  # logs never go to stdout


def test_bad_urls_are_rejected(default_sim_exe: Path) -> None:
    for url in ("wss://example.com/", "http://x/", "ws://:80/"):
        proc = subprocess.run([str(default_sim_exe), "--ws", url], capture_output=True, text=True, timeout=10)
        assert proc.returncode == 2, (url, proc.stderr)
