"""The bridge's HTTP connections have Nagle's algorithm off.

Regression: ``serve_http`` made its listener with protocol 0, and asyncio sets
``TCP_NODELAY`` only on accepted sockets whose protocol says TCP; each response on a
kept-alive connection then waited ~40 ms for the client's delayed ACK (the console found
it first: tests/console/test_console_core.py).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys

import pytest
from bridge_testlib import HttpBridge

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads this process's sockets in /proc")


def _accepted_nodelay(client: tuple[str, int]) -> int | None:
    """TCP_NODELAY of this process's socket whose peer is ``client`` (None: not accepted yet)."""
    for name in os.listdir("/proc/self/fd"):
        try:
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:  # not a socket (or closed meanwhile)
            continue
        with sock:
            try:
                if sock.type == socket.SOCK_STREAM and sock.getpeername() == client:
                    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            except OSError:  # a listener, a unix socket without a peer, ...
                continue
    return None


async def test_accepted_connections_have_nagle_off(http_bridge: HttpBridge) -> None:
    _reader, writer = await asyncio.open_connection("127.0.0.1", http_bridge.port)
    try:
        client = writer.get_extra_info("sockname")
        nodelay = None
        for _ in range(200):  # the server accepts on its next loop iteration
            nodelay = _accepted_nodelay(client)
            if nodelay is not None:
                break
            await asyncio.sleep(0.01)
        assert nodelay is not None, "the bridge never accepted the connection"
        assert nodelay != 0
    finally:
        writer.close()
