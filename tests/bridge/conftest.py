"""Fixtures for the MCP bridge tests: fake devices, a live Streamable HTTP bridge."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for p in (str(REPO), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bridge_fakes import FakeDevice  # noqa: E402
from bridge_testlib import HERE, REPO, HttpBridge, running_http, subprocess_env  # noqa: E402,F401

from runtime.bridge import Bridge  # noqa: E402


@pytest.fixture
async def http_bridge() -> AsyncIterator[HttpBridge]:
    bridge = Bridge()
    device = FakeDevice("sim-1")
    bridge.add_device(device)
    async with running_http(bridge) as port:
        yield HttpBridge(bridge, device, f"http://127.0.0.1:{port}/mcp", port)
