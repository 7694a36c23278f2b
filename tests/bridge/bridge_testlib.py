"""Helpers shared by the bridge tests (imported by name, not via conftest)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

from bridge_fakes import FakeDevice  # noqa: E402

from mcpgen.runtime.bridge import Bridge, serve_http  # noqa: E402


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class HttpBridge:
    bridge: Bridge
    device: FakeDevice
    url: str
    port: int


@contextlib.asynccontextmanager
async def running_http(bridge: Bridge, **kwargs: object) -> AsyncIterator[int]:
    port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(
        serve_http(bridge, host="127.0.0.1", port=0, ready=port.set_result, **kwargs)
    )
    try:
        yield await asyncio.wait_for(port, 10)
    finally:
        await bridge.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
