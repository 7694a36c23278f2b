"""An idle device's receive buffer: given back after setup, regrown for large frames.

picows doubles a connection's receive buffer for a large frame (setup's ``tools/list``
reply) and never shrinks it; the compiled ``DeviceLink.compact_read_buffer`` gives it
back down to ``wslink.IDLE_READ_BUFFER`` once the session is set up (issue 32: gateway
RSS per device). The free part of the buffer is what picows' own ``get_buffer`` offers.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from runtime_fakes import FakeWsDevice
from test_gateway_hostile import frame, raw_device, server_hello
from test_gateway_transport import HELLO, url_of

from mcpgen import runtime
from mcpgen.runtime import Gateway
from mcpgen.runtime.links.websocket import wslink

from picows.picows import WSProtocol  # type: ignore[attr-defined]  # isort: skip

IDLE_FREE = wslink.IDLE_READ_BUFFER - 256  # picows keeps 256 bytes past the usable end


def free_bytes(link: Any) -> int:
    """What picows would read into next: the buffer's usable size minus unparsed bytes."""
    return len(WSProtocol.get_buffer(link.transport.underlying_transport.get_protocol(), -1))


async def test_receive_buffer_is_given_back_after_setup_and_regrows(fake_devices: list[FakeWsDevice]) -> None:
    async with Gateway(port=0, ping_interval=None) as gw:
        fake = FakeWsDevice(url_of(gw), "dev-1", token=None)
        fake_devices.append(fake)
        await fake.start()
        device = await gw.wait_for_device("dev-1", timeout=5)
        link = next(iter(gw._links))
        await asyncio.sleep(0.05)  # the setup task's done callback
        if runtime.COMPILED:
            assert free_bytes(link) == IDLE_FREE
        assert link.compact_read_buffer() is False  # nothing (more) to give back
        big = await device.call("self.test.big", {"n": 20000})  # a frame 20x the idle buffer
        assert big == "x" * 20000
        assert free_bytes(link) > IDLE_FREE  # picows grew it for that frame
        assert link.compact_read_buffer() is runtime.COMPILED
        if runtime.COMPILED:
            assert free_bytes(link) == IDLE_FREE
        for n in (10, 700, 5000, 10):  # small and large frames after the shrink parse whole
            assert await device.call("self.test.big", {"n": n}) == "x" * n


async def test_receive_buffer_holding_part_of_a_frame_is_left_alone() -> None:
    """Unparsed bytes (half a frame) in the buffer: no shrink; the frame completes intact."""
    async with Gateway(port=0, ping_interval=None, hello_timeout=30) as gw:
        sock = await asyncio.to_thread(raw_device, gw.port, "half")
        sock.sendall(frame(0x1, HELLO))
        sid = (await asyncio.to_thread(server_hello, sock))["session_id"]
        link = next(iter(gw._links))
        seen: list[dict] = []
        gw_device = link.device
        gw_device.on_notification(lambda method, params: seen.append(params))
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "y" * 1500}}
        whole = frame(0x1, json.dumps({"session_id": sid, "type": "mcp", "payload": note}).encode())
        free_before = free_bytes(link)
        sock.sendall(whole[:900])
        for _ in range(100):
            if free_bytes(link) < free_before:
                break
            await asyncio.sleep(0.01)
        assert free_bytes(link) == free_before - 900  # the half frame waits in the buffer
        assert link.compact_read_buffer() is False
        sock.sendall(whole[900:])
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        assert seen == [{"data": "y" * 1500}]
        sock.close()


@pytest.mark.skipif(not runtime.COMPILED, reason="the pure-Python link cannot reach picows' buffer")
async def test_compacting_an_idle_link_keeps_the_connection_working() -> None:
    """A link set up but not yet compacted (2 KiB picows buffer): compacts, then reads on."""
    async with Gateway(port=0, ping_interval=None, hello_timeout=30) as gw:
        sock = await asyncio.to_thread(raw_device, gw.port, "idle")
        sock.sendall(frame(0x1, HELLO))
        sid = (await asyncio.to_thread(server_hello, sock))["session_id"]
        link = next(iter(gw._links))
        assert free_bytes(link) == 2048 - 256  # picows' starting buffer
        assert link.compact_read_buffer() is True
        assert free_bytes(link) == IDLE_FREE
        seen: list[dict] = []
        link.device.on_notification(lambda method, params: seen.append(params))
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "z" * 3000}}
        sock.sendall(frame(0x1, json.dumps({"session_id": sid, "type": "mcp", "payload": note}).encode()))
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        assert seen == [{"data": "z" * 3000}]
        sock.close()


@pytest.mark.skipif(not runtime.COMPILED, reason="the pure-Python link cannot reach picows' buffer")
async def test_a_buffer_grown_by_a_large_message_is_given_back_when_the_device_idles(
    fake_devices: list[FakeWsDevice],
) -> None:
    """The keepalive sweep pings a device that sent nothing for a ping interval; the
    buffer a large reply grew goes back to the idle size then, and calls go on."""
    async with Gateway(port=0, ping_interval=0.2) as gw:
        fake = FakeWsDevice(url_of(gw), "dev-2", token=None)
        fake_devices.append(fake)
        await fake.start()
        device = await gw.wait_for_device("dev-2", timeout=5)
        link = next(iter(gw._links))
        assert await device.call("self.test.big", {"n": 8000}) == "x" * 8000
        assert free_bytes(link) > IDLE_FREE
        for _ in range(100):  # two ping intervals at most, and the pongs
            if free_bytes(link) == IDLE_FREE:
                break
            await asyncio.sleep(0.05)
        assert free_bytes(link) == IDLE_FREE
        assert await device.call("self.test.big", {"n": 3000}) == "x" * 3000
        assert not device.closed
