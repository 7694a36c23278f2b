"""Glue between the bridge's HTTP guard (``http.py``) and the SDK's session manager.

The SDK's ``StreamableHTTPSessionManager`` serves both eras behind the guard: stateless
2026-07-28 requests and handshake-era sessions. Three small pieces adapt it:

* :class:`SessionManager` gives every session its own bounded event store
  (``event_store.py``) so a GET stream can resume with ``Last-Event-ID``;
* :class:`CapturedAnswer` holds one SDK answer back, so the guard can answer JSON where
  the SDK streams SSE (its answer format is one setting per manager, not per request),
  join a batch's answers, or read the version an ``initialize`` negotiated;
* :func:`replaying` hands the SDK a body the guard already read.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from .event_store import SessionEventStore

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's manager, with one :class:`SessionEventStore` per session.

    The manager takes one store for all sessions, but its transports file every
    session's GET stream under the same stream name, so a shared store would replay
    one session's events to another. This hook (the SDK's session admission) swaps in
    a store of the session's own; the SDK's transport reads it on every message.
    """

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None:
            transport._event_store = SessionEventStore()
        return transport


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields ``body`` (read and checked by the guard) once, then
    the client's own messages (so the SDK still sees a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _sse_data(stream: bytes) -> list[str]:
    """The ``data`` of each complete event in an SSE byte stream (empty ones included)."""
    text = stream.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    events = text.split("\n\n")[:-1]  # the last piece is not terminated yet
    found = []
    for event in events:
        lines = [line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")]
        if lines:
            found.append("\n".join(lines))
    return found


class CapturedAnswer:
    """One answer of the SDK, held back instead of sent (use :meth:`send` as its ``send``)."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = b""
        self.sse = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            self.headers = list(message.get("headers", []))
            self.sse = any(
                k.lower() == b"content-type" and v.startswith(b"text/event-stream") for k, v in self.headers
            )
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")

    def header(self, name: bytes) -> bytes | None:
        return next((v for k, v in self.headers if k.lower() == name), None)

    def message(self) -> Any:
        """The JSON-RPC answer: the JSON body, or the response (the message with the
        request's id) out of an SSE stream; None if there is none (202, or a stream
        that ended without one). Notifications on a request's stream (log messages
        from a handler) are dropped, as the SDK's own JSON mode drops them."""
        if not self.sse:
            try:
                return json.loads(self.body) if self.body else None
            except ValueError:
                return None
        for data in _sse_data(self.body):
            if not data:  # the SDK's priming event (an id for resumption, no message)
                continue
            try:
                message = json.loads(data)
            except ValueError:
                continue
            answers = isinstance(message, dict) and ("result" in message or "error" in message)
            if answers and "method" not in message:
                return message
        return None
