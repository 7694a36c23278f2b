"""Who may use the console: the bridge's Host, Origin and token rules, plus a login cookie.

The rules, and the code, are the MCP bridge's (``runtime/bridge/web.py``, docs/security.md),
so both HTTP surfaces answer alike:

* ``Host`` must be an IP literal, ``localhost`` or an allowed name, with the console's
  port (DNS-rebinding protection): else 421.
* ``Origin``, when a browser sends one, must be the console's own (``http://`` + Host) or
  an allowed one: else 403. A page on another port of the same host is another origin;
  it is also the *same site*, so its requests carry the console's cookie: this check is
  what stops them.
* The token, when one is set: ``Authorization: Bearer <token>`` (scripts, Prometheus)
  or the login cookie a browser gets by opening ``/?token=<token>`` once (an HMAC of the
  token, ``HttpOnly``, ``SameSite=Strict``, named after the port).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Optional

from mcpgen.runtime.bridge.web import AccessGuard


class Guard(AccessGuard):
    """The access rules of one console: the shared guard with the login cookie on.

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
        super().__init__(
            "console",
            token=token,
            port=port,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            cookies=True,
        )


__all__ = ["Guard"]
