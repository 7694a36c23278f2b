"""The Streamable HTTP transport: one MCP endpoint (``/mcp``), a plain ASGI app.

Two eras share the endpoint:

* **Legacy sessions** (2025-03-26 .. 2025-11-25, and 2024-11-05 clients that use this
  transport): ``initialize`` mints an ``Mcp-Session-Id``; later requests must carry it
  (400 without, 404 for an unknown or terminated one); ``DELETE`` ends the session;
  ``GET`` opens the session's SSE stream for ``notifications/tools/list_changed``.
* **Stateless 2026-07-28**: every POST stands alone; the ``MCP-Protocol-Version``,
  ``Mcp-Method`` and ``Mcp-Name`` headers must match the body (400 + -32020 otherwise),
  an unsupported version is 400 + -32022, an unknown method 404 + -32601, and
  ``subscriptions/listen`` answers with a long-lived SSE stream. Closing a response
  stream cancels the request.

Served by uvicorn (installed with the MCP SDK) in :func:`serve_http`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from .core import Bridge, Reply, Session
from .header_timeout import HEADER_TIMEOUT, header_timeout_protocol
from .protocol import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    RpcFailure,
    error_response,
    parse_message,
)
from .sdk_server import SdkConnection, build_server

log = logging.getLogger("mcpgen.runtime.bridge.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
MAX_BODY = 4 * 1024 * 1024
BODY_TIMEOUT = 30.0
EVENT_HISTORY = 256
"""GET-stream events kept per legacy session for resumption (``Last-Event-ID``)."""
SESSION_IDLE_TIMEOUT = 30 * 60.0
"""Seconds a legacy session may go without a request (and without an open GET stream)."""
_TIMED_OUT = b"\x00timed-out"
_TOO_LARGE = b"\x00too-large"
REQUEST_CANCELLED = -32000


def _json_bytes(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def _split_host(host: str) -> tuple[str, int | None] | None:
    """``Host`` header value -> (lower-case name without brackets, port or None); None if malformed."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, colon, port_text_raw = host.partition(":")
        port_text = port_text_raw if colon else None
    if not name:
        return None
    if port_text is None:
        return name, None
    if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
        return None
    return name, int(port_text)


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _bearer(authorization: str | None) -> str | None:
    """The token of ``Authorization: Bearer <token>``; the scheme is case-insensitive (RFC 9110)."""
    parts = (authorization or "").strip().split(None, 1)
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1].strip()
    return None


def default_allowed_hosts(bind_host: str) -> frozenset[str]:
    """Host names (besides IP literals and localhost) accepted for a bridge bound to ``bind_host``.

    A name the bridge is bound to counts; a wildcard bind also accepts this machine's own
    names. Anything else must be configured (``--allowed-host``).
    """
    names = {bind_host.strip("[]").lower()} - WILDCARD_HOSTS
    if bind_host.strip("[]") in WILDCARD_HOSTS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(n for n in names if n)


def _accepts(accept: str, wanted: str) -> bool:
    major = wanted.split("/")[0]
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in (wanted, f"{major}/*", "*/*"):
            return True
    return False


def _event_frame(event_id: int | None, message: Any) -> bytes:
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return head + b"event: message\ndata: " + _json_bytes(message) + b"\n\n"


@dataclass
class _HttpSession:
    session: Session
    stream: _SseStream | None = None
    last_used: float = field(default_factory=time.monotonic)
    history: deque[tuple[int, bytes]] = field(default_factory=lambda: deque(maxlen=EVENT_HISTORY))
    """The session's last GET-stream events (id, SSE frame), kept for ``Last-Event-ID``."""
    next_event_id: int = 1

    def record(self, message: Any) -> bytes:
        """Number a GET-stream message and keep it for resumption; returns its SSE frame."""
        frame = _event_frame(self.next_event_id, message)
        self.history.append((self.next_event_id, frame))
        self.next_event_id += 1
        return frame

    def frames_after(self, last_event_id: str | None) -> list[bytes]:
        """What a client resuming after ``last_event_id`` missed (all that is kept, if it
        is older than that); nothing for a missing or foreign id."""
        text = (last_event_id or "").strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 20):  # not "²", not 5000 digits
            return []
        last = int(text)
        if last >= self.next_event_id:
            return []
        return [frame for event_id, frame in self.history if event_id > last]


class _SseStream:
    """One text/event-stream response: serialized writes, no writes after close."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._lock = asyncio.Lock()
        self.closed = False
        self.ended = asyncio.Event()

    async def start(self, extra_headers: list[tuple[bytes, bytes]] | None = None) -> None:
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache, no-transform"),
            (b"x-accel-buffering", b"no"),
            *(extra_headers or []),
        ]
        await self._send({"type": "http.response.start", "status": 200, "headers": headers})

    async def _write(self, data: bytes) -> None:
        async with self._lock:
            if self.closed:
                return
            try:
                await self._send({"type": "http.response.body", "body": data, "more_body": True})
            except Exception:  # the client went away
                self.closed = True
                self.ended.set()

    async def event(self, message: Any) -> None:
        await self._write(_event_frame(None, message))

    async def frames(self, data: bytes) -> None:
        await self._write(data)

    async def comment(self) -> None:
        await self._write(b":\n\n")

    async def close(self) -> None:
        async with self._lock:
            self.ended.set()
            if self.closed:
                return
            self.closed = True
            with contextlib.suppress(Exception):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})


class StreamableHttpApp:
    """An ASGI application serving a :class:`Bridge` at one MCP endpoint.

    Every request passes these checks first (see docs/security.md):

    * ``Host`` (DNS-rebinding protection): an IP literal, ``localhost``, or a name in
      ``allowed_hosts``; its port, when present, must be ``port`` (when known). ``"*"`` in
      ``allowed_hosts`` turns the check off. Else HTTP 421.
    * ``Origin`` (browsers only; requests without one pass): the bridge's own origin
      (``http://`` + the request's ``Host``) or one of ``allowed_origins`` (``"*"``: any).
      A page on another localhost port is another origin and is refused. Else HTTP 403.
    * ``client_token``: if set, ``Authorization: Bearer <token>`` (scheme in any case,
      compared in constant time). Else HTTP 401.

    Args:
        allowed_origins: browser ``Origin`` values allowed besides the bridge's own (``*``: any).
        allowed_hosts: ``Host`` names allowed besides IP literals and localhost (``*``: any).
        port: the port the bridge listens on (``serve_http`` sets it once bound).
        client_token: if set, clients must send ``Authorization: Bearer <token>``.
        max_sessions: legacy sessions kept; the least recently used is dropped beyond it.
        keepalive: seconds between SSE comment lines on long-lived streams.
        body_timeout: seconds a request body may take to arrive in full (then HTTP 408 and
            the connection is closed), so stalled uploads cannot pile up.
        session_idle_timeout: seconds a legacy session may go unused (no request, no open
            GET stream) before it is ended; its id then gets 404, which tells a client to
            start over with ``initialize``. None: sessions live until DELETE or eviction.
    """

    def __init__(
        self,
        bridge: Bridge,
        *,
        path: str = "/mcp",
        allowed_origins: Collection[str] = (),
        allowed_hosts: Collection[str] = (),
        port: int | None = None,
        client_token: str | None = None,
        max_sessions: int = 256,
        keepalive: float = 15.0,
        body_timeout: float = BODY_TIMEOUT,
        session_idle_timeout: float | None = SESSION_IDLE_TIMEOUT,
    ) -> None:
        self.bridge = bridge
        self.session_idle_timeout = session_idle_timeout
        self.path = path.rstrip("/") or "/"
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.allowed_hosts = {h.strip("[]").lower() for h in allowed_hosts} | LOCAL_NAMES
        self.port = port
        self.body_timeout = body_timeout
        self.client_token = client_token
        self.max_sessions = max_sessions
        self.keepalive = keepalive
        self.sessions: dict[str, _HttpSession] = {}
        self._sdk: tuple[StreamableHTTPSessionManager, asyncio.Task[None]] | None = None
        """The SDK's session manager serving 2026-07-28 requests, started on first use."""

    # ------------------------------------------------------------------ plumbing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        self._expire_idle_sessions()
        headers = self._headers(scope)
        host = headers.get("host")
        if not self.host_allowed(host):
            await self._error(
                send,
                421,
                INVALID_REQUEST,
                f"Misdirected Request: Host {host!r} is not this bridge (allow it with --allowed-host)",
            )
            return
        path = scope.get("path", "").rstrip("/") or "/"
        if path != self.path:
            await self._plain(send, 404, b"not found")
            return
        if not self.origin_allowed(headers.get("origin"), host):
            await self._error(
                send, 403, INVALID_REQUEST, "Forbidden: origin not allowed (allow it with --allowed-origin)"
            )
            return
        if not self.client_authorized(headers.get("authorization")):
            await self._error(
                send, 401, INVALID_REQUEST, "Unauthorized", extra=[(b"www-authenticate", b"Bearer")]
            )
            return
        method = scope.get("method", "GET")
        if method == "POST":
            await self._post(scope, headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await self._error(
                send, 405, INVALID_REQUEST, "Method Not Allowed", extra=[(b"allow", b"GET, POST, DELETE")]
            )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def close(self) -> None:
        for state in list(self.sessions.values()):
            await self._end_session(state)
        if self._sdk is not None:
            task = self._sdk[1]
            self._sdk = None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _expire_idle_sessions(self) -> None:
        """End legacy sessions unused for ``session_idle_timeout`` (checked on each request:
        an idle server holds at most ``max_sessions`` of them, so no timer is needed)."""
        if self.session_idle_timeout is None:
            return
        cutoff = time.monotonic() - self.session_idle_timeout
        for state in list(self.sessions.values()):
            streaming = state.stream is not None and not state.stream.closed
            if state.last_used < cutoff and not streaming and not state.session.inflight:
                log.info("session %s idle for %.0f s: ended", state.session.id, self.session_idle_timeout)
                self.sessions.pop(state.session.id, None)
                self._spawn_end(state)

    @staticmethod
    def _headers(scope: Scope) -> dict[str, str]:
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope.get("headers", []):
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return headers

    def host_allowed(self, host: str | None) -> bool:
        """The ``Host`` header names this bridge (see the class docstring)."""
        if "*" in self.allowed_hosts:
            return True
        if host is None:
            return False
        split = _split_host(host)
        if split is None:
            return False
        name, port = split
        if port is not None and self.port is not None and port != self.port:
            return False
        # An IP literal cannot be the product of DNS rebinding (that needs a name the
        # attacker controls); names must be known.
        return _is_ip_literal(name) or name in self.allowed_hosts

    def origin_allowed(self, origin: str | None, host: str | None = None) -> bool:
        """No Origin (not a browser), the bridge's own origin, or one configured explicitly."""
        if origin is None:
            return True
        origin = origin.strip().rstrip("/").lower()
        if "*" in self.allowed_origins or origin in self.allowed_origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return host is not None and parts.scheme == "http" and parts.netloc == host.strip().lower()

    def client_authorized(self, authorization: str | None) -> bool:
        if self.client_token is None:
            return True
        token = _bearer(authorization)
        return token is not None and hmac.compare_digest(token.encode(), self.client_token.encode())

    @staticmethod
    async def _plain(
        send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        headers = [(b"content-type", b"text/plain; charset=utf-8"), *(extra or [])]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    async def _json(
        send: Send, status: int, message: Any, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        headers = [(b"content-type", b"application/json"), *(extra or [])]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": _json_bytes(message)})

    async def _error(
        self,
        send: Send,
        status: int,
        code: int,
        message: str,
        data: Any = None,
        *,
        request_id: Any = None,
        extra: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        await self._json(send, status, error_response(request_id, code, message, data), extra)

    @staticmethod
    async def _empty(send: Send, status: int, extra: list[tuple[bytes, bytes]] | None = None) -> None:
        await send({"type": "http.response.start", "status": status, "headers": list(extra or [])})
        await send({"type": "http.response.body", "body": b""})

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body; None if the client left, or a sentinel when too large or too slow."""
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                return _TIMED_OUT
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                return _TOO_LARGE
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    # ------------------------------------------------------------------ sessions

    def _add_session(self, session: Session) -> _HttpSession:
        state = _HttpSession(session)

        async def push(message: dict[str, Any]) -> None:
            # Out-of-band notifications go to the session's GET stream, if one is open,
            # and into its history, so a client that reconnects with Last-Event-ID gets
            # what it missed (resumability; bounded by EVENT_HISTORY).
            frame = state.record(message)
            if state.stream is not None and not state.stream.closed:
                await state.stream.frames(frame)

        session.push = push
        self.sessions[session.id] = state
        while len(self.sessions) > self.max_sessions:
            oldest = min(self.sessions.values(), key=lambda s: s.last_used)
            self._spawn_end(oldest)
            self.sessions.pop(oldest.session.id, None)
        return state

    def _spawn_end(self, state: _HttpSession) -> None:
        asyncio.ensure_future(self._end_session(state))

    async def _end_session(self, state: _HttpSession) -> None:
        self.sessions.pop(state.session.id, None)
        self.bridge.close_session(state.session)
        if state.stream is not None:
            await state.stream.close()

    async def _session_for(self, headers: dict[str, str], send: Send) -> _HttpSession | None:
        """The legacy session a request names; answers 400/404 itself when there is none."""
        session_id = headers.get("mcp-session-id")
        if not session_id:
            await self._error(send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        state = self.sessions.get(session_id)
        if state is None:
            await self._error(send, 404, INVALID_REQUEST, "Session not found (terminated or unknown)")
            return None
        state.last_used = time.monotonic()
        return state

    # ------------------------------------------------------------------ POST

    async def _post(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        accept = headers.get("accept", "")
        if not (_accepts(accept, "application/json") and _accepts(accept, "text/event-stream")):
            await self._error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            )
            return
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            await self._error(send, 415, INVALID_REQUEST, "Unsupported Media Type: use application/json")
            return
        body = await self._read_body(receive)
        if body is None:
            return
        if body is _TOO_LARGE:
            close = [(b"connection", b"close")]
            await self._error(send, 413, INVALID_REQUEST, "Payload Too Large", extra=close)
            return
        if body is _TIMED_OUT:
            log.info("request body not complete after %.0f s: closing the connection", self.body_timeout)
            await self._error(
                send,
                408,
                INVALID_REQUEST,
                f"Request Timeout: the body did not arrive within {self.body_timeout:g} s",
                extra=[(b"connection", b"close")],
            )
            return
        try:
            payload = parse_message(body)
        except RpcFailure as failure:
            await self._error(send, 400, failure.code, failure.message)
            return

        if isinstance(payload, list):
            await self._post_batch(headers, payload, receive, send)
            return
        if not isinstance(payload, dict):
            await self._error(send, 400, INVALID_REQUEST, "Invalid Request")
            return
        method = payload.get("method")
        raw_params = payload.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        header_version = headers.get("mcp-protocol-version")
        if method == "initialize" and "id" in payload:
            await self._initialize(payload, receive, send)
            return
        is_request = isinstance(method, str) and "id" in payload
        if isinstance(method, str) and is_request and (
            Bridge.is_modern(method, params) or header_version in MODERN_VERSIONS
        ):
            await self._post_modern(scope, headers, body, payload, params, receive, send)
            return
        if header_version in MODERN_VERSIONS and not headers.get("mcp-session-id"):
            await self._empty(send, 202)  # 2026-07-28 defines no client notifications here
            return
        state = await self._session_for(headers, send)
        if state is None:
            return
        session = state.session
        if header_version is not None and (
            header_version not in SUPPORTED_VERSIONS or header_version != session.protocol_version
        ):
            await self._error(
                send,
                400,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {header_version!r}"
                f" (this session uses {session.protocol_version})",
                {"supported": list(SUPPORTED_VERSIONS)},
            )
            return
        if not is_request:
            reply = await self.bridge.handle(session, payload)
            if reply.message is not None:
                await self._json(send, reply.http_status, reply.message)
            else:
                await self._empty(send, 202 if reply.http_status < 300 else reply.http_status)
            return
        await self._respond(session, payload, params, send)

    async def _initialize(self, payload: dict[str, Any], receive: Receive, send: Send) -> None:
        session = self.bridge.new_session("http")
        reply = await self.bridge.handle(session, payload)
        if reply.message is None or "error" in reply.message:
            self.bridge.close_session(session)
            await self._json(send, reply.http_status if reply.http_status >= 400 else 200, reply.message)
            return
        self._add_session(session)
        await self._json(send, 200, reply.message, [(b"mcp-session-id", session.id.encode())])

    async def _post_batch(
        self, headers: dict[str, str], batch: list[Any], receive: Receive, send: Send
    ) -> None:
        if not batch:
            await self._error(send, 400, INVALID_REQUEST, "Invalid Request: empty batch")
            return
        if any(isinstance(m, dict) and m.get("method") == "initialize" for m in batch):
            await self._error(send, 400, INVALID_REQUEST, "initialize must not be part of a batch")
            return
        state = await self._session_for(headers, send)
        if state is None:
            return
        if not self.bridge.batch_allowed(state.session):
            await self._error(
                send, 400, INVALID_REQUEST, "JSON-RPC batches are only allowed in protocol 2025-03-26"
            )
            return
        responses = await self.bridge.handle_batch(state.session, batch)
        if responses:
            await self._json(send, 200, responses)
        else:
            await self._empty(send, 202)

    async def _post_modern(
        self,
        scope: Scope,
        headers: dict[str, str],
        body: bytes,
        payload: dict[str, Any],
        params: dict[str, Any],
        receive: Receive,
        send: Send,
    ) -> None:
        """A 2026-07-28 request: served statelessly by the SDK's session manager.

        The SDK checks the rest (the ``Mcp-Method``/``Mcp-Name`` headers, the
        ``_meta`` envelope, unsupported versions), answers JSON or, once the handler
        emits a notification (progress, ``subscriptions/listen``), SSE, and cancels the
        handler when the client closes the stream. Checked here first: the
        ``MCP-Protocol-Version`` header, which is how the SDK's manager tells a
        modern request from a session's, must be present and equal the body's.
        """
        header_version = headers.get("mcp-protocol-version")
        body_version = Bridge.modern_version(params)
        problem = None
        if header_version is None:
            problem = "Header mismatch: missing MCP-Protocol-Version header"
        elif body_version is not None and header_version != body_version:
            problem = (
                f"Header mismatch: MCP-Protocol-Version header value {header_version!r}"
                f" does not match body value {body_version!r}"
            )
        elif header_version not in MODERN_VERSIONS and body_version is None:
            problem = f"Header mismatch: MCP-Protocol-Version {header_version!r} needs a session"
        if problem is not None:
            await self._error(send, 400, HEADER_MISMATCH, problem, request_id=payload.get("id"))
            return
        manager = await self._sdk_manager()
        replayed = False

        async def replay() -> Message:
            # The body was read (and checked) above; the SDK reads it again from here,
            # then sees the client's disconnect through the original channel.
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await manager.handle_request(scope, replay, send)

    async def _sdk_manager(self) -> StreamableHTTPSessionManager:
        if self._sdk is None:
            connection = SdkConnection(self.bridge, "http")
            manager = StreamableHTTPSessionManager(
                build_server(self.bridge, connection), json_response=False, session_idle_timeout=None
            )
            started = asyncio.Event()

            async def run() -> None:
                try:
                    async with manager.run():
                        started.set()
                        await asyncio.Event().wait()  # until close() cancels this task
                finally:
                    connection.close()

            self._sdk = (manager, asyncio.ensure_future(run()))
            await started.wait()
        return self._sdk[0]

    async def _respond(
        self,
        session: Session,
        payload: dict[str, Any],
        params: dict[str, Any],
        send: Send,
    ) -> None:
        """Answer one request with JSON, or with SSE when progress may precede the answer.

        A dropped connection does not cancel the request (2025-11-25: disconnection
        SHOULD NOT be read as cancellation); ``notifications/cancelled`` does.
        """
        method = payload.get("method")
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        streaming = method == "tools/call" and meta.get("progressToken") is not None
        stream: _SseStream | None = None
        keepalive: asyncio.Task[None] | None = None
        if streaming:
            stream = _SseStream(send)
            await stream.start()
            keepalive = asyncio.ensure_future(self._keepalive(stream))
        try:
            reply: Reply = await self.bridge.handle(session, payload, stream.event if stream else None)
        finally:
            if keepalive is not None:
                keepalive.cancel()
        if stream is not None:
            if reply.message is not None:
                await stream.event(reply.message)
            await stream.close()
            return
        if reply.message is None:  # cancelled by notifications/cancelled on another POST
            reply.message = error_response(
                payload.get("id"), REQUEST_CANCELLED, "request cancelled by the client"
            )
        await self._json(send, reply.http_status, reply.message)

    async def _keepalive(self, stream: _SseStream) -> None:
        while not stream.closed:
            await asyncio.sleep(self.keepalive)
            await stream.comment()

    # ------------------------------------------------------------------ GET / DELETE

    async def _get(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        version = headers.get("mcp-protocol-version")
        if version in MODERN_VERSIONS or (version is None and not headers.get("mcp-session-id")):
            # 2026-07-28 has no GET stream (subscriptions/listen replaces it).
            await self._error(
                send, 405, INVALID_REQUEST, "Method Not Allowed", extra=[(b"allow", b"GET, POST, DELETE")]
            )
            return
        if not _accepts(headers.get("accept", ""), "text/event-stream"):
            await self._error(
                send, 406, INVALID_REQUEST, "Not Acceptable: Accept must list text/event-stream"
            )
            return
        state = await self._session_for(headers, send)
        if state is None:
            return
        if version is not None and version != state.session.protocol_version:
            await self._error(
                send, 400, INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {version!r}"
            )
            return
        if state.stream is not None and not state.stream.closed:
            await self._error(send, 409, INVALID_REQUEST, "Conflict: this session already has a GET stream")
            return
        stream = _SseStream(send)
        await stream.start()
        # Snapshot the missed events and attach the stream in one step (no await between),
        # so each event is either replayed or pushed live, never both or neither.
        missed = state.frames_after(headers.get("last-event-id"))
        state.stream = stream
        if missed:
            await stream.frames(b"".join(missed))
        keepalive = asyncio.ensure_future(self._keepalive(stream))

        async def client_gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        watcher = asyncio.ensure_future(client_gone())
        ended = asyncio.ensure_future(stream.ended.wait())
        try:
            await asyncio.wait({watcher, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            ended.cancel()
            keepalive.cancel()
            if state.stream is stream:
                state.stream = None
            state.last_used = time.monotonic()  # idle from the moment the stream ends
            await stream.close()

    async def _delete(self, headers: dict[str, str], send: Send) -> None:
        state = await self._session_for(headers, send)
        if state is None:
            return
        await self._end_session(state)
        await self._empty(send, 200)


async def serve_http(
    bridge: Bridge,
    *,
    host: str = "127.0.0.1",
    port: int = 8808,
    path: str = "/mcp",
    allowed_origins: Collection[str] = (),
    allowed_hosts: Collection[str] | None = None,
    client_token: str | None = None,
    body_timeout: float = BODY_TIMEOUT,
    header_timeout: float = HEADER_TIMEOUT,
    session_idle_timeout: float | None = SESSION_IDLE_TIMEOUT,
    ready: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve ``bridge`` over Streamable HTTP until cancelled (or ``stop`` is set).

    ``ready`` is called with the bound port once the server accepts connections (useful
    with ``port=0``). ``header_timeout`` bounds the time a client may take to send a
    request's line and headers (then 408 and the connection is closed; see
    ``header_timeout.py``), ``body_timeout`` the time for its body.
    """
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    app = StreamableHttpApp(
        bridge,
        path=path,
        allowed_origins=allowed_origins,
        allowed_hosts=default_allowed_hosts(host) if allowed_hosts is None else allowed_hosts,
        port=sock.getsockname()[1],
        client_token=client_token,
        body_timeout=body_timeout,
        session_idle_timeout=session_idle_timeout,
    )
    sock.setblocking(False)
    config = uvicorn.Config(
        app,
        http=header_timeout_protocol(header_timeout),
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)

    async def stopper() -> None:
        while not server.started:
            await asyncio.sleep(0.01)
        if ready is not None:
            ready(sock.getsockname()[1])
        if stop is not None:
            await stop.wait()
            server.should_exit = True

    helper = asyncio.ensure_future(stopper())
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        await app.close()  # end open streams so the graceful shutdown is quick
        server.should_exit = True
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(serving, 5.0)
        raise
    finally:
        helper.cancel()
        await app.close()
        sock.close()


__all__ = [
    "LEGACY_VERSIONS",
    "StreamableHttpApp",
    "default_allowed_hosts",
    "serve_http",
]
