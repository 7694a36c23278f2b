"""A reply decoder written the way the open-source xiaozhi backend does it.

Modelled on xiaozhi-esp32-server's device MCP client (``core/providers/tools/device_mcp``:
``mcp_handler.handle_mcp_message``, ``mcp_client.MCPClient``, ``call_mcp_tool``): the
frame is parsed with the standard ``json`` module, the envelope and payload are probed
as dicts, ids are coerced with ``int(...)``, the pending-call table is a dict of futures
guarded by an ``asyncio.Lock`` (taken for every registration and resolution), and the
caller turns the raw result into a value by digging out ``content[0]["text"]``.

Written here, plainly, as the baseline a user would otherwise copy; it is not imported
from that project.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any


class RefClient:
    """The state a xiaozhi-style backend keeps per device connection."""

    def __init__(self) -> None:
        self.call_results: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 1
        self.lock = asyncio.Lock()
        self.tools: dict[str, dict[str, Any]] = {}

    async def register_call_result_future(self, rid: int, future: asyncio.Future[Any]) -> None:
        async with self.lock:
            self.call_results[rid] = future

    async def resolve_call_result(self, rid: int, result: Any) -> None:
        async with self.lock:
            if rid in self.call_results:
                future = self.call_results.pop(rid)
                if not future.done():
                    future.set_result(result)

    async def reject_call_result(self, rid: int, exc: Exception) -> None:
        async with self.lock:
            if rid in self.call_results:
                future = self.call_results.pop(rid)
                if not future.done():
                    future.set_exception(exc)


async def handle_frame(client: RefClient, message: str | bytes) -> None:
    """One incoming websocket text frame, as the reference connection handler routes it."""
    msg_json = json.loads(message)
    if not isinstance(msg_json, dict):
        return
    if msg_json.get("type") != "mcp":
        return
    payload = msg_json.get("payload")
    if not isinstance(payload, dict):
        return
    if "result" in payload:
        result = payload["result"]
        msg_id = int(payload.get("id", 0))
        if msg_id in client.call_results:
            await client.resolve_call_result(msg_id, result)
            return
    elif "method" in payload:
        return
    elif "error" in payload:
        error_data = payload["error"]
        error_msg = error_data.get("message", "unknown error")
        msg_id = int(payload.get("id", 0))
        if msg_id in client.call_results:
            await client.reject_call_result(msg_id, Exception(f"MCP error: {error_msg}"))


def call_value(raw_result: Any) -> Any:
    """What ``call_mcp_tool`` returns from a resolved raw result: the first text."""
    if isinstance(raw_result, dict):
        if raw_result.get("isError") is True:
            raise RuntimeError(f"tool error: {raw_result.get('error', 'no message')}")
        content = raw_result.get("content")
        if isinstance(content, list) and len(content) > 0:
            if isinstance(content[0], dict) and "text" in content[0]:
                return content[0]["text"]
        return raw_result
    return str(raw_result)


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Drives a coroutine that never really suspends (an uncontended lock) to its end.

    The reference runs inside the event loop; stepping the coroutine directly keeps the
    event loop's own scheduling cost out of the figure (in its favour).
    """
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the reference decoder suspended unexpectedly")
