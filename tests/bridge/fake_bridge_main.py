"""A bridge over stdio serving in-memory fake devices (for SDK stdio-client tests).

usage: python fake_bridge_main.py [--human] [DEVICE_ID ...]   (several ids: tools are prefixed;
--human: set_rgb and the status tool ask the person, bridge_fakes.human_tools)
"""

from __future__ import annotations

import asyncio
import logging
import sys

from bridge_fakes import FakeDevice, human_tools  # noqa: E402

from mcpgen.runtime.bridge import Bridge, serve_stdio  # noqa: E402
from mcpgen.runtime.bridge.stdio import protect_stdout  # noqa: E402


async def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    out = protect_stdout()
    print("this stray print must not reach the MCP stream")  # goes to stderr
    human = "--human" in sys.argv[1:]
    ids = [a for a in sys.argv[1:] if a != "--human"] or ["sim-1"]
    bridge = Bridge(prefix_tools=len(ids) > 1)
    for device_id in ids:
        bridge.add_device(FakeDevice(device_id, human_tools() if human else None))
    await serve_stdio(bridge, stdout=out)


asyncio.run(main())
