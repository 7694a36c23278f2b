"""The bridge's SDK ``Server`` in process, spoken to with raw JSON-RPC dicts.

Tests of the bridge's own logic (names, device churn, cancellation, events) run through
the same SDK handlers stdio and HTTP use, with nothing in between to parse.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.bridge.sdk_server import SdkConnection, build_server, initialization_options


class RawClient:
    """One client connection to ``bridge``; ``notifications`` collects what the server
    sends that is not a response (pushed list_changed, log messages, updates)."""

    def __init__(self, bridge: Bridge, version: str | None = "2025-06-18") -> None:
        self.bridge = bridge
        self.version = version
        self.notifications: list[dict[str, Any]] = []
        self.initialize_result: dict[str, Any] | None = None
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[Any]] = []

    async def __aenter__(self) -> RawClient:
        self.connection = SdkConnection(self.bridge, "stdio")
        server = build_server(self.bridge, self.connection)
        self._to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](64)
        server_out, from_server = anyio.create_memory_object_stream[SessionMessage](64)
        self._tasks = [
            asyncio.ensure_future(server.run(server_in, server_out, initialization_options(server))),
            asyncio.ensure_future(self._read(from_server)),
        ]
        if self.version is not None:
            info = {"name": "t", "version": "0"}
            params = {"protocolVersion": self.version, "capabilities": {}, "clientInfo": info}
            answer = await self.request({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
            self.initialize_result = answer["result"]
            await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await self.settle()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._to_server.aclose()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.connection.close()

    async def _read(self, stream: Any) -> None:
        async for item in stream:
            message = item.message.model_dump(by_alias=True, exclude_unset=True, mode="json")
            waiter = self._waiting.pop(message.get("id"), None) if "method" not in message else None
            if waiter is not None:
                waiter.set_result(message)
            else:
                self.notifications.append(message)

    async def send(self, message: dict[str, Any]) -> None:
        await self._to_server.send(SessionMessage(jsonrpc_message_adapter.validate_python(message)))

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its response (result or error)."""
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[message["id"]] = waiter
        await self.send(message)
        return await asyncio.wait_for(waiter, 10)

    async def settle(self) -> None:
        """Let pushed messages through the SDK's streams."""
        await asyncio.sleep(0.05)

    async def wait_for(self, count: int) -> None:
        for _ in range(100):
            if len(self.notifications) >= count:
                return
            await asyncio.sleep(0.02)
