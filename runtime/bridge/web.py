"""What the bridge's and the console's HTTP apps share: one guard, one body reader.

Both apps are Starlette routers (``http.py``, ``console/app.py``) behind
:class:`GuardedApp`, which checks every request against an :class:`AccessGuard` before
any route runs (see docs/security.md):

* ``Host`` (DNS-rebinding protection): an IP literal, ``localhost`` or an allowed name,
  with the server's port when the header names one. ``"*"`` turns the check off. Else 421.
* ``Origin`` (browsers only; requests without one pass): the server's own origin
  (``http://`` + ``Host``) or an allowed one (``"*"``: any). A page on another port of
  the same host is another origin and is refused. Else 403.
* The token, checked by the routes that need it (:meth:`AccessGuard.authorized`):
  ``Authorization: Bearer <token>`` (scheme in any case, constant-time comparison) and,
  where the guard keeps ``cookies``, the login cookie a browser gets by opening
  ``/?token=<token>`` once. The cookie holds an HMAC of the token, not the token, is
  ``HttpOnly`` and ``SameSite=Strict``, and is named after the port (cookies are shared by
  every port of a host). Else 401.

:func:`read_body` reads a request body within a size bound and a deadline (413, 408).
Each app words its refusals in its own format (JSON-RPC errors for MCP clients, the
console's ``{"error": ...}``); the rules are the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from .protocol import quote

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
_COOKIE_CONTEXT = b"mcpgen console login"
_CLOSE = {"connection": "close"}


class Refusal(Exception):
    """A request refused before (or instead of) its route: HTTP ``status``, a message for
    the client, and extra response ``headers``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


class ClientLeft(Exception):
    """The client disconnected before its body arrived: nothing to answer."""


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


def host_allowed(host: str | None, port: int | None, allowed_hosts: Collection[str]) -> bool:
    """``host`` (a ``Host`` header) names a server on ``port`` known by ``allowed_hosts``."""
    if "*" in allowed_hosts:
        return True
    if host is None:
        return False
    split = _split_host(host)
    if split is None:
        return False
    name, host_port = split
    if host_port is not None and port is not None and host_port != port:
        return False
    # An IP literal cannot be the product of DNS rebinding (that needs a name the
    # attacker controls); names must be known.
    return _is_ip_literal(name) or name in allowed_hosts


def origin_allowed(origin: str | None, host: str | None, allowed_origins: Collection[str]) -> bool:
    """No Origin (not a browser), the server's own origin (``http://`` + ``host``), or one allowed."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    if "*" in allowed_origins or origin in allowed_origins:
        return True
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return host is not None and parts.scheme == "http" and parts.netloc == host.strip().lower()


def bearer(authorization: str | None) -> str | None:
    """The token of ``Authorization: Bearer <token>``; the scheme is case-insensitive (RFC 9110)."""
    parts = (authorization or "").strip().split(None, 1)
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1].strip()
    return None


def default_allowed_hosts(bind_host: str) -> frozenset[str]:
    """Host names (besides IP literals and localhost) accepted for a server bound to ``bind_host``.

    A name the server is bound to counts; a wildcard bind also accepts this machine's own
    names. Anything else must be configured (``--allowed-host``).
    """
    names = {bind_host.strip("[]").lower()} - WILDCARD_HOSTS
    if bind_host.strip("[]") in WILDCARD_HOSTS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(n for n in names if n)


def _cookie(header: str | None, name: str) -> str | None:
    for part in (header or "").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None


def headers_of(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (repeated ones joined with ``, ``)."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


class AccessGuard:
    """Who may use one HTTP server (see the module docstring).

    ``what`` names the server in refusals ("bridge", "console"). ``port``: the port it is
    reached on (None: any; set once bound). ``allowed_hosts``/``allowed_origins``: names
    and origins allowed besides the defaults (``"*"``: any). ``token``: None leaves the
    server open to every local user of this machine. ``cookies``: a login cookie counts
    as the token too (the console's browser page).
    """

    def __init__(
        self,
        what: str,
        *,
        token: str | None = None,
        port: int | None = None,
        allowed_hosts: Collection[str] = (),
        allowed_origins: Collection[str] = (),
        cookies: bool = False,
    ) -> None:
        self.what = what
        self.token = token
        self.port = port
        self.cookies = cookies
        self.allowed_hosts = {h.strip("[]").lower() for h in allowed_hosts} | LOCAL_NAMES
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}

    def host_allowed(self, host: str | None) -> bool:
        return host_allowed(host, self.port, self.allowed_hosts)

    def origin_allowed(self, origin: str | None, host: str | None = None) -> bool:
        return origin_allowed(origin, host, self.allowed_origins)

    def check(self, headers: dict[str, str]) -> None:
        """Host, then Origin: raises :class:`Refusal` (421, 403) when either is not allowed."""
        host = headers.get("host")
        if not self.host_allowed(host):
            raise Refusal(
                421,
                f"Misdirected Request: Host {quote(host)} is not this {self.what}"
                " (allow it with --allowed-host)",
            )
        if not self.origin_allowed(headers.get("origin"), host):
            raise Refusal(403, "Forbidden: origin not allowed (allow it with --allowed-origin)")

    def token_ok(self, candidate: str | None) -> bool:
        """``candidate`` is the token (constant-time comparison; always True without a token)."""
        if self.token is None:
            return True
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.token.encode())

    def authorized(self, headers: dict[str, str]) -> bool:
        """A bearer token, or the login cookie where ``cookies`` (always True without a token)."""
        if self.token is None or self.token_ok(bearer(headers.get("authorization"))):
            return True
        if not self.cookies:
            return False
        value = _cookie(headers.get("cookie"), self.cookie_name())
        return value is not None and hmac.compare_digest(value.encode(), self.cookie_value().encode())

    def require_token(self, headers: dict[str, str], hint: str = "") -> None:
        """Raises :class:`Refusal` (401, ``WWW-Authenticate: Bearer``) unless :meth:`authorized`."""
        if not self.authorized(headers):
            raise Refusal(401, f"Unauthorized{hint}", {"www-authenticate": "Bearer"})

    # -- the login cookie -----------------------------------------------------------------

    def cookie_name(self) -> str:
        return f"mcpgen-{self.what}-{self.port}" if self.port is not None else f"mcpgen-{self.what}"

    def cookie_value(self) -> str:
        assert self.token is not None
        return hmac.new(self.token.encode(), _COOKIE_CONTEXT, hashlib.sha256).hexdigest()

    def login_cookie(self, path: str) -> str:
        """The ``Set-Cookie`` value after a correct ``?token=``."""
        return f"{self.cookie_name()}={self.cookie_value()}; Path={path}; HttpOnly; SameSite=Strict"


class GuardedApp:
    """An ASGI app (a Starlette router) behind an :class:`AccessGuard`.

    Every HTTP request is checked (Host, Origin) before ``app`` sees it; a
    :class:`Refusal` raised by the guard or by a route is answered by ``refuse`` (each
    server words it in its own format). Lifespan messages call ``on_shutdown``.
    """

    def __init__(
        self,
        app: ASGIApp,
        guard: AccessGuard,
        refuse: Callable[[Refusal, Send], Awaitable[None]],
        on_shutdown: Callable[[], Awaitable[None]],
    ) -> None:
        self.app = app
        self.guard = guard
        self.refuse = refuse
        self.on_shutdown = on_shutdown

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await self.on_shutdown()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            self.guard.check(headers_of(scope))
            await self.app(scope, receive, watched)
        except Refusal as refusal:
            if not started:
                await self.refuse(refusal, send)
        except ClientLeft:
            pass


async def read_body(
    receive: Receive, *, limit: int, timeout: float, drain_limit: int = 0, too_large: str | None = None
) -> bytes:
    """The whole request body, at most ``limit`` bytes, complete within ``timeout`` seconds.

    Raises :class:`Refusal` 413 (too large) or 408 (too slow), both closing the connection,
    and :class:`ClientLeft` when the client disconnects. A refused body is read on (and
    dropped) up to ``drain_limit`` bytes in all within the deadline: closing a connection
    whose receive buffer still holds data makes the kernel send a reset, and the reset can
    destroy the 413 answer before the client has read it. ``too_large``: the 413's message
    (default: it names ``limit``).
    """
    chunks: list[bytes] = []
    size = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    refused = False
    while True:
        try:
            message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
        except TimeoutError:
            if refused:
                break
            raise Refusal(
                408, f"Request Timeout: the body did not arrive within {timeout:g} s", _CLOSE
            ) from None
        if message["type"] == "http.disconnect":
            if refused:
                break
            raise ClientLeft
        chunk = message.get("body", b"")
        size += len(chunk)
        more = bool(message.get("more_body", False))
        if size > limit:
            refused = True
        if refused:
            if not more or size > drain_limit:
                break
            continue
        chunks.append(chunk)
        if not more:
            return b"".join(chunks)
    raise Refusal(413, too_large or f"Payload Too Large: at most {limit} bytes", _CLOSE)


__all__ = [
    "AccessGuard",
    "ClientLeft",
    "GuardedApp",
    "LOCAL_NAMES",
    "Refusal",
    "bearer",
    "default_allowed_hosts",
    "headers_of",
    "host_allowed",
    "origin_allowed",
    "read_body",
]
