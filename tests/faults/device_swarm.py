"""A swarm of misbehaving xiaozhi devices, run as its own process by the fault tests.

    python device_swarm.py PLAN.json

PLAN: {"url", "secret", "duration", "peers": [{"id", "kind"}...], "seed"}. Each peer runs
for ``duration`` seconds and then leaves; the process prints one JSON report on stdout:
what the raw-socket peers (forged tokens, missing hellos, slow handshakes) saw, and
counters of what the device peers did. Kinds (how each one misbehaves) are listed in
``faults_lib.KINDS``.

It runs in its own process so the memory the test measures is the gateway's, not the
devices', and so both sides do not share one event loop. The devices speak through the
``websockets`` client; the raw peers use plain sockets because they must send what no
WebSocket library sends (forged upgrades, dribbled requests, nothing at all).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import random
import sys
import time
from typing import Any

from faults_lib import ECHO_TOOL, forged_tokens, hmac_auth
from websockets.asyncio.client import ClientConnection, connect

HELLO = json.dumps(
    {
        "type": "hello",
        "version": 1,
        "features": {"mcp": True},
        "transport": "websocket",
        "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
    }
)
GARBAGE: list[Any] = [
    "not json at all",
    b"\x00\x01binary audio",
    "[]",
    '{"type":"mcp"}',
    '{"type":"mcp","payload":"a string"}',
    '{"type":"mcp","payload":{"jsonrpc":"2.0","id":987654321,"result":{}}}',
    '{"type":"mcp","payload":{"jsonrpc":"2.0","id":"x","result":{}}}',
    '{"type":"mcp","payload":{"jsonrpc":"2.0","id":-1,"error":{"code":1,"message":"?"}}}',
    '{"type":"mcp","payload":{"jsonrpc":"2.0","id":null,"result":{"content":[]}}}',
    '{"type":"mcp","payload":{"jsonrpc":"2.0","method":"notifications/message","params":7}}',
    '{"type":"mcp","payload":{"jsonrpc":"2.0","id":1e400,"result":{}}}',
]


LINGERING: set[asyncio.Future[None]] = set()


class Counters:
    def __init__(self) -> None:
        self.c: dict[str, int] = {}

    def add(self, key: str, n: int = 1) -> None:
        self.c[key] = self.c.get(key, 0) + n


def reply(session_id: str | None, rid: Any, result: Any) -> str:
    return json.dumps(
        {"session_id": session_id, "type": "mcp", "payload": {"jsonrpc": "2.0", "id": rid, "result": result}}
    )


class SwarmDevice:
    """One device connection and the behaviour of its kind."""

    def __init__(self, url: str, device_id: str, kind: str, token: str, stop_at: float, n: Counters) -> None:
        self.url, self.device_id, self.kind, self.token = url, device_id, kind, token
        self.stop_at, self.n = stop_at, n
        self.calls = 0
        self.rng = random.Random(device_id)

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Protocol-Version": "1",
            "Device-Id": self.device_id,
            "Client-Id": f"client-{self.device_id}",
        }

    async def run(self) -> None:
        """Connect, serve, and (for the kinds that drop) reconnect until the stop time."""
        while time.monotonic() < self.stop_at:
            try:
                await self.session()
            except Exception:  # refused, reset, closed by the gateway: all part of the game
                self.n.add(f"{self.kind}.session_errors")
            if self.kind in ("good", "silent", "garbage"):
                if time.monotonic() < self.stop_at - 0.5:  # lost early: unexpected
                    self.n.add(f"{self.kind}.early_end")
                return
            await asyncio.sleep(self.rng.uniform(0.05, 0.3))

    async def session(self) -> None:
        ws = await connect(
            self.url, additional_headers=self.headers(), max_size=None, open_timeout=10, close_timeout=1
        )
        self.n.add(f"{self.kind}.connections")
        until = self.stop_at
        if self.kind == "storm":  # replaced by its own next connection soon
            until = min(until, time.monotonic() + self.rng.uniform(0.2, 1.0))
        try:
            await ws.send(HELLO)
            await asyncio.wait_for(self.serve(ws), max(0.0, until - time.monotonic()))
        except TimeoutError:
            pass
        finally:
            if self.kind == "storm" and time.monotonic() < self.stop_at - 0.1 and self.rng.random() < 0.5:
                # Half the storm leaves its old connection open for the next one to
                # replace: the gateway must retire the old session by itself.
                LINGERING.add(asyncio.ensure_future(self.linger(ws)))
            elif self.kind == "storm" and time.monotonic() < self.stop_at - 0.1:
                ws.transport.abort()  # the other half drops it hard
            else:
                await ws.close()

    async def linger(self, ws: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.wait_closed(), max(0.1, self.stop_at - time.monotonic()))
        self.n.add("storm.old_closed_by_gateway" if ws.close_code is not None else "storm.old_left_open")
        with contextlib.suppress(Exception):
            await ws.close()

    async def serve(self, ws: ClientConnection) -> None:
        session_id: str | None = None
        tasks: set[asyncio.Task[None]] = set()
        async for raw in ws:
            if isinstance(raw, bytes):
                continue
            msg = json.loads(raw)
            if msg.get("type") == "hello":
                session_id = msg.get("session_id")
                continue
            payload = msg.get("payload")
            if msg.get("type") != "mcp" or not isinstance(payload, dict) or "id" not in payload:
                continue
            method, rid = payload.get("method"), payload["id"]
            if method == "initialize":
                await ws.send(
                    reply(
                        session_id,
                        rid,
                        {
                            "protocolVersion": "2024-11-05",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "swarm", "version": "1"},
                        },
                    )
                )
            elif method == "tools/list":
                await ws.send(reply(session_id, rid, {"tools": [ECHO_TOOL]}))
            elif method == "tools/call":
                self.calls += 1
                task = asyncio.ensure_future(self.on_call(ws, session_id, rid, payload.get("params") or {}))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            else:
                await ws.send(
                    json.dumps(
                        {
                            "session_id": session_id,
                            "type": "mcp",
                            "payload": {
                                "jsonrpc": "2.0",
                                "id": rid,
                                "error": {"code": -32601, "message": "no such method"},
                            },
                        }
                    )
                )

    async def on_call(self, ws: ClientConnection, session_id: str | None, rid: Any, params: dict) -> None:
        tag = (params.get("arguments") or {}).get("tag", "")
        answer = reply(session_id, rid, {"content": [{"type": "text", "text": tag}], "isError": False})
        kind = self.kind
        self.n.add(f"{kind}.calls")
        try:
            if kind == "silent":
                return
            if kind == "drop" and self.calls % 3 == 0:
                ws.transport.abort()  # power loss with a call in flight
                self.n.add("drop.aborted_mid_call")
                return
            if kind == "big" and self.calls % 2 == 0:
                await ws.send("x" * (1 << 20))  # above the gateway's max_frame
                self.n.add("big.sent_oversized")
                return
            await asyncio.sleep(self.rng.uniform(0.0, 0.03))
            if kind == "garbage":
                for junk in self.rng.sample(GARBAGE, 4):
                    await ws.send(junk)
            await ws.send(answer)
            if kind in ("garbage", "dup"):
                await ws.send(answer)  # a second copy must never reach another call
        except Exception:
            self.n.add(f"{kind}.send_failed")


# -- raw peers ----------------------------------------------------------------------------


def upgrade_request(port: int, device_id: str, token: str | None) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /xiaozhi/v1/ HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        "Protocol-Version: 1",
        f"Device-Id: {device_id}",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def masked_text(payload: bytes) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    return head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(payload))


async def read_all(reader: asyncio.StreamReader, timeout: float) -> tuple[bytes, bool]:
    """Everything the peer sends until EOF (True) or the timeout (False)."""
    data = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data, False
        try:
            chunk = await asyncio.wait_for(reader.read(65536), left)
        except (TimeoutError, ConnectionError):
            return data, False
        if not chunk:
            return data, True
        data += chunk


async def forged_peer(host: str, port: int, device_id: str, token: str | None) -> dict[str, Any]:
    """An unauthenticated peer: upgrade with a forged token, then act as if it was accepted."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(upgrade_request(port, device_id, token) + masked_text(HELLO.encode()))
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    data, eof = await read_all(reader, 30.0)  # returns at EOF; long only on a loaded machine
    writer.close()
    return {"device_id": device_id, "token": token, "received": data.decode("latin-1"), "eof": eof}


async def nohello_peer(url: str, device_id: str, token: str, hello_timeout: float) -> dict[str, Any]:
    """Authenticated and upgraded, but never says hello: the gateway must hang up on it."""
    t0 = time.monotonic()
    got: list[str] = []
    code = None
    try:
        async with connect(
            url,
            additional_headers={
                "Authorization": f"Bearer {token}",
                "Device-Id": device_id,
                "Protocol-Version": "1",
            },
            open_timeout=30,
        ) as ws:
            t0 = time.monotonic()  # the gateway's hello clock starts with the upgrade
            try:
                async for m in ws:
                    got.append(m if isinstance(m, str) else "<binary>")
                    if time.monotonic() - t0 > hello_timeout + 10:
                        break
            except Exception:
                pass
            code = ws.close_code
    except Exception as exc:
        got.append(f"<connect failed: {type(exc).__name__}>")
    return {"device_id": device_id, "closed_after": time.monotonic() - t0, "received": got, "code": code}


async def dribble_peer(host: str, port: int, device_id: str, token: str) -> dict[str, Any]:
    """A slow handshake: the upgrade request one small piece at a time over ~1 s, then
    a hello. A slow but valid device must still be let in."""
    reader, writer = await asyncio.open_connection(host, port)
    request = upgrade_request(port, device_id, token)
    step = max(1, len(request) // 20)
    for i in range(0, len(request), step):
        writer.write(request[i : i + step])
        await writer.drain()
        await asyncio.sleep(0.05)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    writer.close()
    return {"device_id": device_id, "status": status}


async def main(plan: dict[str, Any]) -> dict[str, Any]:
    url: str = plan["url"]
    host, port = "127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0])
    auth = hmac_auth(plan["secret"])
    stop_at = time.monotonic() + float(plan["duration"])
    n = Counters()
    jobs: list[asyncio.Future[Any]] = []
    raw: dict[str, list[Any]] = {"forged": [], "nohello": [], "dribble": []}
    rng = random.Random(plan.get("seed", 1))
    victims = [p["id"] for p in plan["peers"] if p["kind"] == "good"] or ["nobody"]
    for peer in plan["peers"]:
        kind, device_id = peer["kind"], peer["id"]
        await asyncio.sleep(0.002)  # connect over a moment, not in one burst
        if kind == "forged":
            # Half target a live device (a take-over attempt), half a fresh id.
            target = rng.choice(victims) if rng.random() < 0.5 else device_id
            for token in forged_tokens(auth, target):
                jobs.append(asyncio.ensure_future(forged_peer(host, port, target, token)))
        elif kind == "nohello":
            jobs.append(
                asyncio.ensure_future(
                    nohello_peer(url, device_id, auth.token_for(device_id), float(plan["hello_timeout"]))
                )
            )
        elif kind == "dribble":
            jobs.append(asyncio.ensure_future(dribble_peer(host, port, device_id, auth.token_for(device_id))))
        else:
            jobs.append(
                asyncio.ensure_future(
                    SwarmDevice(url, device_id, kind, auth.token_for(device_id), stop_at, n).run()
                )
            )
    results = await asyncio.gather(*jobs, return_exceptions=True)
    if LINGERING:
        await asyncio.gather(*LINGERING, return_exceptions=True)
    errors = []
    for peer_result in results:
        if isinstance(peer_result, BaseException):
            errors.append(repr(peer_result))
        elif isinstance(peer_result, dict):
            if "token" in peer_result:
                raw["forged"].append(peer_result)
            elif "closed_after" in peer_result:
                raw["nohello"].append(peer_result)
            else:
                raw["dribble"].append(peer_result)
    return {"counters": n.c, "raw": raw, "errors": errors}


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        the_plan = json.load(f)
    report = asyncio.run(main(the_plan))
    print(json.dumps(report))
