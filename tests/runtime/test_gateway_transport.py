"""The gateway's WebSocket layer (picows): what a device sees on the wire.

Raw sockets where the exact bytes matter (a refused device gets its HTTP error and
nothing else; keepalive pings; closing codes), the websockets client elsewhere.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import time
from typing import Any, Optional

import aiofastnet
import pytest
from runtime_fakes import FakeWsDevice

from mcpgen.runtime import Gateway, TokenAuth
from mcpgen.runtime.core.loop import new_event_loop, uvloop_available


def url_of(gw: Gateway) -> str:
    return f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"


def upgrade_request(port: int, headers: dict[str, str], path: str = "/xiaozhi/v1/") -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def read_all(reader: asyncio.StreamReader, timeout: float = 5) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(-1), timeout)


def masked_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    b0, b1 = await reader.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", await reader.readexactly(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", await reader.readexactly(8))
    return b0 & 0x0F, await reader.readexactly(n)


async def open_raw(
    gw: Gateway, headers: dict[str, str]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    writer.write(upgrade_request(gw.port, headers))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    return reader, writer, head


HELLO = json.dumps(
    {"type": "hello", "version": 1, "features": {"mcp": True}, "transport": "websocket"}
).encode()


# -- refused devices get the HTTP error and nothing else ---------------------------------------


@pytest.mark.parametrize("async_auth", [False, True])
async def test_refused_device_gets_only_its_http_401(async_auth: bool) -> None:
    class Slow:
        async def authenticate(self, hs: Any) -> bool:
            await asyncio.sleep(0.05)
            return hs.token == "good"

    auth: Any = Slow() if async_auth else TokenAuth({"*": "good"})
    async with Gateway(port=0, auth=auth) as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        # the hello pipelined behind the request must not be read as anything
        writer.write(upgrade_request(gw.port, {"Device-Id": "x", "Authorization": "Bearer bad"}) + HELLO)
        data = await read_all(reader)
        writer.close()
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 401 Unauthorized\r\n")
        length = int(
            next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1]
        )
        assert body == b"Unauthorized: invalid token\n" and len(body) == length
        assert gw.rejected == 1 and gw.connected == {}


async def test_unknown_path_and_malformed_requests_are_refused() -> None:
    async with Gateway(port=0, path="/xiaozhi/v1/") as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(upgrade_request(gw.port, {"Device-Id": "x"}, path="/other"))
        assert (await read_all(reader)).startswith(b"HTTP/1.1 404 ")
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(b"POST / HTTP/1.1\r\nDevice-Id: x\r\n\r\n")
        assert (await read_all(reader)).startswith(b"HTTP/1.1 400 ")
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(b"GET / HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 20000)  # never ends
        assert (await read_all(reader)).startswith(b"HTTP/1.1 431 ")
        assert gw.rejected == 3


async def test_slow_handshake_is_dropped() -> None:
    async with Gateway(port=0, handshake_timeout=0.3) as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(b"GET /xiaozhi/v1/ HTTP/1.1\r\n")  # and then nothing
        started = time.monotonic()
        assert await read_all(reader) == b""
        assert time.monotonic() - started < 2


# -- keepalive ---------------------------------------------------------------------------------


async def test_keepalive_pings_idle_devices_and_drops_silent_ones() -> None:
    async with Gateway(port=0, ping_interval=0.3) as gw:
        reader, writer, head = await open_raw(gw, {"Device-Id": "mute"})
        assert head.startswith(b"HTTP/1.1 101 ")
        writer.write(masked_frame(0x1, HELLO))
        opcode, payload = await asyncio.wait_for(read_frame(reader), 5)
        assert opcode == 0x1 and json.loads(payload)["type"] == "hello"
        seen: list[int] = []
        started = time.monotonic()
        while True:  # initialize, tools/list... unanswered; then a ping; then the close
            opcode, payload = await asyncio.wait_for(read_frame(reader), 5)
            seen.append(opcode)
            if opcode == 0x8:
                break
        assert 0x9 in seen, "an idle device is pinged"
        assert struct.unpack("!H", payload[:2])[0] == 1011 and b"keepalive" in payload
        assert time.monotonic() - started < 3
        writer.close()


async def test_devices_that_answer_pings_stay(fake_devices: list[FakeWsDevice]) -> None:
    async with Gateway(port=0, ping_interval=0.2) as gw:
        fake = FakeWsDevice(url_of(gw), "chatty", token=None)
        fake_devices.append(fake)
        await fake.start()
        device = await gw.wait_for_device(timeout=5)
        await asyncio.sleep(1.0)  # several ping rounds; the websockets client answers them
        assert not device.closed and await device.call("self.counter.add", {"amount": 1}) == 1


# -- messages and frames -----------------------------------------------------------------------


async def test_fragmented_messages_are_reassembled_and_bounded() -> None:
    async with Gateway(port=0, max_frame=4096) as gw:
        reader, writer, _ = await open_raw(gw, {"Device-Id": "frag"})
        writer.write(masked_frame(0x1, HELLO[:10], fin=False) + masked_frame(0x0, HELLO[10:]))
        opcode, payload = await asyncio.wait_for(read_frame(reader), 5)
        assert opcode == 0x1 and json.loads(payload)["type"] == "hello"
        # 3 fragments of 2000 bytes: each under max_frame, the message over it
        writer.write(
            b"".join(masked_frame(0x1 if i == 0 else 0x0, b"x" * 2000, fin=i == 2) for i in range(3))
        )
        while True:
            opcode, payload = await asyncio.wait_for(read_frame(reader), 5)
            if opcode == 0x8:
                break
        assert struct.unpack("!H", payload[:2])[0] == 1009
        writer.close()


async def test_no_task_per_connection_once_sessions_run(fake_devices: list[FakeWsDevice]) -> None:
    async with Gateway(port=0) as gw:
        for i in range(10):
            fake = FakeWsDevice(url_of(gw), f"t{i}", token=None)
            fake_devices.append(fake)
            await fake.start()
        devices = [await gw.wait_for_device(timeout=5) for _ in range(10)]
        await asyncio.gather(*(d.call("self.counter.add", {"amount": 1}) for d in devices))
        await asyncio.sleep(0.05)
        ours = [
            t
            for t in asyncio.all_tasks()
            if "mcpgen/runtime"
            in getattr(t.get_coro(), "cr_code", type("c", (), {"co_filename": ""})).co_filename
        ]
        assert ours == [], f"gateway tasks left per connection: {ours}"


def test_gateway_runs_on_uvloop_and_plain_asyncio() -> None:
    """On either loop, a device's connection is the loop's own transport, or aiofastnet's
    (picows' default, the transport of the benchmark's fastest echo) when asked for."""

    async def main(socket_transport: Optional[str]) -> tuple[str, Optional[int], Any]:
        kw = {} if socket_transport is None else {"socket_transport": socket_transport}
        async with Gateway(port=0, **kw) as gw:
            fake = FakeWsDevice(url_of(gw), "loopy", token=None)
            await fake.start()
            try:
                device = await gw.wait_for_device(timeout=5)
                link = next(iter(gw._links))
                return (
                    type(asyncio.get_running_loop()).__module__,
                    await device.call("self.counter.add", {"amount": 5}),
                    link.transport.underlying_transport,
                )
            finally:
                await fake.close()

    loops = [False, True] if uvloop_available() else [False]
    for use_uvloop in loops:
        for socket_transport in ("aiofastnet", "loop", None):
            loop = new_event_loop(use_uvloop)
            try:
                module, value, transport = loop.run_until_complete(main(socket_transport))
            finally:
                loop.close()
            assert value == 5
            assert module.startswith("uvloop") == use_uvloop
            assert isinstance(transport, aiofastnet.Transport) == (socket_transport == "aiofastnet")


def test_an_unknown_socket_transport_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"socket_transport='uv'\): expected one of loop, aiofastnet"):
        Gateway(port=0, socket_transport="uv")


async def test_gc_freeze_after_setup_and_thaw_on_close(
    fake_devices: list[FakeWsDevice], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from mcpgen.runtime.links import hub as hub_module

    monkeypatch.setattr(hub_module, "FREEZE_DELAY", 0.05)
    assert gc.get_freeze_count() == 0
    async with Gateway(port=0, gc_freeze=True) as gw:
        for i in range(3):
            fake = FakeWsDevice(url_of(gw), f"fz{i}", token=None)
            fake_devices.append(fake)
            await fake.start()
        devices = [await gw.wait_for_device(timeout=5) for _ in range(3)]
        await asyncio.sleep(0.3)
        assert gc.get_freeze_count() > 0, "set-up sessions are frozen"
        assert await devices[0].call("self.counter.add", {"amount": 1}) == 1
    assert gc.get_freeze_count() == 0, "closing the gateway thaws what it froze"
    async with Gateway(port=0) as gw:  # auto: not below FREEZE_MIN_DEVICES
        fake = FakeWsDevice(url_of(gw), "few", token=None)
        fake_devices.append(fake)
        await fake.start()
        await gw.wait_for_device(timeout=5)
        await asyncio.sleep(0.3)
        assert gc.get_freeze_count() == 0


async def test_requests_larger_than_the_initial_send_buffer(fake_devices: list[FakeWsDevice]) -> None:
    # The link starts picows' send buffer small (wslink.WRITE_BUFFER, 256 bytes in the
    # compiled build); every later message, larger or smaller, must still go out whole.
    async with Gateway(port=0, max_frame=1 << 20) as gw:
        fake = FakeWsDevice(url_of(gw), "big-sender", token=None)
        fake_devices.append(fake)
        await fake.start()
        device = await gw.wait_for_device(timeout=5)
        for n in (10, 300, 5000, 70000, 20, 200000, 1):
            text = "".join(chr(97 + i % 26) for i in range(n))
            assert await device.call("self.test.text", {"text": text}, timeout=5) == text
