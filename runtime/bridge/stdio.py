"""The stdio transport: the SDK's stdio server, behind a small message filter.

The SDK (``mcp.server.stdio.stdio_server`` and the low-level ``Server`` built in
``sdk_server.py``) reads and writes newline-delimited JSON-RPC and serves it. The filter
in front of it (:class:`_StdioFilter`) adds what the SDK does not do and the bridge's
tests pin:

* a message that is not well-formed JSON-RPC 2.0 (``42``, ``"jsonrpc": "1.0"``, an id
  that is null or fractional, ``"params": [1]``) is answered with ``-32600``
  (``protocol.invalid_message``): the SDK drops such messages without an answer;
* duplicate keys and nesting deeper than 64 levels are refused (``protocol.parse_message``,
  shared with HTTP): the SDK's parser lets the last duplicate win, and a checker and a
  device that read different tool names is the ambiguity the bridge closes;
* JSON-RPC batches in sessions that negotiated 2025-03-26, the one revision that has
  them (the SDK refuses batches in every revision): the filter splits a batch into
  single messages for the SDK and joins their responses into one array again;
* when stdin closes, requests still under way get up to ``drain_timeout`` seconds to
  answer before the SDK's loop ends (it cancels what is in flight at end-of-file).

Nothing but MCP messages goes to the protocol output; logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, BinaryIO

from mcp.server.stdio import stdio_server

from .core import Bridge, _id_key
from .protocol import (
    BATCH_VERSIONS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RpcFailure,
    bounded_error,
    error_response,
    invalid_message,
    parse_message,
)
from .sdk_server import SdkConnection, build_server, initialization_options

log = logging.getLogger("mcpgen.runtime.bridge.stdio")

LINE_LIMIT = 16 * 1024 * 1024
INITIALIZE_WAIT = 30.0
"""Seconds input waits for the answer to ``initialize`` before reading on regardless."""


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


class _StdioFilter:
    """Sits between the byte streams and the SDK's stdio server (see the module doc).

    The SDK reads lines with ``async for line in stdin`` and writes with
    ``await stdout.write(text)`` / ``await stdout.flush()``; this object is both ends.
    """

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, drain_timeout: float) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self.drain_timeout = drain_timeout
        self.version: str | None = None
        self._initialize_ids: dict[str, asyncio.Event] = {}
        """``initialize`` requests under way; input waits for each (it settles the version)."""
        self._pending: set[str] = set()
        """Requests passed to the SDK and not yet answered (keys from ``_id_key``)."""
        self._idle = asyncio.Event()
        self._idle.set()
        self._batches: list[tuple[set[str], list[Any]]] = []
        """Open batches: the request ids still unanswered, and the responses so far."""

    # ---------------------------------------------------------------- client -> SDK

    def _admit(self, message: Any) -> str:
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict):  # a cancelled request gets no answer: stop waiting for one
                self._answered(_id_key(params.get("requestId")))
        if isinstance(message, dict) and "id" in message and isinstance(message.get("method"), str):
            key = _id_key(message["id"])
            if message["method"] == "initialize":
                self._initialize_ids[key] = asyncio.Event()
            self._pending.add(key)
            self._idle.clear()
        return json.dumps(message, ensure_ascii=False)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        readline = await _pipe_reader(self._stdin)
        while True:
            try:
                line = await readline()
            except (ValueError, asyncio.LimitOverrunError):
                self._send(error_response(None, PARSE_ERROR, "message too long"))
                continue
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = parse_message(line)
            except RpcFailure as failure:
                self._send(error_response(None, failure.code, failure.message))
                continue
            if not isinstance(message, list):
                refusal = invalid_message(message)
                if refusal is not None:
                    self._send(refusal)
                    continue
                yield self._admit(message)
                if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
                    answered = self._initialize_ids.get(_id_key(message["id"]))
                    if answered is not None:  # a batch right behind it must see the version
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(answered.wait(), INITIALIZE_WAIT)
                continue
            if not message or self.version not in BATCH_VERSIONS:
                reason = "empty batch"
                if message:
                    reason = "JSON-RPC batches are only allowed in protocol 2025-03-26"
                self._send(error_response(None, INVALID_REQUEST, reason))
                continue
            if any(isinstance(m, dict) and m.get("method") == "initialize" for m in message):
                self._send(error_response(None, INVALID_REQUEST, "initialize must not be in a batch"))
                continue
            refusals = [r for r in map(invalid_message, message) if r is not None]
            members = [m for m in message if invalid_message(m) is None]
            ids = {_id_key(m["id"]) for m in members if "id" in m and "method" in m}
            if ids:
                self._batches.append((ids, refusals))  # the refusals join the batch's answer
            elif refusals:
                self._send(refusals)
            for member in members:
                yield self._admit(member)
        # End of input: let answers already under way go out, briefly.
        try:
            await asyncio.wait_for(self._idle.wait(), self.drain_timeout)
        except TimeoutError:
            log.info("stdin closed with %d requests unanswered", len(self._pending))

    # ---------------------------------------------------------------- SDK -> client

    def _answered(self, key: str) -> None:
        self._pending.discard(key)
        if not self._pending:
            self._idle.set()

    def _send(self, message: Any) -> None:
        try:
            self._stdout.write(encode(message))
            self._stdout.flush()
        except (BrokenPipeError, ValueError, OSError):
            log.debug("client output closed; dropping a message")

    async def write(self, text: str) -> None:
        message = bounded_error(json.loads(text))
        if isinstance(message, dict) and "method" not in message and "id" in message:
            key = _id_key(message["id"])
            answered = self._initialize_ids.pop(key, None)
            if answered is not None:
                answered.set()
                result = message.get("result")
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self.version = result["protocolVersion"]
            self._answered(key)
            for ids, responses in self._batches:
                if key in ids:
                    ids.discard(key)
                    responses.append(message)
                    if not ids:
                        self._batches.remove((ids, responses))
                        self._send(responses)
                    return
        self._send(message)

    async def flush(self) -> None:
        return None


class StdioServer:
    """Serves one MCP client over a pair of byte streams (stdin/stdout by default)."""

    def __init__(self, bridge: Bridge, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        self.bridge = bridge
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._stdout = stdout if stdout is not None else sys.stdout.buffer
        self.drain_timeout = 2.0
        """Seconds to finish requests in flight once stdin closes."""

    async def serve(self) -> None:
        connection = SdkConnection(self.bridge, "stdio")
        server = build_server(self.bridge, connection)
        front = _StdioFilter(self._stdin, self._stdout, self.drain_timeout)
        try:
            async with stdio_server(front, front) as (read_stream, write_stream):  # type: ignore[arg-type]
                await server.run(read_stream, write_stream, initialization_options(server))
        finally:
            connection.close()


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
