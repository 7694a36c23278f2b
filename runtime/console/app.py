"""The console over HTTP: a Starlette router behind the bridge's guard (``bridge/web.py``).

Routes, relative to where the app is mounted (``root_path``):

| route | what |
|---|---|
| ``GET /`` | the page (``static/index.html``); ``?token=`` logs in (a cookie, then 303 to ``/``) |
| ``GET /console.js``, ``/console.css`` | the page's script and style (no secrets: no token needed) |
| ``GET /api/state`` | every device's row, the recent events of the fleet |
| ``GET /api/device?id=ID`` | one device: tools with their input schemas, history, events, latencies |
| ``GET /api/stream`` | Server-Sent Events: ``state`` first, then every change as it happens |
| ``POST /api/check`` | ``{"device", "tool", "arguments"}``: the runtime validator's verdict, nothing sent |
| ``POST /api/call`` | the same plus ``"human"`` (the person's answer), then the call; 422 when invalid |
| ``GET /api/resources?id=ID`` | the device's resources, resource templates and watched URIs |
| ``POST /api/read`` | ``{"device", "uri"}`` or ``{"device", "template", "values"}``: ``resources/read`` |
| ``POST /api/subscribe`` | ``{"device", "uri", "subscribe"}``: watch a resource (or stop); see the stream |
| ``GET /metrics`` | Prometheus text format (``FleetMetrics``) |

Every request passes the :class:`~mcpgen.runtime.console.guard.Guard` first (Host 421,
Origin 403, then the token 401 on every route but the page and its files); POST bodies
must be JSON (415), at most ``MAX_BODY`` bytes (413), complete within ``body_timeout``
seconds (408: the bridge's body reader), and free of duplicate keys and deep nesting
(400: the bridge's parser). Answers carry a strict Content-Security-Policy: the
page runs only its own script and never inserts device text as HTML.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any, Optional

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router

from mcpgen.runtime.bridge.protocol import RpcFailure, parse_message
from mcpgen.runtime.bridge.web import (
    GuardedApp,
    Receive,
    Refusal,
    Scope,
    Send,
    headers_of,
    read_body,
)

from . import resources as device_resources
from .console import Console, ConsoleError
from .guard import Guard

log = logging.getLogger("mcpgen.runtime.console.http")

MAX_BODY = 64 * 1024
"""Bytes a POST body may have: a tool's arguments, never more."""
BODY_TIMEOUT = 10.0
KEEPALIVE = 15.0
"""Seconds between SSE comments on an idle stream (proxies close silent connections)."""

_SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
_PUBLIC = frozenset({"/", "/console.js", "/console.css"})
"""Routes served without the token: the page (it shows the login form) and its files."""
_HTML = "text/html; charset=utf-8"


def _static(name: str) -> bytes:
    return resources.files("mcpgen.runtime.console").joinpath("static", name).read_bytes()


def _respond(
    body: bytes,
    status: int = 200,
    media_type: str = "application/json",
    headers: Optional[dict[str, str]] = None,
) -> Response:
    return Response(body, status, headers={**_SECURITY_HEADERS, **(headers or {})}, media_type=media_type)


def _json(message: Any, status: int = 200, headers: Optional[dict[str, str]] = None) -> Response:
    return _respond(orjson.dumps(message), status, "application/json", headers)


class _Stream:
    """``/api/stream`` as a raw ASGI endpoint (it watches the client while it writes)."""

    def __init__(self, app: ConsoleApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app.stream(receive, send)


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
        js, css = "text/javascript; charset=utf-8", "text/css; charset=utf-8"
        router = Router(
            routes=[
                Route("/", self._index, methods=["GET"]),
                Route("/console.js", self._file("console.js", js), methods=["GET"]),
                Route("/console.css", self._file("console.css", css), methods=["GET"]),
                Route("/api/state", self._state, methods=["GET"]),
                Route("/api/device", self._device, methods=["GET"]),
                Route("/api/resources", self._resources, methods=["GET"]),
                Route("/api/stream", _Stream(self), methods=["GET"]),
                Route("/metrics", self._metrics, methods=["GET"]),
                Route("/api/check", self._call, methods=["POST"]),
                Route("/api/call", self._call, methods=["POST"]),
                Route("/api/read", self._resource_request, methods=["POST"]),
                Route("/api/subscribe", self._resource_request, methods=["POST"]),
            ],
            redirect_slashes=False,
            default=_not_found,
        )
        self._router = router
        self._app = GuardedApp(self._routed, self.guard, self._refuse, console.close)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    async def _routed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Past Host and Origin: the token (all but the public routes), then the router."""
        route = get_route_path(scope)
        if route == "":  # the mount point itself: the page is one slash further
            root = scope.get("root_path", "") or ""
            await _respond(b"", 308, "text/plain", {"location": root + "/"})(scope, receive, send)
            return
        if route not in _PUBLIC:
            self.guard.require_token(
                headers_of(scope), ": send Authorization: Bearer <token>, or open /?token=<token>"
            )
        # "app" in the scope makes Starlette raise its 405 (answered as a refusal) rather than answer it
        scope["app"] = self
        try:
            await self._router(scope, receive, send)
        except HTTPException as exc:
            raise Refusal(exc.status_code, exc.detail, dict(exc.headers or {})) from None
        except ConsoleError as exc:
            body = {"error": {"type": "ConsoleError", "message": exc.message}}
            await _json(body, exc.status)(scope, receive, send)

    async def _refuse(self, refusal: Refusal, send: Send) -> None:
        self.console.metrics.http_refused.labels(str(refusal.status)).inc()
        message = {"error": {"type": "HttpError", "message": refusal.message}}
        response = _json(message, refusal.status, refusal.headers)
        await response({"type": "http"}, _no_receive, send)

    # ------------------------------------------------------------------ routes

    def _file(self, name: str, media_type: str) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            return _respond(self._files[name], 200, media_type)

        return serve

    async def _index(self, request: Request) -> Response:
        root = request.scope.get("root_path", "") or ""
        token = request.query_params.get("token")
        if token is not None and self.guard.token is not None:
            if self.guard.token_ok(token):
                cookie = self.guard.login_cookie(root + "/")
                return _respond(b"", 303, "text/plain", {"location": root + "/", "set-cookie": cookie})
            return _respond(self._login_page("wrong token: try again"), 401, _HTML)
        if not self.guard.authorized(headers_of(request.scope)):
            return _respond(self._login_page(""), 401, _HTML)
        return _respond(self._files["index.html"], 200, _HTML)

    def _login_page(self, problem: str) -> bytes:
        text = problem.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return self._files["login.html"].replace(b"<!--problem-->", text.encode())

    async def _state(self, request: Request) -> Response:
        return _json(self.console.state())

    async def _device(self, request: Request) -> Response:
        return _json(self.console.detail(_device_param(request)))

    async def _resources(self, request: Request) -> Response:
        entry = self.console.entry(_device_param(request))
        return _json(await device_resources.listing(entry, self.console.call_timeout))

    async def _metrics(self, request: Request) -> Response:
        text, media_type = self.console.metrics.render()
        return _respond(text, 200, media_type)

    async def _call(self, request: Request) -> Response:
        payload = await self._json_body(request)
        device_id, tool = payload.get("device"), payload.get("tool")
        if not isinstance(device_id, str) or not isinstance(tool, str):
            raise Refusal(400, 'Bad Request: "device" and "tool" must be strings')
        arguments = payload.get("arguments")
        if request.url.path.endswith("/api/check"):
            return _json(self.console.check(device_id, tool, arguments))
        record = await self.console.call(device_id, tool, arguments, payload.get("human"))
        return _json(record.to_json(), 422 if record.outcome == "invalid" else 200)

    async def _resource_request(self, request: Request) -> Response:
        payload = await self._json_body(request)
        device_id = payload.get("device")
        if not isinstance(device_id, str):
            raise Refusal(400, 'Bad Request: "device" must be a string')
        entry = self.console.entry(device_id)
        timeout = self.console.call_timeout
        if request.url.path.endswith("/api/read"):
            template, values = payload.get("template"), payload.get("values")
            target = device_resources.target_uri(payload.get("uri"), template, values)
            return _json(await device_resources.read(entry, target, timeout))
        uri, on = payload.get("uri"), payload.get("subscribe")
        if not isinstance(uri, str) or not uri or not isinstance(on, bool):
            raise Refusal(400, 'Bad Request: send {"device", "uri", "subscribe": true or false}')
        return _json(await device_resources.subscribe(entry, uri, on, timeout))

    async def _json_body(self, request: Request) -> dict[str, Any]:
        """A POST body: a JSON object within the limits (415, 413, 408, 400 otherwise)."""
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise Refusal(415, "Unsupported Media Type: send Content-Type: application/json")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_BODY:
            raise Refusal(413, f"Payload Too Large: at most {MAX_BODY} bytes")
        body = await read_body(request.receive, limit=MAX_BODY, timeout=self.body_timeout)
        try:
            payload = parse_message(body)
        except RpcFailure as exc:
            raise Refusal(400, f"Bad Request: {exc.message}") from None
        if not isinstance(payload, dict):
            raise Refusal(400, 'Bad Request: expected a JSON object such as {"device": ..., ...}')
        return payload

    async def stream(self, receive: Receive, send: Send) -> None:
        """Server-Sent Events: the state, then each change, until the client leaves."""
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"x-accel-buffering", b"no")]
        security = [(k.encode(), v.encode()) for k, v in _SECURITY_HEADERS.items()]
        async with self.console.subscribe() as queue:
            await send({"type": "http.response.start", "status": 200, "headers": [*headers, *security]})
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


def get_route_path(scope: Scope) -> str:
    """The request's path below the mount point (``root_path``), as Starlette's router sees it."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "") or ""
    if root and (path == root or path.startswith(root + "/")):
        return path[len(root) :]
    return path


def _device_param(request: Request) -> str:
    device_id = request.query_params.get("id")
    if device_id is None:
        raise Refusal(400, f"Bad Request: {get_route_path(request.scope)} needs ?id=DEVICE_ID")
    return device_id


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    raise Refusal(404, f"Not Found: {get_route_path(scope)}")


async def _no_receive() -> Any:
    return {"type": "http.disconnect"}


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _event(send: Send, message: dict[str, Any]) -> None:
    await send(
        {"type": "http.response.body", "body": b"data: " + orjson.dumps(message) + b"\n\n", "more_body": True}
    )


__all__ = ["BODY_TIMEOUT", "MAX_BODY", "ConsoleApp"]
