"""Light device emulators for the gateway benchmark (a separate process).

``python -m benchmarks.gw_emulator --url ws://127.0.0.1:PORT/ --count N`` opens N
WebSocket connections to the gateway, each a xiaozhi-style device: the handshake headers
(``Authorization: Bearer``, ``Protocol-Version``, ``Device-Id``, ``Client-Id``), the device
``hello`` with ``features.mcp``, then MCP over ``{"session_id","type":"mcp","payload"}``
envelopes answering ``initialize``, ``tools/list`` (desk-lamp's tools, as the firmware
stores them) and ``tools/call`` with precomputed replies, like the C++ core writes them.

Bounded: at most ``MAX_DEVICES`` connections, only to 127.0.0.1, and the process exits
after ``--max-seconds``, when its stdin closes or says ``quit``, or when its parent dies.
Prints one JSON line ``{"connected": n, "failed": m}`` once every connection is up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from typing import Any, Optional
from urllib.parse import urlparse

import orjson
from websockets.asyncio.client import ClientConnection, connect

from benchmarks.procutil import raise_nofile_limit
from mcpgen.codegen import mcp_json
from mcpgen.codegen.loader import load_spec

MAX_DEVICES = 2000
CONNECT_CONCURRENCY = 64
_MARK = b"987654321987"

HELLO = orjson.dumps(
    {
        "type": "hello",
        "version": 1,
        "features": {"mcp": True},
        "transport": "websocket",
        "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
    }
)

CALL_TEXT = {"boolean": "true", "integer": "30", "number": "1.5", "string": "rainbow", "none": None}


class Replies:
    """Reply templates (split around the id) for one spec; enveloped per session."""

    def __init__(self, spec_path: str) -> None:
        spec = load_spec(spec_path)
        self.fingerprint = spec.fingerprint
        self.results: dict[str, Any] = {}
        for tool in spec.tools:
            kind = tool.returns.kind
            if kind == "object":
                obj = {"on": True, "rgb": [255, 120, 0], "timer_minutes": 30}
                text = orjson.dumps(obj).decode()
                res: dict[str, Any] = {
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": obj,
                    "isError": False,
                }
            elif kind == "none" or CALL_TEXT.get(kind) is None:
                res = {"content": [], "isError": False}
            else:
                res = {"content": [{"type": "text", "text": CALL_TEXT[kind]}], "isError": False}
            self.results[tool.name] = res
        self.list_result = {"tools": mcp_json.tools_list(spec)}
        self.init_result = {
            "protocolVersion": spec.device.protocol_version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": spec.device.name, "version": spec.device.version},
            "_meta": {"mcpgen/fingerprint": spec.fingerprint},
        }
        self.unknown_tool = {"code": -32601, "message": "Unknown tool"}

    def templates(self, session_id: str) -> dict[str, tuple[bytes, bytes]]:
        def split(field: str, value: Any) -> tuple[bytes, bytes]:
            doc = {
                "session_id": session_id,
                "type": "mcp",
                "payload": {"jsonrpc": "2.0", "id": int(_MARK), field: value},
            }
            head, _, tail = orjson.dumps(doc).partition(_MARK)
            return head, tail

        out = {f"call:{name}": split("result", res) for name, res in self.results.items()}
        out["tools/list"] = split("result", self.list_result)
        out["initialize"] = split("result", self.init_result)
        out["ping"] = split("result", {})
        out["error:unknown"] = split("error", self.unknown_tool)
        return out


class Stats:
    def __init__(self, target: int) -> None:
        self.target = target
        self.connected = 0
        self.failed = 0
        self.calls = 0


async def run_device(
    url: str,
    index: int,
    prefix: str,
    replies: Replies,
    stats: Stats,
    ready: asyncio.Event,
    gate: asyncio.Semaphore,
    stop: asyncio.Event,
) -> None:
    headers = {
        "Authorization": "Bearer bench-token",
        "Protocol-Version": "1",
        "Device-Id": f"{prefix}:{index // 65536 % 256:02x}:{index // 256 % 256:02x}:{index % 256:02x}",
        "Client-Id": f"bench-client-{index}",
    }
    ws: Optional[ClientConnection] = None
    async with gate:
        try:
            ws = await connect(
                url,
                additional_headers=headers,
                compression=None,
                ping_interval=None,
                open_timeout=60,
                close_timeout=2,
                max_size=1 << 20,
            )
            await ws.send(HELLO, text=True)
            tpl: dict[str, tuple[bytes, bytes]] = {}
            while True:
                msg = orjson.loads(await ws.recv())
                if msg.get("type") == "hello":
                    tpl = replies.templates(str(msg.get("session_id", "")))
                    break
        except Exception as exc:  # noqa: BLE001 - counted and reported
            stats.failed += 1
            print(f"device {index}: connect failed: {exc!r}", file=sys.stderr)
            if ws is not None:
                await ws.close()
            if stats.connected + stats.failed >= stats.target:
                ready.set()
            return
    stats.connected += 1
    if stats.connected + stats.failed >= stats.target:
        ready.set()
    loads = orjson.loads
    try:
        while not stop.is_set():
            raw = await ws.recv()
            msg = loads(raw)
            if msg.get("type") != "mcp":
                continue
            p = msg.get("payload")
            if not isinstance(p, dict):
                continue
            rid = p.get("id")
            method = p.get("method")
            if rid is None or method is None:
                continue  # notifications and replies
            if method == "tools/call":
                params = p.get("params") or {}
                t = tpl.get("call:" + str(params.get("name")))
                if t is None:
                    t = tpl["error:unknown"]
                stats.calls += 1
            else:
                t = tpl.get(method) or tpl["ping"]
            await ws.send(t[0] + str(rid).encode() + t[1], text=True)
    except Exception:  # noqa: BLE001 - the gateway closed the connection
        pass
    finally:
        await ws.close()


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    for line in sys.stdin:
        if "quit" in line:
            break
    loop.call_soon_threadsafe(stop.set)


async def main_async(args: argparse.Namespace) -> int:
    host = urlparse(args.url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        print("the emulator only connects to loopback", file=sys.stderr)
        return 2
    count = min(args.count, MAX_DEVICES)
    replies = Replies(args.spec)
    stats = Stats(count)
    ready = asyncio.Event()
    stop = asyncio.Event()
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    loop = asyncio.get_running_loop()
    threading.Thread(target=_watch_stdin, args=(loop, stop), daemon=True).start()
    parent = os.getppid()
    tasks = [
        asyncio.create_task(run_device(args.url, i, args.prefix, replies, stats, ready, gate, stop))
        for i in range(count)
    ]
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(ready.wait(), args.max_seconds)
    except asyncio.TimeoutError:
        pass
    print(
        orjson.dumps(
            {"connected": stats.connected, "failed": stats.failed, "seconds": round(time.monotonic() - t0, 3)}
        ).decode(),
        flush=True,
    )
    deadline = t0 + args.max_seconds
    while not stop.is_set() and time.monotonic() < deadline and os.getppid() == parent:
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except asyncio.TimeoutError:
            pass
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--prefix", default="be:ec")
    ap.add_argument(
        "--spec", default=os.path.join(os.path.dirname(__file__), "..", "toolspec", "desk_lamp.yaml")
    )
    ap.add_argument("--max-seconds", type=float, default=600.0)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
