"""A pretend device speaking newline-delimited JSON-RPC on stdio, like `sim --stdio`.

Used through runtime.connect_process until the compiled C++ simulator is available.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "self.audio_speaker.set_volume",
        "description": "Set the speaker volume.",
        "inputSchema": {
            "type": "object",
            "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
            "required": ["volume"],
        },
    },
    {
        "name": "self.slow.count",
        "description": "Count slowly.",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": {"type": "integer"}},
            "required": ["steps"],
        },
    },
    {
        "name": "self.system.exit",
        "description": "Power off.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "self.system.reboot",
        "description": "Reboot (user only).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"audience": ["user"]},
    },
]

# `--stock-camera`: one more tool answering like a stock xiaozhi-esp32 camera, whose image
# result is a JSON string nested in an item of type "image" (not MCP's image content).
STOCK_CAMERA = "--stock-camera" in sys.argv[1:]
PNG_B64 = "iVBORw0KGgo="
if STOCK_CAMERA:
    TOOLS.append(
        {
            "name": "self.camera.take_photo",
            "description": "Take a photo (stock xiaozhi result shape).",
            "inputSchema": {"type": "object", "properties": {}},
        }
    )

state = {"volume": 10}
running: dict[Any, asyncio.Task[None]] = {}


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(s: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": s}], "isError": False}


async def slow(rid: Any, steps: int, token: Any) -> None:
    for i in range(1, steps + 1):
        await asyncio.sleep(0.05)
        if token is not None:
            write(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": i, "total": steps},
                }
            )
    write({"jsonrpc": "2.0", "id": rid, "result": text(f"counted to {steps}")})
    running.pop(rid, None)


def handle(msg: dict[str, Any]) -> None:
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if rid is None:
        if method == "notifications/cancelled":
            task = running.pop(params.get("requestId"), None)
            if task:
                task.cancel()
                sys.stderr.write(f"fake device: cancelled {params.get('requestId')}\n")
        return
    if method == "initialize":
        write(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake-device", "version": "1.0"},
                },
            }
        )
    elif method == "tools/list":
        write({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "ping":
        write({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "self.audio_speaker.set_volume":
            if not isinstance(args.get("volume"), int):
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "error": {"code": -32602, "message": "Invalid params: volume"},
                    }
                )
                return
            state["volume"] = args["volume"]
            write({"jsonrpc": "2.0", "id": rid, "result": text("true")})
        elif name == "self.slow.count":
            token = (params.get("_meta") or {}).get("progressToken")
            running[rid] = asyncio.ensure_future(slow(rid, int(args.get("steps", 1)), token))
        elif name == "self.system.exit":
            sys.exit(0)
        elif name == "self.camera.take_photo" and STOCK_CAMERA:
            nested = json.dumps({"type": "image", "mimeType": "image/png", "data": PNG_B64})
            result = {"content": [{"type": "image", "image": nested}], "isError": False}
            write({"jsonrpc": "2.0", "id": rid, "result": result})
        elif name == "self.system.reboot":
            write({"jsonrpc": "2.0", "id": rid, "result": text("rebooting")})
        else:
            write(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Unknown tool: {name}"}}
            )
    else:
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if line.strip():
            handle(json.loads(line))


asyncio.run(main())
