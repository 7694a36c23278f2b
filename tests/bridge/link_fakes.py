"""Pretend devices on the links the bridge command line attaches besides processes: a
serial line (pyserial's ``socket://`` URL: newline-delimited JSON-RPC over TCP) and an MQTT
broker (the topics of runtime/links/mqtt/gateway.py). Both answer with :func:`answer`, whose
``self.button.press`` tool sends a device event before its result."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

TOOLS = [
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
        "name": "self.button.press",
        "description": "Press the button (the device reports a button_pressed event).",
        "inputSchema": {"type": "object", "properties": {}},
    },
]

Send = Callable[[dict[str, Any]], Awaitable[None]]


async def answer(message: dict[str, Any], send: Send, name: str) -> None:
    """The device side of one JSON-RPC message."""
    method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if rid is None:
        return
    if method == "initialize":
        info = {"name": name, "version": "1"}
        result: dict[str, Any] = {
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": info,
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "self.button.press":
        event = {"jsonrpc": "2.0", "method": "notifications/events/button_pressed", "params": {"count": 1}}
        await send(event)
        result = {"content": [{"type": "text", "text": "pressed"}], "isError": False}
    elif method == "tools/call":
        volume = (params.get("arguments") or {}).get("volume")
        result = {"content": [{"type": "text", "text": f"volume {volume} on {name}"}], "isError": False}
    else:
        await send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
        return
    await send({"jsonrpc": "2.0", "id": rid, "result": result})


@contextlib.asynccontextmanager
async def serial_device(name: str = "uart-fake") -> Any:
    """A device behind ``socket://127.0.0.1:<port>``; yields that URL."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def send(message: dict[str, Any]) -> None:
            writer.write(json.dumps(message).encode() + b"\n")
            await writer.drain()

        writer.write(b"boot: rst:0x1 (POWERON)\n")  # a UART's boot noise, which the runtime skips
        with contextlib.suppress(ConnectionError):
            while line := await reader.readline():
                if line.strip():
                    await answer(json.loads(line), send, name)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"socket://127.0.0.1:{port}"
    finally:
        server.close()


# -- MQTT ------------------------------------------------------------------------------------


def mosquitto() -> str | None:
    return shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/bin:/sbin")


@contextlib.contextmanager
def broker(workdir: Path) -> Iterator[int]:
    """A Mosquitto broker on 127.0.0.1 (anonymous access); yields its port."""
    exe = mosquitto()
    assert exe is not None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    lines = [f"listener {port} 127.0.0.1", "allow_anonymous true", "persistence false"]
    if os.geteuid() == 0:
        lines.append("user root")  # do not drop to the 'mosquitto' user
    conf = workdir / "mosquitto.conf"
    conf.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen([exe, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert proc.poll() is None and time.monotonic() < deadline, "mosquitto did not start"
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def mqtt_device(port: int, device_id: str, stop: asyncio.Event, prefix: str = "mcpgen") -> None:
    """A device speaking the MQTT gateway's protocol until ``stop`` is set."""
    import aiomqtt

    up, down, state = (f"{prefix}/{device_id}/{leaf}" for leaf in ("up", "down", "state"))
    will = aiomqtt.Will(state, b"offline", qos=1, retain=True)
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"dev-{device_id}", will=will) as client:
        session: dict[str, Any] = {}

        async def send(message: dict[str, Any]) -> None:
            envelope = {"session_id": session.get("id"), "type": "mcp", "payload": message}
            await client.publish(up, json.dumps(envelope).encode(), qos=1)

        async def hello() -> None:
            greeting = {
                "type": "hello",
                "version": 3,
                "transport": "mqtt",
                "features": {"mcp": True},
                "client_id": f"dev-{device_id}",
            }
            await client.publish(up, json.dumps(greeting).encode(), qos=1)

        await client.subscribe(down, qos=1)
        await client.publish(state, b"online", qos=1, retain=True)
        await hello()

        async def serve() -> None:
            async for incoming in client.messages:
                msg = json.loads(bytes(incoming.payload))  # type: ignore[arg-type]
                if msg.get("type") == "hello":
                    session["id"] = msg.get("session_id")
                elif msg.get("type") == "goodbye":
                    await hello()
                elif msg.get("type") == "mcp" and isinstance(msg.get("payload"), dict):
                    await answer(msg["payload"], send, device_id)

        server = asyncio.ensure_future(serve())
        await stop.wait()
        await client.publish(state, b"offline", qos=1, retain=True)
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server
