"""The console over HTTP: a plain ASGI app (the bridge's stack: uvicorn, no framework).

Routes, relative to where the app is mounted (``root_path``):

| route | what |
|---|---|
| ``GET /`` | the page (``static/index.html``); ``?token=`` logs in (a cookie, then 303 to ``/``) |
| ``GET /console.js``, ``/console.css`` | the page's script and style (no secrets: no token needed) |
| ``GET /api/state`` | every device's row, the recent events of the fleet |
| ``GET /api/device?id=ID`` | one device: tools with their input schemas, history, events, latencies |
| ``GET /api/stream`` | Server-Sent Events: ``state`` first, then every change as it happens |
| ``POST /api/check`` | ``{"device", "tool", "arguments"}``: the runtime validator's verdict, nothing sent |
| ``POST /api/call`` | the same, then the call: the record (result or typed error), 422 when invalid |
| ``GET /api/resources?id=ID`` | the device's resources, resource templates and watched URIs |
| ``POST /api/read`` | ``{"device", "uri"}`` or ``{"device", "template", "values"}``: ``resources/read`` |
| ``POST /api/subscribe`` | ``{"device", "uri", "subscribe"}``: watch a resource (or stop); see the stream |
| ``GET /metrics`` | Prometheus text format (``FleetMetrics``) |

Every request passes the :class:`~mcpgen.runtime.console.guard.Guard` first (Host 421,
Origin 403, token 401); POST bodies must be JSON (415), at most ``MAX_BODY`` bytes (413),
complete within ``body_timeout`` seconds (408), and free of duplicate keys and deep
nesting (400: the bridge's parser). Answers carry a strict Content-Security-Policy: the
page runs only its own script and never inserts device text as HTML.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from importlib import resources
from typing import Any, Optional
from urllib.parse import parse_qs

import orjson

from mcpgen.runtime.bridge.protocol import RpcFailure, parse_message

from . import resources as device_resources
from .console import Console, ConsoleError
from .guard import Guard

log = logging.getLogger("mcpgen.runtime.console.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_BODY = 64 * 1024
"""Bytes a POST body may have: a tool's arguments, never more."""
BODY_TIMEOUT = 10.0
KEEPALIVE = 15.0
"""Seconds between SSE comments on an idle stream (proxies close silent connections)."""

_SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; "
        b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
_STATIC = {
    "/console.js": ("console.js", b"text/javascript; charset=utf-8"),
    "/console.css": ("console.css", b"text/css; charset=utf-8"),
}


def _static(name: str) -> bytes:
    return resources.files("mcpgen.runtime.console").joinpath("static", name).read_bytes()


class _Refused(Exception):
    def __init__(self, status: int, message: str, extra: Optional[list[tuple[bytes, bytes]]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra or []


class ConsoleApp:
    """The web console of ``console`` as an ASGI application.

    Mount it in a backend at any path (it reads ``root_path``), or serve it with
    :func:`mcpgen.runtime.console.serve_console`. ``guard`` holds the access rules;
    the default has no token and allows only loopback names, so set ``token`` when
    anyone else can reach the port.
    """

    def __init__(
        self, console: Console, guard: Optional[Guard] = None, *, body_timeout: float = BODY_TIMEOUT
    ) -> None:
        self.console = console
        self.guard = guard if guard is not None else Guard()
        self.body_timeout = body_timeout
        self._files = {
            name: _static(name) for name in ("index.html", "login.html", "console.js", "console.css")
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            await self._http(scope, receive, send)
        except _Refused as refused:
            self.console.metrics.http_refused.labels(str(refused.status)).inc()
            await _json(
                send,
                refused.status,
                {"error": {"type": "HttpError", "message": refused.message}},
                refused.extra,
            )
        except ConsoleError as exc:
            await _json(send, exc.status, {"error": {"type": "ConsoleError", "message": exc.message}})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.console.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        host = headers.get("host")
        if not self.guard.host_allowed(host):
            raise _Refused(
                421, f"Misdirected Request: Host {host!r} is not this console (allow it with --allowed-host)"
            )
        if not self.guard.origin_allowed(headers.get("origin"), host):
            raise _Refused(403, "Forbidden: origin not allowed (allow it with --allowed-origin)")
        root = scope.get("root_path", "") or ""
        path = scope.get("path", "")
        route = path[len(root) :] if root and path.startswith(root) else path
        method = scope.get("method", "GET")
        if route in _STATIC and method == "GET":
            name, content_type = _STATIC[route]
            await _respond(send, 200, self._files[name], content_type)
            return
        if route == "":
            await _respond(send, 308, b"", b"text/plain", [(b"location", (root + "/").encode())])
            return
        authorized = self.guard.authorized(headers.get("authorization"), headers.get("cookie"))
        if route == "/" and method == "GET":
            await self._index(scope, root, authorized, send)
            return
        if not authorized:
            raise _Refused(
                401,
                "Unauthorized: send Authorization: Bearer <token>, or open /?token=<token>",
                [(b"www-authenticate", b"Bearer")],
            )
        if method == "GET":
            if route == "/api/state":
                await _json(send, 200, self.console.state())
            elif route == "/api/device":
                await _json(send, 200, self.console.detail(self._device_param(scope, route)))
            elif route == "/api/resources":
                entry = self.console.entry(self._device_param(scope, route))
                await _json(send, 200, await device_resources.listing(entry, self.console.call_timeout))
            elif route == "/api/stream":
                await self._stream(receive, send)
            elif route == "/metrics":
                text, media_type = self.console.metrics.render()
                await _respond(send, 200, text, media_type.encode())
            else:
                raise _Refused(404, f"Not Found: {route}")
        elif method == "POST" and route in ("/api/call", "/api/check"):
            device_id, tool, arguments = await self._call_body(headers, receive)
            if route == "/api/check":
                await _json(send, 200, self.console.check(device_id, tool, arguments))
                return
            record = await self.console.call(device_id, tool, arguments)
            await _json(send, 422 if record.outcome == "invalid" else 200, record.to_json())
        elif method == "POST" and route in ("/api/read", "/api/subscribe"):
            await _json(send, 200, await self._resource_request(route, headers, receive))
        else:
            raise _Refused(405, "Method Not Allowed", [(b"allow", b"GET, POST")])

    async def _index(self, scope: Scope, root: str, authorized: bool, send: Send) -> None:
        token = _query(scope).get("token")
        if token is not None and self.guard.token is not None:
            if self.guard.token_ok(token):
                cookie = self.guard.login_cookie(root + "/")
                extra = [(b"location", (root + "/").encode()), (b"set-cookie", cookie.encode())]
                await _respond(send, 303, b"", b"text/plain", extra)
                return
            await _respond(send, 401, self._login_page("wrong token: try again"), b"text/html; charset=utf-8")
            return
        if not authorized:
            await _respond(send, 401, self._login_page(""), b"text/html; charset=utf-8")
            return
        await _respond(send, 200, self._files["index.html"], b"text/html; charset=utf-8")

    def _login_page(self, problem: str) -> bytes:
        text = problem.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return self._files["login.html"].replace(b"<!--problem-->", text.encode())

    @staticmethod
    def _device_param(scope: Scope, route: str) -> str:
        device_id = _query(scope).get("id")
        if device_id is None:
            raise _Refused(400, f"Bad Request: {route} needs ?id=DEVICE_ID")
        return device_id

    async def _resource_request(
        self, route: str, headers: dict[str, str], receive: Receive
    ) -> dict[str, Any]:
        payload = await self._json_body(headers, receive)
        device_id = payload.get("device")
        if not isinstance(device_id, str):
            raise _Refused(400, 'Bad Request: "device" must be a string')
        entry = self.console.entry(device_id)
        timeout = self.console.call_timeout
        if route == "/api/read":
            template, values = payload.get("template"), payload.get("values")
            target = device_resources.target_uri(payload.get("uri"), template, values)
            return await device_resources.read(entry, target, timeout)
        uri, on = payload.get("uri"), payload.get("subscribe")
        if not isinstance(uri, str) or not uri or not isinstance(on, bool):
            raise _Refused(400, 'Bad Request: send {"device", "uri", "subscribe": true or false}')
        return await device_resources.subscribe(entry, uri, on, timeout)

    async def _call_body(self, headers: dict[str, str], receive: Receive) -> tuple[str, str, Any]:
        payload = await self._json_body(headers, receive)
        device_id, tool = payload.get("device"), payload.get("tool")
        if not isinstance(device_id, str) or not isinstance(tool, str):
            raise _Refused(400, 'Bad Request: "device" and "tool" must be strings')
        return device_id, tool, payload.get("arguments")

    async def _json_body(self, headers: dict[str, str], receive: Receive) -> dict[str, Any]:
        """A POST body: a JSON object within the limits (415, 413, 408, 400 otherwise)."""
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise _Refused(415, "Unsupported Media Type: send Content-Type: application/json")
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY:
            raise _Refused(413, f"Payload Too Large: at most {MAX_BODY} bytes")
        body = await self._read_body(receive)
        try:
            payload = parse_message(body)
        except RpcFailure as exc:
            raise _Refused(400, f"Bad Request: {exc.message}") from None
        if not isinstance(payload, dict):
            raise _Refused(400, 'Bad Request: expected a JSON object such as {"device": ..., ...}')
        return payload

    async def _read_body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise _Refused(
                    408, "Request Timeout: the body did not arrive in time", [(b"connection", b"close")]
                ) from None
            if message["type"] == "http.disconnect":
                raise _Refused(400, "the client left")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                raise _Refused(
                    413, f"Payload Too Large: at most {MAX_BODY} bytes", [(b"connection", b"close")]
                )
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _stream(self, receive: Receive, send: Send) -> None:
        """Server-Sent Events: the state, then each change, until the client leaves."""
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"x-accel-buffering", b"no")]
        async with self.console.subscribe() as queue:
            await send(
                {"type": "http.response.start", "status": 200, "headers": [*headers, *_SECURITY_HEADERS]}
            )
            await _event(send, {"type": "state", "state": self.console.state()})
            left = asyncio.ensure_future(_disconnected(receive))
            try:
                while True:
                    getter = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait(
                        {getter, left}, timeout=KEEPALIVE, return_when=asyncio.FIRST_COMPLETED
                    )
                    if left in done:
                        getter.cancel()
                        return
                    if getter not in done:
                        getter.cancel()
                        await send(
                            {"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True}
                        )
                        continue
                    message = getter.result()
                    if message is None:
                        break
                    await _event(send, message)
            finally:
                left.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await left
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _event(send: Send, message: dict[str, Any]) -> None:
    await send(
        {"type": "http.response.body", "body": b"data: " + orjson.dumps(message) + b"\n\n", "more_body": True}
    )


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _query(scope: Scope) -> dict[str, str]:
    raw = scope.get("query_string", b"").decode("latin-1")
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: bytes,
    extra: Optional[list[tuple[bytes, bytes]]] = None,
) -> None:
    length = (b"content-length", str(len(body)).encode())
    headers = [(b"content-type", content_type), length, *_SECURITY_HEADERS, *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(
    send: Send, status: int, message: Any, extra: Optional[list[tuple[bytes, bytes]]] = None
) -> None:
    await _respond(send, status, orjson.dumps(message), b"application/json", extra)


__all__ = ["BODY_TIMEOUT", "MAX_BODY", "ConsoleApp"]
