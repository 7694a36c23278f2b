"""Serving the console with uvicorn, as the bridge serves MCP (same header deadline)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Optional

from mcpgen.runtime.bridge.header_timeout import HEADER_TIMEOUT
from mcpgen.runtime.bridge.http import default_allowed_hosts, serve_uvicorn, tcp_listener

from .app import BODY_TIMEOUT, ConsoleApp
from .console import Console
from .guard import Guard


async def serve_console(
    console: Console,
    *,
    host: str = "127.0.0.1",
    port: int = 8780,
    token: Optional[str] = None,
    allowed_hosts: Optional[Collection[str]] = None,
    allowed_origins: Collection[str] = (),
    body_timeout: float = BODY_TIMEOUT,
    header_timeout: float = HEADER_TIMEOUT,
    ready: Optional[Callable[[int], None]] = None,
    stop: Optional[asyncio.Event] = None,
) -> None:
    """Serve ``console`` at ``http://host:port/`` until cancelled (or ``stop`` is set).

    ``ready(port)`` is called once the server accepts connections (``port=0`` picks a
    free one). ``token``: see :class:`~mcpgen.runtime.console.guard.Guard`.
    ``allowed_hosts`` defaults to the bind address's names (the bridge's rule).
    """
    sock = tcp_listener(host, port)
    guard = Guard(
        token=token,
        port=sock.getsockname()[1],
        allowed_hosts=default_allowed_hosts(host) if allowed_hosts is None else allowed_hosts,
        allowed_origins=allowed_origins,
    )
    app = ConsoleApp(console, guard, body_timeout=body_timeout)
    # the console closes on stop too: its live streams end, so the graceful shutdown is quick
    await serve_uvicorn(
        app,
        sock,
        close=console.close,
        header_timeout=header_timeout,
        ready=ready,
        stop=stop,
        close_on_stop=True,
    )


__all__ = ["serve_console", "tcp_listener"]
