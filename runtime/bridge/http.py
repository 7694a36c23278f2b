"""The Streamable HTTP transport: one MCP endpoint (``/mcp``) on Starlette's router.

Two eras share the endpoint:

* **Handshake-era sessions** (2024-11-05 .. 2025-11-25): ``initialize`` mints an
  ``Mcp-Session-Id``; later requests must carry it (400 without, 404 for an unknown or
  terminated one); ``DELETE`` ends the session; ``GET`` opens the session's SSE stream
  for ``notifications/tools/list_changed`` and device events, resumable with
  ``Last-Event-ID``.
* **Stateless 2026-07-28**: every POST stands alone; the ``MCP-Protocol-Version``,
  ``Mcp-Method`` and ``Mcp-Name`` headers must match the body (400 + -32020 otherwise),
  an unsupported version is 400 + -32022, an unknown method 404 + -32601, and
  ``subscriptions/listen`` answers with a long-lived SSE stream. Closing a response
  stream cancels the request.

Both are served by the MCP SDK's ``StreamableHTTPSessionManager`` (``sdk_http.py``).
This module is the guard in front of it: Host, Origin and the client token (the
console's rules too: ``web.py``), methods,
``Accept``, ``Content-Type``, the body's size, time, nesting and duplicate keys, and
the few rules where the bridge answers differently from the SDK (each says why where it
is done). Served by uvicorn (installed with the MCP SDK) in :func:`serve_http`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac  # noqa: F401  (web.py compares tokens with it: tests spy on it as bridge.http.hmac)
import json
import logging
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from mcp.server.streamable_http import REQUEST_CANCELLED
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.routing import Route, Router

from .core import Bridge
from .header_timeout import HEADER_TIMEOUT, header_timeout_protocol
from .protocol import (
    BATCH_VERSIONS,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    RpcFailure,
    bounded_error,
    error_response,
    invalid_message,
    parse_message,
    quote,
)
from .sdk_http import CapturedAnswer, SessionManager, replaying
from .sdk_server import CONNECTION_SCOPE_KEY, SdkConnection, build_server
from .web import (
    AccessGuard,
    ASGIApp,
    GuardedApp,
    Message,
    Receive,
    Refusal,
    Scope,
    Send,
    default_allowed_hosts,
    headers_of,
    host_allowed,
    origin_allowed,
    read_body,
)

log = logging.getLogger("mcpgen.runtime.bridge.http")

MAX_BODY = 4 * 1024 * 1024
DRAIN_LIMIT = 4 * MAX_BODY
"""Bytes of a too-large body read (and dropped) so that its 413 answer reaches the client."""
BODY_TIMEOUT = 30.0
SESSION_IDLE_TIMEOUT = 30 * 60.0
"""Seconds a session may go without a request (and without an open GET stream)."""
_ALLOW = {"allow": "GET, POST, DELETE"}


def _json_bytes(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class _Session:
    """What the guard knows of one SDK session: the version its ``initialize``
    negotiated, and the bridge's state for it (handed to the SDK's handlers)."""

    version: str
    connection: SdkConnection
    # tools/call requests answered by the guard itself (no progress token), by request id:
    # a notifications/cancelled of the session cancels them (see StreamableHttpApp._call)
    calls: dict[Any, asyncio.Task[dict[str, Any]]] = field(default_factory=dict)


def _accepts(accept: str, wanted: str) -> bool:
    major = wanted.split("/")[0]
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in (wanted, f"{major}/*", "*/*"):
            return True
    return False


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
        max_sessions: sessions kept; the least recently used is ended beyond it (the
            SDK's own cap would refuse new ones with 503 instead).
        body_timeout: seconds a request body may take to arrive in full (then HTTP 408 and
            the connection is closed), so stalled uploads cannot pile up.
        session_idle_timeout: seconds a session may go unused (no request, no open GET
            stream) before the SDK ends it; its id then gets 404, which tells a client to
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
        body_timeout: float = BODY_TIMEOUT,
        session_idle_timeout: float | None = SESSION_IDLE_TIMEOUT,
    ) -> None:
        self.bridge = bridge
        self.session_idle_timeout = session_idle_timeout
        self.path = path.rstrip("/") or "/"
        self.guard = AccessGuard(
            "bridge",
            token=client_token,
            port=port,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
        )
        self.body_timeout = body_timeout
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        """The SDK's handshake-era sessions by id, least recently used first."""
        self._sdk: tuple[StreamableHTTPSessionManager, asyncio.Task[None]] | None = None
        """The SDK's session manager, started on first use."""
        self._app = GuardedApp(self._router(), self.guard, self._refuse, self.close)

    # ------------------------------------------------------------------ plumbing

    #: A tools/call without a progress token is answered by the guard (``_call``); False
    #: sends it through the SDK's session like the other requests (the bridge before
    #: issue 43: benchmarks/bridge_sdk.py measures both).
    plain_json_calls = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def _router(self) -> ASGIApp:
        """The MCP endpoint (with or without a trailing slash) on Starlette's router;
        any other path is 404. The endpoint takes every method and answers the ones it
        does not serve with a JSON-RPC 405 itself."""
        paths = {self.path, self.path.rstrip("/") + "/"}
        return Router(
            routes=[Route(p, endpoint=_Endpoint(self._endpoint)) for p in sorted(paths)],
            redirect_slashes=False,
            default=_not_found,
        )

    async def _endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = headers_of(scope)
        self.guard.require_token(headers)
        handlers = {"POST": self._post, "GET": self._get, "DELETE": self._delete}
        handler = handlers.get(scope.get("method", "GET"))
        if handler is None:
            raise Refusal(405, "Method Not Allowed", _ALLOW)
        await handler(scope, headers, receive, send)

    async def _refuse(self, refusal: Refusal, send: Send) -> None:
        if refusal.status == 404:
            await self._plain(send, 404, b"not found")
            return
        extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in refusal.headers.items()]
        await self._error(send, refusal.status, INVALID_REQUEST, refusal.message, extra=extra)

    async def close(self) -> None:
        for session_id in list(self._sessions):
            self._forget(session_id)
        if self._sdk is not None:
            task = self._sdk[1]
            self._sdk = None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

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

    # ------------------------------------------------------------------ the SDK

    async def _sdk_manager(self) -> StreamableHTTPSessionManager:
        """The SDK's session manager (started on first use): it serves 2026-07-28
        requests statelessly and handshake-era sessions with their own state."""
        if self._sdk is None:
            shared = SdkConnection(self.bridge, "http")
            manager = SessionManager(
                build_server(self.bridge, shared),
                json_response=False,  # per request, see _answer_json
                session_idle_timeout=self.session_idle_timeout,
                max_sessions=None,  # the guard keeps at most max_sessions (least recently used dropped)
            )
            started = asyncio.Event()

            async def run() -> None:
                try:
                    async with manager.run():
                        started.set()
                        await asyncio.Event().wait()  # until close() cancels this task
                finally:
                    shared.close()

            self._sdk = (manager, asyncio.ensure_future(run()))
            await started.wait()
        return self._sdk[0]

    async def _captured(self, scope: Scope, body: bytes, receive: Receive) -> CapturedAnswer:
        """One POST through the SDK, its answer held back."""
        answer = CapturedAnswer()
        manager = await self._sdk_manager()
        await manager.handle_request(scope, replaying(body, receive), answer.send)
        return answer

    async def _answer_json(self, send: Send, answer: CapturedAnswer) -> None:
        """Send an SDK answer as JSON: the bridge answers JSON unless progress was asked
        for. The SDK's answer format is one setting per manager (JSON for every request,
        or SSE for every request), so the manager streams and the guard re-emits a
        stream's one response as a JSON body."""
        if answer.status is None:
            await self._error(send, 500, INTERNAL_ERROR, "Internal error: no answer")
            return
        if not answer.sse:
            await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
            await send({"type": "http.response.body", "body": answer.body})
            return
        message = answer.message()
        if message is None:
            ended = "Internal error: the session ended before the answer"
            await self._error(send, 500, INTERNAL_ERROR, ended)
            return
        session_id = answer.header(b"mcp-session-id")
        extra = [(b"mcp-session-id", session_id)] if session_id else None
        await self._json(send, 200, bounded_error(message), extra)

    def _bind(self, scope: Scope, session_id: str) -> Scope:
        """The request's scope, carrying its session's connection for the SDK's handlers."""
        self._sessions.move_to_end(session_id)
        return {**scope, CONNECTION_SCOPE_KEY: self._sessions[session_id].connection}

    def _forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.connection.close()

    async def _forward(self, scope: Scope, session_id: str, receive: Receive, send: Send) -> None:
        """A request of a known session, straight through the SDK; a 404 from it (the
        session expired) makes the guard forget the session too."""
        manager = await self._sdk_manager()

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 404:
                self._forget(session_id)
            await send(message)

        await manager.handle_request(self._bind(scope, session_id), receive, watch)

    async def _end_sdk_session(self, session_id: str) -> None:
        """End a session the way a client would (a DELETE through the SDK's manager)."""
        self._forget(session_id)
        scope: Scope = {
            "type": "http",
            "method": "DELETE",
            "path": self.path,
            "headers": [(b"mcp-session-id", session_id.encode())],
            "query_string": b"",
        }
        manager = await self._sdk_manager()
        await manager.handle_request(scope, replaying(b"", _never), CapturedAnswer().send)

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
        if content_type != "application/json":  # the SDK would answer 400
            await self._error(send, 415, INVALID_REQUEST, "Unsupported Media Type: use application/json")
            return
        body = await read_body(
            receive,
            limit=MAX_BODY,
            timeout=self.body_timeout,
            drain_limit=DRAIN_LIMIT,
            too_large="Payload Too Large",
        )
        try:
            # the bridge's parser: duplicate keys and deep nesting are refused (the SDK's accepts them)
            payload = parse_message(body)
        except RpcFailure as failure:
            await self._error(send, 400, failure.code, failure.message)
            return

        if isinstance(payload, list):
            await self._post_batch(scope, headers, payload, send)
            return
        refusal = invalid_message(payload)
        if refusal is not None:  # the SDK would take a null or fractional id for a notification (202)
            await self._json(send, 400, refusal)
            return
        method = payload.get("method")
        raw_params = payload.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        header_version = headers.get("mcp-protocol-version")
        is_request = isinstance(method, str) and "id" in payload
        if method == "initialize" and is_request:
            await self._initialize(scope, body, receive, send)
            return
        if (
            isinstance(method, str)
            and is_request
            and (Bridge.is_modern(method, params) or header_version in MODERN_VERSIONS)
        ):
            await self._post_modern(scope, headers, body, payload, params, receive, send)
            return
        session_id = headers.get("mcp-session-id")
        if header_version in MODERN_VERSIONS and not session_id:
            await self._empty(send, 202)  # 2026-07-28 defines no client notifications here
            return
        session_id = await self._known_session(session_id, header_version, send)
        if session_id is None:
            return
        meta = params.get("_meta")
        if method == "tools/call" and (
            (isinstance(meta, dict) and meta.get("progressToken") is not None)
            or self.bridge.asks_person(params.get("name"))
        ):
            # progress was asked for, or the person is asked first (elicitation/create rides
            # the request's stream before the answer): the SDK's SSE stream, as it is
            await self._forward(scope, session_id, replaying(body, receive), send)
            return
        if method == "tools/call" and is_request and self.plain_json_calls:
            await self._call(session_id, payload, params, send)
            return
        if method == "notifications/cancelled" and not is_request:
            self._cancel_call(session_id, params.get("requestId"))
        # A dropped connection does not cancel the request (2025-11-25: disconnection
        # SHOULD NOT be read as cancellation): the SDK runs the handler in the session's
        # own task; only notifications/cancelled cancels it.
        answer = CapturedAnswer()
        await self._forward(scope, session_id, replaying(body, receive), answer.send)
        await self._answer_json(send, answer)

    async def _call(
        self, session_id: str, payload: dict[str, Any], params: dict[str, Any], send: Send
    ) -> None:
        """A ``tools/call`` without a progress token, answered here as one JSON body.

        Through the SDK every POST takes its SSE path (its answer format is one setting
        per manager) and is re-emitted as JSON; a call needs none of that: the bridge
        runs it (arguments checked by the runtime's validator, ``Bridge._validation_error``)
        and the answer is written once. The call runs in a task of its own: a dropped
        connection does not cancel it (2025-11-25), the session's notifications/cancelled
        does (``_cancel_call``), as the SDK's session does for the calls it runs.
        """
        session = self._sessions[session_id]
        request_id = payload["id"]
        task = asyncio.ensure_future(self.bridge.tools_call(params, None, session.version))
        session.calls[request_id] = task
        extra = [(b"mcp-session-id", session_id.encode("latin-1"))]
        try:
            result = await asyncio.shield(task)
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
        except RpcFailure as failure:
            answer = error_response(request_id, failure.code, failure.message, failure.data)
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # this request's own task was cancelled (the server is closing)
            answer = error_response(request_id, REQUEST_CANCELLED, "Request cancelled")
        except Exception:
            log.exception("tools/call %s failed", quote(str(params.get("name"))))
            answer = error_response(request_id, INTERNAL_ERROR, "Internal error")
        finally:
            if session.calls.get(request_id) is task:
                del session.calls[request_id]
        await self._json(send, 200, bounded_error(answer), extra)

    def _cancel_call(self, session_id: str, request_id: Any) -> None:
        """A notifications/cancelled: cancels the session's call ``request_id`` when the
        guard runs it (the SDK, which hears the notification too, does not know it)."""
        session = self._sessions.get(session_id)
        task = session.calls.get(request_id) if session is not None and request_id is not None else None
        if task is not None:
            task.cancel()

    async def _known_session(
        self, session_id: str | None, header_version: str | None, send: Send
    ) -> str | None:
        """``session_id`` when the session named by ``Mcp-Session-Id`` exists and the
        request's ``MCP-Protocol-Version`` is a supported one; otherwise None, the client
        answered (400 without the header, 404 when unknown or ended, 400 for an unknown
        version)."""
        if not session_id:
            await self._error(send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        if session_id not in self._sessions:
            await self._error(send, 404, INVALID_REQUEST, "Session not found (terminated or unknown)")
            return None
        return session_id if await self._version_matches(session_id, header_version, send) else None

    async def _version_matches(self, session_id: str, header_version: str | None, send: Send) -> bool:
        """``MCP-Protocol-Version``, when sent, must be a handshake-era version this bridge
        supports; the session is answered in the version its ``initialize`` negotiated
        whatever the header says. The transport spec asks for 400 only for an invalid or
        unsupported version (a client SHOULD send the negotiated one, and some send an
        older one), as the SDK's own servers do. A missing header is accepted (the spec:
        assume 2025-03-26)."""
        if header_version is None or header_version in LEGACY_VERSIONS:
            return True
        negotiated = self._sessions[session_id].version
        await self._error(
            send,
            400,
            INVALID_REQUEST,
            f"Bad Request: unsupported MCP-Protocol-Version {quote(header_version)}"
            f" (this session uses {negotiated})",
            {"supported": list(LEGACY_VERSIONS)},
        )
        return False

    async def _initialize(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        """``initialize`` opens an SDK session; the guard notes the version it negotiated
        (from the answer) for the version header check and batches."""
        while len(self._sessions) >= self.max_sessions:
            oldest = next(iter(self._sessions))
            log.info("more than %d sessions: ending the least recently used, %s", self.max_sessions, oldest)
            await self._end_sdk_session(oldest)
        connection = SdkConnection(self.bridge, "http")
        answer = await self._captured({**scope, CONNECTION_SCOPE_KEY: connection}, body, receive)
        session_id = answer.header(b"mcp-session-id")
        message = answer.message()
        result = message.get("result") if isinstance(message, dict) else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if answer.status == 200 and session_id and isinstance(version, str):
            self._sessions[session_id.decode("latin-1")] = _Session(version, connection)
        else:
            connection.close()
            if session_id:  # the SDK keeps a session even when initialize failed: end it
                answer.headers = [(k, v) for k, v in answer.headers if k.lower() != b"mcp-session-id"]
                await self._end_sdk_session(session_id.decode("latin-1"))
        await self._answer_json(send, answer)

    async def _post_batch(self, scope: Scope, headers: dict[str, str], batch: list[Any], send: Send) -> None:
        """A JSON-RPC batch, in sessions that negotiated 2025-03-26 only. The SDK refuses
        batches in every revision, so each item goes through the session on its own and
        the answers are joined into one array (202 when there is nothing to answer)."""
        if not batch:
            await self._error(send, 400, INVALID_REQUEST, "Invalid Request: empty batch")
            return
        if any(isinstance(m, dict) and m.get("method") == "initialize" for m in batch):
            await self._error(send, 400, INVALID_REQUEST, "initialize must not be part of a batch")
            return
        session_id = headers.get("mcp-session-id")
        session_id = await self._known_session(session_id, headers.get("mcp-protocol-version"), send)
        if session_id is None:
            return
        if self._sessions[session_id].version not in BATCH_VERSIONS:
            await self._error(
                send, 400, INVALID_REQUEST, "JSON-RPC batches are only allowed in protocol 2025-03-26"
            )
            return
        item_scope = self._bind(scope, session_id)
        refusals = [r for r in map(invalid_message, batch) if r is not None]
        members = [m for m in batch if invalid_message(m) is None]
        answers = await asyncio.gather(
            *(self._captured(item_scope, _json_bytes(item), _never) for item in members)
        )
        replies = refusals + [bounded_error(m) for m in (a.message() for a in answers) if isinstance(m, dict)]
        if replies:
            await self._json(send, 200, replies)
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
                f"Header mismatch: MCP-Protocol-Version header value {quote(header_version)}"
                f" does not match body value {quote(body_version)}"
            )
        elif header_version not in MODERN_VERSIONS and body_version is None:
            problem = f"Header mismatch: MCP-Protocol-Version {quote(header_version)} needs a session"
        if problem is not None:
            await self._error(send, 400, HEADER_MISMATCH, problem, request_id=payload.get("id"))
            return
        manager = await self._sdk_manager()
        await manager.handle_request(scope, replaying(body, receive), send)

    # ------------------------------------------------------------------ GET / DELETE

    async def _get(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        """The session's GET stream, the SDK's: list_changed and device events, with
        event ids; ``Last-Event-ID`` replays from the session's event store."""
        version = headers.get("mcp-protocol-version")
        session_id = headers.get("mcp-session-id")
        if version in MODERN_VERSIONS or (version is None and not session_id):
            # 2026-07-28 has no GET stream (subscriptions/listen replaces it); without a
            # session there is nothing to stream (the SDK would answer 400).
            await self._error(
                send, 405, INVALID_REQUEST, "Method Not Allowed", extra=[(b"allow", b"GET, POST, DELETE")]
            )
            return
        if not _accepts(headers.get("accept", ""), "text/event-stream"):
            await self._error(
                send, 406, INVALID_REQUEST, "Not Acceptable: Accept must list text/event-stream"
            )
            return
        session_id = await self._known_session(session_id, version, send)
        if session_id is None:
            return
        await self._forward(scope, session_id, receive, send)

    async def _delete(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        session_id = headers.get("mcp-session-id")
        session_id = await self._known_session(session_id, None, send)
        if session_id is None:
            return
        await self._forward(scope, session_id, receive, send)
        self._forget(session_id)


class _Endpoint:
    """A raw ASGI endpoint for Starlette's ``Route`` (a bound method would be wrapped as a
    request -> response function; the SDK writes to ``send`` itself)."""

    def __init__(self, handler: ASGIApp) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.handler(scope, receive, send)


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    raise Refusal(404, "not found")


async def _never() -> Message:
    """The ``receive`` of a request the guard makes itself: no client, no disconnect."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


def tcp_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket for uvicorn's ``sockets=`` (the bridge's and the console's).

    Created with ``IPPROTO_TCP`` as its protocol, not 0: asyncio turns Nagle's algorithm
    off (``TCP_NODELAY``) only on accepted sockets whose protocol says TCP. Without it,
    uvicorn's h11 protocol writes a response in two segments, the second waits for the
    client's delayed ACK, and every request on a kept-alive connection took ~40 ms
    instead of ~1 ms.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


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
    max_sessions: int = 256,
    ready: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve ``bridge`` over Streamable HTTP until cancelled (or ``stop`` is set).

    ``ready`` is called with the bound port once the server accepts connections (useful
    with ``port=0``). ``header_timeout`` bounds the time a client may take to send a
    request's line and headers (then 408 and the connection is closed; see
    ``header_timeout.py``), ``body_timeout`` the time for its body.
    """
    sock = tcp_listener(host, port)
    app = StreamableHttpApp(
        bridge,
        path=path,
        allowed_origins=allowed_origins,
        allowed_hosts=default_allowed_hosts(host) if allowed_hosts is None else allowed_hosts,
        port=sock.getsockname()[1],
        client_token=client_token,
        body_timeout=body_timeout,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
    )
    await serve_uvicorn(app, sock, close=app.close, header_timeout=header_timeout, ready=ready, stop=stop)


async def serve_uvicorn(
    app: Any,
    sock: socket.socket,
    *,
    close: Callable[[], Awaitable[None]],
    header_timeout: float = HEADER_TIMEOUT,
    ready: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
    close_on_stop: bool = False,
) -> None:
    """Serve the ASGI ``app`` with uvicorn on the listening ``sock`` until cancelled or ``stop``.

    Shared by the bridge and the console. ``ready(port)`` once the server accepts
    connections; ``close()`` ends the app's open streams so the graceful shutdown is quick
    (called on cancellation and at the end, and also when ``stop`` is set if
    ``close_on_stop``). ``sock`` is closed at the end.
    """
    import uvicorn

    bound = sock.getsockname()[1]
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
            ready(bound)
        if stop is not None:
            await stop.wait()
            if close_on_stop:
                await close()
            server.should_exit = True

    helper = asyncio.ensure_future(stopper())
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        await close()  # end open streams so the graceful shutdown is quick
        server.should_exit = True
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(serving, 5.0)
        raise
    finally:
        helper.cancel()
        await close()
        sock.close()


__all__ = [
    "LEGACY_VERSIONS",
    "StreamableHttpApp",
    "default_allowed_hosts",
    "host_allowed",
    "origin_allowed",
    "serve_http",
    "serve_uvicorn",
    "tcp_listener",
]
