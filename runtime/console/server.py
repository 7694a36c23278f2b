"""Serving the console with uvicorn, as the bridge serves MCP (same header deadline)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection
from typing import Optional

from mcpgen.runtime.bridge.header_timeout import HEADER_TIMEOUT, header_timeout_protocol
from mcpgen.runtime.bridge.http import default_allowed_hosts, tcp_listener

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
    import uvicorn

    sock = tcp_listener(host, port)
    bound = sock.getsockname()[1]
    guard = Guard(
        token=token,
        port=bound,
        allowed_hosts=default_allowed_hosts(host) if allowed_hosts is None else allowed_hosts,
        allowed_origins=allowed_origins,
    )
    app = ConsoleApp(console, guard, body_timeout=body_timeout)
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

    async def announce() -> None:
        while not server.started:
            await asyncio.sleep(0.01)
        if ready is not None:
            ready(bound)
        if stop is not None:
            await stop.wait()
            await console.close()  # live streams end, so the graceful shutdown is quick
            server.should_exit = True

    helper = asyncio.ensure_future(announce())
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        await console.close()  # ends the live streams so the graceful shutdown is quick
        server.should_exit = True
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(serving, 5.0)
        raise
    finally:
        helper.cancel()
        await console.close()
        sock.close()


__all__ = ["serve_console", "tcp_listener"]
