"""The event loop a backend should run the gateway on: uvloop where it is installed.

The gateway works on any asyncio loop (it only uses the running one); uvloop's faster
socket and timer code roughly halves the transport's CPU share, so entry points that
own their loop (benchmarks, :mod:`mcpgen.runtime.links.workers`, your ``main``) use
:func:`run` instead of :func:`asyncio.run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def uvloop_available() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def new_event_loop(use_uvloop: bool = True) -> asyncio.AbstractEventLoop:
    """A new loop: uvloop's when available and wanted, else asyncio's default."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T], *, use_uvloop: bool = True) -> T:
    """``asyncio.run(main)`` on :func:`new_event_loop`."""
    with asyncio.Runner(loop_factory=lambda: new_event_loop(use_uvloop)) as runner:
        return runner.run(main)


__all__ = ["new_event_loop", "run", "uvloop_available"]
