"""Fixtures for the MCP bridge tests: fake devices, a live Streamable HTTP bridge."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from bridge_fakes import FakeDevice
from bridge_testlib import HERE, REPO, HttpBridge, running_http, subprocess_env  # noqa: F401

from mcpgen.runtime.bridge import Bridge


@pytest.fixture
async def http_bridge() -> AsyncIterator[HttpBridge]:
    bridge = Bridge()
    device = FakeDevice("sim-1")
    bridge.add_device(device)
    async with running_http(bridge) as port:
        yield HttpBridge(bridge, device, f"http://127.0.0.1:{port}/mcp", port)
