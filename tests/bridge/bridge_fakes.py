"""In-memory stand-ins for runtime.Device, shaped like the Device contract."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpgen.human import META_HUMAN


@dataclass(frozen=True)
class FakeTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    user_only: bool = False
    raw: dict[str, Any] = field(default_factory=dict)


def _int(name: str, lo: int, hi: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "integer", "minimum": lo, "maximum": hi}},
        "required": [name],
    }


def default_tools() -> list[FakeTool]:
    return [
        FakeTool("self.get_device_status", "Device status as JSON.", {"type": "object", "properties": {}}),
        FakeTool("self.audio_speaker.set_volume", "Set the speaker volume (0-100).", _int("volume", 0, 100)),
        FakeTool(
            "self.light.set_rgb",
            "Set the light colour.",
            {
                "type": "object",
                "properties": {c: {"type": "integer", "minimum": 0, "maximum": 255} for c in "rgb"},
                "required": ["r", "g", "b"],
            },
        ),
        FakeTool("self.slow.count", "Count slowly, reporting progress.", _int("steps", 1, 1000)),
        FakeTool("self.fail", "Always fails.", {"type": "object", "properties": {}}),
        FakeTool("self.reboot", "Reboot (user only).", {"type": "object", "properties": {}}, user_only=True),
    ]


def human_tools() -> list[FakeTool]:
    """The fake device's tools, set_rgb asking the person for `b` and a confirmation, and
    the status tool asking for a confirmation alone."""
    marked = {
        "self.light.set_rgb": {"confirm": "Change the lamp colour?", "params": {"b": "How much blue?"}},
        "self.get_device_status": {"confirm": "Read the status?"},
    }
    out = []
    for tool in default_tools():
        if tool.name in marked:
            meta = {META_HUMAN: marked[tool.name]}
            raw = {"name": tool.name, "inputSchema": tool.input_schema, "_meta": meta}
            tool = FakeTool(tool.name, tool.description, tool.input_schema, raw=raw)
        out.append(tool)
    return out


class FakeDevice:
    """Implements the Device contract the bridge uses, with a few scripted tools."""

    def __init__(
        self, device_id: str = "sim-1", tools: list[FakeTool] | None = None, step: float = 0.05
    ) -> None:
        self.device_id = device_id
        self.tools: list[FakeTool] = list(tools) if tools is not None else default_tools()
        self.closed = False
        self.step = step
        self.volume = 50
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.cancelled: list[str] = []
        self.progress_tokens: list[Any] = []
        self._callbacks: list[Callable[[str, dict[str, Any]], Any]] = []
        self._pending: set[asyncio.Future[Any]] = set()

    def on_notification(self, callback: Callable[[str, dict[str, Any]], Any]) -> Callable[[], None]:
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        for callback in list(self._callbacks):
            callback(method, params or {})

    def set_tools(self, tools: list[FakeTool]) -> None:
        self.tools = tools
        self.notify("notifications/tools/list_changed")

    async def close(self) -> None:
        self.closed = True
        for fut in list(self._pending):
            if not fut.done():
                fut.set_exception(ConnectionError("device disconnected"))

    async def call_raw(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        timeout: float | None = None,
        progress_token: Any = None,
    ) -> dict[str, Any]:
        if self.closed:
            raise ConnectionError("device disconnected")
        arguments = arguments or {}
        self.calls.append((name, arguments))
        self.progress_tokens.append(progress_token)
        if name == "self.get_device_status":
            return _text(json.dumps({"volume": self.volume, "id": self.device_id}))
        if name == "self.audio_speaker.set_volume":
            self.volume = arguments["volume"]
            return {"content": [{"type": "text", "text": "true"}], "structuredContent": {"ok": True}}
        if name == "self.light.set_rgb":
            return _text(f"rgb {arguments['r']},{arguments['g']},{arguments['b']}")
        if name == "self.fail":
            return {"content": [{"type": "text", "text": "the motor is stuck"}], "isError": True}
        if name == "self.slow.count":
            try:
                for i in range(1, arguments["steps"] + 1):
                    await self._sleep(self.step)
                    if progress_token is not None:
                        self.notify(
                            "notifications/progress",
                            {"progressToken": progress_token, "progress": i, "total": arguments["steps"]},
                        )
            except asyncio.CancelledError:
                self.cancelled.append(name)
                raise
            return _text(f"counted to {arguments['steps']}")
        if name == "self.reboot":
            return _text("rebooting")
        raise RuntimeError(f"unknown tool {name}")

    async def _sleep(self, seconds: float) -> None:
        # close() fails the sleeps in progress; a call between two sleeps when it ran (its
        # last sleep already over, not yet resumed) must fail at its next step, not go on.
        if self.closed:
            raise ConnectionError("device disconnected")
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.add(fut)
        handle = asyncio.get_running_loop().call_later(seconds, lambda: fut.done() or fut.set_result(None))
        try:
            await fut
        finally:
            handle.cancel()
            self._pending.discard(fut)


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}
