"""Light Python fake devices for the runtime tests (no C++ simulator needed).

``FakeCore`` is a small MCP server shaped like a xiaozhi device: the tools of
``toolspec/default_device.yaml`` (plus a few test-only tools), paging with the next
tool's name as cursor, and optional stock-firmware quirks (error objects without
``code``, requests with non-numeric ids silently dropped). ``FakeWsDevice`` connects it
to a gateway like a xiaozhi device does; ``runtime_fake_stdio.py`` runs it on stdio.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any, Optional

from websockets.asyncio.client import ClientConnection, connect

from mcpgen.codegen.spec import mcp_json
from mcpgen.codegen.spec.loader import load_spec

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SPEC = ROOT / "toolspec" / "default_device.yaml"
LAMP_SPEC = ROOT / "toolspec" / "desk_lamp.yaml"
FAKE_STDIO = [sys.executable, str(Path(__file__).resolve().parent / "runtime_fake_stdio.py")]
PNG_1PX = base64.b64encode(
    bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
).decode()

EXTRA_TOOLS: list[dict[str, Any]] = [
    {
        "name": "self.test.fail",
        "description": "Always fails with a tool error.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "self.test.hang",
        "description": "Never answers.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "self.test.sleep",
        "description": "Answers after ms milliseconds with the given tag.",
        "inputSchema": {
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0}, "tag": {"type": "string"}},
            "required": ["ms"],
        },
    },
    {
        "name": "self.test.notify",
        "description": "Sends a notification, then answers true.",
        "inputSchema": {
            "type": "object",
            "properties": {"method": {"type": "string"}, "value": {"type": "integer"}},
            "required": ["method"],
        },
    },
    {
        "name": "self.test.add_tool",
        "description": "Adds a tool and sends notifications/tools/list_changed.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
    {
        "name": "self.test.big",
        "description": "Answers with n bytes of text.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {
        "name": "self.test.reply_id",
        "description": "Answers text '1' with the given JSON value as the reply id (hostile peers).",
        "inputSchema": {"type": "object", "properties": {"id": {}}, "required": ["id"]},
    },
    {
        "name": "self.test.text",
        "description": "Answers with the given text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "self.test.die",
        "description": "Drops the connection without answering.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


class Die(Exception):
    """Raised by a tool to make the fake drop its connection."""


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


class FakeCore:
    """The protocol logic of a fake device, independent of the transport."""

    def __init__(
        self,
        spec_path: Path = DEFAULT_SPEC,
        *,
        fingerprint: Optional[str] = "spec",
        page_size: int = 4,
        stock: bool = False,
        extra_tools: bool = True,
        name: Optional[str] = None,
    ) -> None:
        self.spec = load_spec(spec_path)
        self.tools: list[dict[str, Any]] = mcp_json.tools_list(self.spec, with_user_tools=True)
        if extra_tools:
            self.tools += [dict(t) for t in EXTRA_TOOLS]
        self.fingerprint = self.spec.fingerprint if fingerprint == "spec" else fingerprint
        self.page_size = page_size
        self.stock = stock
        self.name = name or self.spec.device.name
        self.received: list[dict[str, Any]] = []
        self.notifications: list[tuple[str, Any]] = []  # notifications received from the client
        self.state: dict[str, Any] = {"volume": 50, "brightness": 80, "theme": "light", "counter": 0}
        self.send_notification: Any = None  # set by the transport: async fn(method, params)

    # -- dispatch -----------------------------------------------------------------------

    async def handle(self, msg: Any) -> Optional[dict[str, Any]]:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return None
        self.received.append(msg)
        method = msg.get("method")
        rid = msg.get("id")
        if not isinstance(method, str):
            return None
        if "id" not in msg:
            self.notifications.append((method, msg.get("params")))
            return None
        if self.stock and not isinstance(rid, int):
            return None  # the reference firmware drops requests with non-numeric ids
        params = msg.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": self.name, "version": self.spec.device.version},
            }
            if self.fingerprint is not None:
                result["_meta"] = {"mcpgen/fingerprint": self.fingerprint}
            return self.ok(rid, result)
        if method == "tools/list":
            return self.ok(rid, self.list_page(params.get("cursor", ""), bool(params.get("withUserTools"))))
        if method == "ping":
            return self.ok(rid, {})
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name not in {t["name"] for t in self.tools}:
                return self.error(rid, -32601, f"Unknown tool: {name}")
            if name == "self.test.reply_id":
                return self.ok(args.get("id"), text("1"))
            res = await self.call(name, args)
            if res is None:
                return None
            return self.ok(rid, res)
        return self.error(rid, -32601, f"Method not found: {method}")

    def ok(self, rid: Any, result: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def error(self, rid: Any, code: int, message: str) -> dict[str, Any]:
        err: dict[str, Any] = {"message": message} if self.stock else {"code": code, "message": message}
        return {"jsonrpc": "2.0", "id": rid, "error": err}

    def list_page(self, cursor: str, with_user: bool) -> dict[str, Any]:
        tools = [t for t in self.tools if with_user or t.get("annotations", {}).get("audience") != ["user"]]
        start = 0
        if cursor:
            names = [t["name"] for t in tools]
            start = names.index(cursor) if cursor in names else len(tools)
        page = tools[start : start + self.page_size]
        out: dict[str, Any] = {"tools": page}
        if start + self.page_size < len(tools):
            out["nextCursor"] = tools[start + self.page_size]["name"]
        return out

    async def call(self, name: str, a: dict[str, Any]) -> Optional[dict[str, Any]]:
        st = self.state
        if name == "self.get_device_status":
            obj = {
                "audio_speaker": {"volume": st["volume"]},
                "screen": {"brightness": st["brightness"], "theme": st["theme"]},
                "battery": {"level": 77, "charging": False},
            }
            if self.stock:
                return text(json.dumps(obj))
            return {
                "content": [{"type": "text", "text": json.dumps(obj)}],
                "structuredContent": obj,
                "isError": False,
            }
        if name == "self.audio_speaker.set_volume":
            v = a.get("volume")
            if not isinstance(v, int) or not 0 <= v <= 100:
                return text("Invalid volume", error=True)
            st["volume"] = v
            return text("true")
        if name == "self.screen.set_brightness":
            st["brightness"] = a.get("brightness")
            return text("true")
        if name == "self.screen.set_theme":
            if a.get("theme") not in ("light", "dark"):
                return text("Invalid theme", error=True)
            st["theme"] = a["theme"]
            return text("true")
        if name == "self.reboot":
            return {"content": [], "isError": False}
        if name == "self.display.show_text":
            return text(f"shown: {a.get('text')}")
        if name == "self.sensor.read_temperature":
            return text("21.5" if a.get("unit", "celsius") == "celsius" else "70.7")
        if name == "self.counter.add":
            st["counter"] += a.get("amount", 1)
            return text(str(st["counter"]))
        if name == "self.network.set_hostname":
            return text(a["hostname"])
        if name == "self.camera.snapshot":
            return {
                "content": [{"type": "image", "data": PNG_1PX, "mimeType": "image/png"}],
                "isError": False,
            }
        if name == "self.test.fail":
            return text("the motor is stuck", error=True)
        if name == "self.test.hang":
            return None
        if name == "self.test.sleep":
            await asyncio.sleep(a["ms"] / 1000)
            return text(str(a.get("tag", "")))
        if name == "self.test.notify":
            if self.send_notification is not None:
                await self.send_notification(a["method"], {"value": a.get("value")})
            return text("true")
        if name == "self.test.add_tool":
            self.tools.append(
                {
                    "name": a["name"],
                    "description": "added",
                    "inputSchema": {"type": "object", "properties": {}},
                }
            )
            if self.send_notification is not None:
                await self.send_notification("notifications/tools/list_changed", None)
            return text("true")
        if name == "self.test.big":
            return text("x" * int(a["n"]))
        if name == "self.test.text":
            return text(str(a["text"]))
        if name == "self.test.die":
            raise Die()
        return text("true")


class FakeWsDevice:
    """A xiaozhi-style device connecting to a gateway over WebSocket."""

    def __init__(
        self,
        url: str,
        device_id: str,
        *,
        token: Optional[str] = "secret",
        core: Optional[FakeCore] = None,
        mcp: bool = True,
        send_hello: bool = True,
        protocol_version: str = "1",
        client_id: str = "client-uuid",
        max_size: Optional[int] = None,
    ) -> None:
        self.url = url
        self.device_id = device_id
        self.token = token
        self.core = core or FakeCore()
        self.mcp = mcp
        self.send_hello = send_hello
        self.protocol_version = protocol_version
        self.client_id = client_id
        self.max_size = max_size
        self.ws: Optional[ClientConnection] = None
        self.session_id: Optional[str] = None
        self.server_hello: Optional[dict[str, Any]] = None
        self.task: Optional[asyncio.Task] = None
        self.closed = asyncio.Event()
        self.paused = False
        self._calls: set[asyncio.Task] = set()

    def headers(self) -> dict[str, str]:
        h = {
            "Protocol-Version": self.protocol_version,
            "Device-Id": self.device_id,
            "Client-Id": self.client_id,
        }
        if self.token is not None:
            h["Authorization"] = f"Bearer {self.token}"
        return h

    async def start(self) -> FakeWsDevice:
        self.ws = await connect(self.url, additional_headers=self.headers(), max_size=self.max_size)
        self.core.send_notification = self.notify
        if self.send_hello:
            hello = {
                "type": "hello",
                "version": 1,
                "features": {"mcp": self.mcp},
                "transport": "websocket",
                "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
            }
            await self.ws.send(json.dumps(hello))
        self.task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def _run(self) -> None:
        assert self.ws is not None
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                if msg.get("type") == "hello":
                    self.server_hello = msg
                    self.session_id = msg.get("session_id")
                    continue
                if msg.get("type") != "mcp" or self.paused:
                    continue
                t = asyncio.get_running_loop().create_task(self._serve(msg["payload"]))
                self._calls.add(t)
                t.add_done_callback(self._calls.discard)
        except Exception:
            pass
        finally:
            self.closed.set()

    async def _serve(self, payload: Any) -> None:
        try:
            reply = await self.core.handle(payload)
        except Die:
            self.kill()
            return
        if reply is not None and self.ws is not None:
            try:
                await self.ws.send(
                    json.dumps({"session_id": self.session_id, "type": "mcp", "payload": reply})
                )
            except Exception:
                pass

    async def notify(self, method: str, params: Any) -> None:
        payload: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            payload["params"] = params
        assert self.ws is not None
        await self.ws.send(json.dumps({"session_id": self.session_id, "type": "mcp", "payload": payload}))

    async def send_raw(self, data: Any) -> None:
        assert self.ws is not None
        await self.ws.send(data)

    def kill(self) -> None:
        """Drops the TCP connection without a closing handshake (power loss)."""
        if self.ws is not None:
            self.ws.transport.abort()

    async def close(self) -> None:
        for t in list(self._calls):
            t.cancel()
        if self.ws is not None:
            await self.ws.close()
        if self.task is not None:
            try:
                await asyncio.wait_for(self.task, 5)
            except (TimeoutError, asyncio.CancelledError):
                pass
