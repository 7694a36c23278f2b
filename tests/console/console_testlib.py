"""Helpers of the web console tests: a console served in process, a headless Chromium."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcpgen.runtime import Device, Gateway, TokenAuth, connect_process
from mcpgen.runtime.console import Console, serve_console

HERE = Path(__file__).resolve().parent
COUNT_PROXY = HERE / "count_proxy.py"

#: The flags the browser runs with: headless, no sandbox (CI runs as root), and nothing
#: that reaches the network on its own (updates, sync, QUIC probes).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def generous_expect() -> None:
    """Playwright's ``expect`` waits 5 s by default; a loaded 2-core CI machine may need more."""
    from playwright.async_api import expect

    expect.set_options(timeout=20_000)


def chromium() -> str:
    """Debian's chromium (scripts/dev.sh installs it); Playwright's own download is never used.

    Missing, the browser tests are skipped, except in CI (``CI`` set) where that fails."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        why = "chromium is not installed (scripts/dev.sh setup installs Debian's `chromium`)"
        if os.environ.get("CI"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return found


@contextlib.asynccontextmanager
async def browser_page(profile: Path) -> AsyncIterator[Any]:
    """A page of a fresh headless Chromium (its own new profile folder)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        context = await p.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium(),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            context.set_default_timeout(20_000)  # generous: CI machines are small and shared
            yield page
        finally:
            await context.close()


@contextlib.asynccontextmanager
async def served(console: Console, token: str | None, **kwargs: Any) -> AsyncIterator[int]:
    """``console`` served on a free loopback port; yields the port."""
    port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(serve_console(console, port=0, token=token, ready=port.set_result, **kwargs))
    try:
        yield await asyncio.wait_for(port, 10)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class CallCounter:
    """The tool calls that reached a device behind ``count_proxy.py``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> int:
        text = self.path.read_text() if self.path.exists() else "0"
        return int(text or "0")


async def counted_process(exe: Path, count_file: Path, **kwargs: Any) -> tuple[Device, CallCounter]:
    """The simulator over stdio behind the counting proxy, and its counter."""
    argv = [sys.executable, str(COUNT_PROXY), str(count_file), str(exe), "--stdio"]
    device = await connect_process(argv, stderr="devnull", **kwargs)
    return device, CallCounter(count_file)


@dataclass
class Fleet:
    """A console served in process with a simulated speaker (stdio, counted) and a
    WebSocket gateway that devices can join."""

    console: Console
    port: int
    token: str
    gateway: Gateway
    device_token: str
    speaker: Device
    speaker_calls: CallCounter
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.gateway.port}/xiaozhi/v1/"


@contextlib.asynccontextmanager
async def fleet(
    tmp: Path,
    speaker_exe: Path,
    speaker_fingerprint: str,
    *,
    user_tools: bool = False,
    gateway_fingerprint: str | None = None,
    **serve: Any,
) -> AsyncIterator[Fleet]:
    console = Console(user_tools=user_tools, call_timeout=10.0)
    speaker, calls = await counted_process(
        speaker_exe, tmp / "speaker-calls", device_id="speaker-1", fingerprint=speaker_fingerprint
    )
    console.add_device(speaker, "stdio")
    device_token = "device-secret"
    gateway = Gateway(port=0, auth=TokenAuth({"*": device_token}), fingerprint=gateway_fingerprint)
    await gateway.start()
    console.metrics.watch_rejections(gateway, "websocket")

    async def accept() -> None:
        async for device in gateway.devices():
            console.add_device(device, "websocket")

    tasks = [asyncio.ensure_future(accept()), asyncio.ensure_future(console.watch(0.2))]
    try:
        async with served(console, "console-token", **serve) as port:
            yield Fleet(console, port, "console-token", gateway, device_token, speaker, calls, tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await speaker.close()
        await gateway.close()
        await console.metrics.close()


def screenshot_dir(default: Path) -> Path:
    """Where the browser tests put their screenshots: ``MCPGEN_CONSOLE_SCREENSHOTS`` or a temp dir."""
    chosen = os.environ.get("MCPGEN_CONSOLE_SCREENSHOTS")
    path = Path(chosen) if chosen else default
    path.mkdir(parents=True, exist_ok=True)
    return path
