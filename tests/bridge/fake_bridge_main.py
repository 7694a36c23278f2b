"""A bridge over stdio serving in-memory fake devices (for SDK stdio-client tests).

usage: python fake_bridge_main.py [DEVICE_ID ...]   (several ids: tools are prefixed)
"""

from __future__ import annotations

import asyncio
import logging
import sys

from bridge_fakes import FakeDevice  # noqa: E402

from mcpgen.runtime.bridge import Bridge, serve_stdio  # noqa: E402
from mcpgen.runtime.bridge.stdio import protect_stdout  # noqa: E402


async def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    out = protect_stdout()
    print("this stray print must not reach the MCP stream")  # goes to stderr
    ids = sys.argv[1:] or ["sim-1"]
    bridge = Bridge(prefix_tools=len(ids) > 1)
    for device_id in ids:
        bridge.add_device(FakeDevice(device_id))
    await serve_stdio(bridge, stdout=out)


asyncio.run(main())
