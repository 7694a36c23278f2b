"""Who may use the console: the bridge's Host, Origin and token rules, plus a login cookie.

The rules are the MCP bridge's (docs/security.md) and use its helpers
(``runtime/bridge/http.py``), so both HTTP surfaces answer alike:

* ``Host`` must be an IP literal, ``localhost`` or an allowed name, with the console's
  port (DNS-rebinding protection): else 421.
* ``Origin``, when a browser sends one, must be the console's own (``http://`` + Host) or
  an allowed one: else 403. A page on another port of the same host is another origin;
  it is also the *same site*, so its requests carry the console's cookie: this check is
  what stops them.
* The token, when one is set: ``Authorization: Bearer <token>`` (scripts, Prometheus)
  or the login cookie a browser gets by opening ``/?token=<token>`` once. The cookie
  holds an HMAC of the token, not the token, is ``HttpOnly`` and ``SameSite=Strict``,
  and is named after the port (cookies are shared by every port of a host).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Collection
from typing import Optional
from urllib.parse import urlsplit

from mcpgen.runtime.bridge.http import LOCAL_NAMES, _bearer, _is_ip_literal, _split_host

_COOKIE_CONTEXT = b"mcpgen console login"


class Guard:
    """The access rules of one console (see the module docstring).

    ``port``: the port the console is reached on (None: any; set once bound).
    ``allowed_hosts``/``allowed_origins``: names and origins allowed besides the
    defaults (``"*"``: any). ``token``: None leaves the console open to every local
    user of this machine, so the command line makes one up when none is given.
    """

    def __init__(
        self,
        *,
        token: Optional[str] = None,
        port: Optional[int] = None,
        allowed_hosts: Collection[str] = (),
        allowed_origins: Collection[str] = (),
    ) -> None:
        self.token = token
        self.port = port
        self.allowed_hosts = {h.strip("[]").lower() for h in allowed_hosts} | LOCAL_NAMES
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}

    def host_allowed(self, host: Optional[str]) -> bool:
        if "*" in self.allowed_hosts:
            return True
        split = _split_host(host) if host is not None else None
        if split is None:
            return False
        name, port = split
        if port is not None and self.port is not None and port != self.port:
            return False
        return _is_ip_literal(name) or name in self.allowed_hosts

    def origin_allowed(self, origin: Optional[str], host: Optional[str]) -> bool:
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

    def token_ok(self, candidate: Optional[str]) -> bool:
        """``candidate`` is the token (constant-time comparison)."""
        if self.token is None:
            return True
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.token.encode())

    # -- the login cookie -----------------------------------------------------------------

    def cookie_name(self) -> str:
        return f"mcpgen-console-{self.port}" if self.port is not None else "mcpgen-console"

    def cookie_value(self) -> str:
        assert self.token is not None
        return hmac.new(self.token.encode(), _COOKIE_CONTEXT, hashlib.sha256).hexdigest()

    def login_cookie(self, path: str) -> str:
        """The ``Set-Cookie`` value after a correct ``?token=``."""
        return f"{self.cookie_name()}={self.cookie_value()}; Path={path}; HttpOnly; SameSite=Strict"

    def authorized(self, authorization: Optional[str], cookie_header: Optional[str]) -> bool:
        """A bearer token or the login cookie (always True without a token)."""
        if self.token is None:
            return True
        if self.token_ok(_bearer(authorization)):
            return True
        value = _cookie(cookie_header, self.cookie_name())
        return value is not None and hmac.compare_digest(value.encode(), self.cookie_value().encode())


def _cookie(header: Optional[str], name: str) -> Optional[str]:
    for part in (header or "").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None


__all__ = ["Guard"]
