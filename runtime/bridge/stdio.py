"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout.

Nothing but MCP messages goes to the protocol output; logs go to stderr. The server ends
when its input reaches end-of-file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from .core import Bridge, Session
from .protocol import INVALID_REQUEST, PARSE_ERROR, RpcFailure, error_response, parse_message

log = logging.getLogger("mcpgen.runtime.bridge.stdio")

LINE_LIMIT = 16 * 1024 * 1024


def encode(message: Any) -> bytes:
    """One message as one line (JSON never contains a raw newline once encoded)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


async def _pipe_reader(stream: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    loop = asyncio.get_running_loop()
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
        return reader.readline
    except (ValueError, OSError, NotImplementedError):
        pass
    # A regular file or something else asyncio cannot watch: read it in a thread.
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        try:
            for line in iter(stream.readline, b""):
                loop.call_soon_threadsafe(queue.put_nowait, line)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, b"")

    threading.Thread(target=pump, name="bridge-stdin", daemon=True).start()
    return queue.get


class StdioServer:
    """Serves one MCP client over a pair of byte streams (stdin/stdout by default)."""

    def __init__(self, bridge: Bridge, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        self.bridge = bridge
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._stdout = stdout if stdout is not None else sys.stdout.buffer
        self._write_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.drain_timeout = 2.0
        """Seconds to finish requests in flight once stdin closes."""

    async def write(self, message: Any) -> None:
        data = encode(message)
        async with self._write_lock:
            try:
                self._stdout.write(data)
                self._stdout.flush()
            except (BrokenPipeError, ValueError, OSError):
                log.debug("client output closed; dropping a message")

    async def _request(self, session: Session, message: dict[str, Any]) -> None:
        reply = await self.bridge.handle(session, message, self.write)
        if reply.message is not None:
            await self.write(reply.message)

    async def _batch(self, session: Session, batch: list[Any]) -> None:
        if not batch or not self.bridge.batch_allowed(session):
            reason = (
                "empty batch" if not batch else "JSON-RPC batches are only allowed in protocol 2025-03-26"
            )
            await self.write(error_response(None, INVALID_REQUEST, reason))
            return
        responses = await self.bridge.handle_batch(session, batch, self.write)
        if responses:
            await self.write(responses)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def serve(self) -> None:
        readline = await _pipe_reader(self._stdin)
        session = self.bridge.new_session("stdio", push=self.write)
        try:
            while True:
                try:
                    line = await readline()
                except (ValueError, asyncio.LimitOverrunError):
                    await self.write(error_response(None, PARSE_ERROR, "message too long"))
                    continue
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    message = parse_message(line)
                except RpcFailure as failure:
                    await self.write(error_response(None, failure.code, failure.message))
                    continue
                if isinstance(message, list):
                    self._spawn(self._batch(session, message))
                elif isinstance(message, dict) and "id" in message and "method" in message:
                    if message.get("method") == "initialize":
                        await self._request(session, message)  # settles the version first
                    else:
                        self._spawn(self._request(session, message))
                else:  # notifications and stray responses: in order, right away
                    reply = await self.bridge.handle(session, message, self.write)
                    if reply.message is not None:
                        await self.write(reply.message)
        finally:
            if self._tasks:  # input closed: let answers already under way go out, briefly
                await asyncio.wait(list(self._tasks), timeout=self.drain_timeout)
            self.bridge.close_session(session)
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)


def protect_stdout() -> BinaryIO:
    """Keep the protocol channel clean: return a private handle on the real stdout and
    point file descriptor 1 and ``sys.stdout`` at stderr, so a stray ``print`` from any
    library (or a child process inheriting stdout) can never corrupt the MCP stream."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb", buffering=0)


async def serve_stdio(bridge: Bridge, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve ``bridge`` on stdin/stdout until the client closes stdin."""
    await StdioServer(bridge, stdin, stdout).serve()
