"""Newline-delimited transports: a device process on stdio, and serial links via pyserial."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator

import pytest
from runtime_fakes import FAKE_STDIO, Die, FakeCore

from mcpgen.runtime import connect_process, connect_serial
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout, SpecMismatch
from mcpgen.runtime.transports import FrameTooLarge, LineFramer

# -- line framing ------------------------------------------------------------------------------


def test_line_framer_splits_strips_and_limits() -> None:
    f = LineFramer(max_frame=10)
    assert f.feed(b'{"a":') == []
    assert f.feed(b'1}\r\n\n  \n{"b"') == [b'{"a":1}']
    assert f.feed(b":2}\n") == [b'{"b":2}']
    with pytest.raises(FrameTooLarge):
        f.feed(b"x" * 11)
    with pytest.raises(FrameTooLarge):
        LineFramer(max_frame=4).feed(b"12345\n")


# -- stdio process -----------------------------------------------------------------------------


async def test_process_session_and_calls() -> None:
    device = await connect_process([*FAKE_STDIO, "--page-size", "2"], stderr="devnull")
    try:
        assert device.device_id.startswith("process:")
        assert device.session_id is None
        assert device.server_info["name"] == "xiaozhi-sim"
        assert len(device.tools) == 19 and device.tool("self.reboot").user_only
        assert await device.call("self.counter.add", {"amount": 3}) == 3
        assert await device.call("self.audio_speaker.set_volume", {"volume": 1}) is True
        results = await asyncio.gather(
            *(device.call("self.test.sleep", {"ms": (7 - i) * 10, "tag": f"t{i}"}) for i in range(8))
        )
        assert results == [f"t{i}" for i in range(8)]
    finally:
        await device.close()
    assert device.closed


async def test_process_fingerprint_strict_mismatch_closes_the_process() -> None:
    with pytest.raises(SpecMismatch) as err:
        await connect_process(FAKE_STDIO, fingerprint="0000000000000000", policy="strict", stderr="devnull")
    assert err.value.expected == "0000000000000000"


async def test_process_fingerprint_match() -> None:
    fp = FakeCore().spec.fingerprint
    device = await connect_process(FAKE_STDIO, fingerprint=fp, policy="strict", stderr="devnull")
    try:
        assert device.dynamic is False and device.fingerprint == fp
    finally:
        await device.close()


async def test_process_dying_mid_call_fails_fast() -> None:
    device = await connect_process(FAKE_STDIO, call_timeout=30, stderr="devnull")
    hang = asyncio.create_task(device.call("self.test.hang"))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    with pytest.raises(DeviceDisconnected):
        await device.call("self.test.die")
    with pytest.raises(DeviceDisconnected):
        await asyncio.wait_for(hang, 5)
    assert time.monotonic() - started < 3
    assert "exited with code 3" in device.close_reason
    await device.close()


async def test_process_timeout_and_noise(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="mcpgen.runtime.process.stderr"):
        device = await connect_process([*FAKE_STDIO, "--banner"], stderr="log")
    try:
        with pytest.raises(DeviceTimeout):
            await device.call("self.test.hang", timeout=0.2)
        assert await device.call("self.counter.add") == 1
    finally:
        await device.close()
    assert "fake device ready" in caplog.text


async def test_process_oversize_line_closes_the_link() -> None:
    device = await connect_process(FAKE_STDIO, max_frame=2048, stderr="devnull")
    try:
        assert len(await device.call("self.test.big", {"n": 100})) == 100
        with pytest.raises(DeviceDisconnected):
            await asyncio.wait_for(device.call("self.test.big", {"n": 5000}), 5)
        assert "frame refused" in device.close_reason
    finally:
        await device.close()


async def test_process_that_does_not_start() -> None:
    with pytest.raises(OSError):
        await connect_process(["/nonexistent/simulator", "--stdio"])


async def test_process_that_exits_at_once() -> None:
    with pytest.raises(DeviceDisconnected):
        await connect_process([sys.executable, "-c", "pass"], setup_timeout=5)


# -- serial ---------------------------------------------------------------------------------------


async def serve_core_on_stream(
    core: FakeCore, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    async def notify(method: str, params: object) -> None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        writer.write(json.dumps(msg).encode() + b"\n")

    core.send_notification = notify
    writer.write(b"rst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\n")

    async def one(msg: object) -> None:
        try:
            reply = await core.handle(msg)
        except Die:
            writer.transport.abort()
            return
        if reply is not None:
            writer.write(json.dumps(reply).encode() + b"\n")

    while line := await reader.readline():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        asyncio.ensure_future(one(msg))


@pytest.fixture
async def tcp_uart() -> AsyncIterator[tuple[str, FakeCore]]:
    """A fake device behind a TCP socket, like QEMU's ``-serial tcp::PORT,server``."""
    core = FakeCore(page_size=5)
    server = await asyncio.start_server(lambda r, w: serve_core_on_stream(core, r, w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"socket://127.0.0.1:{port}", core
    server.close()


async def test_serial_over_socket_url(tcp_uart: tuple[str, FakeCore]) -> None:
    url, core = tcp_uart
    device = await connect_serial(url, fingerprint=core.spec.fingerprint, policy="strict")
    try:
        assert device.device_id == f"serial:{url}" and not device.dynamic
        assert [t.name for t in device.tools] == [t["name"] for t in core.tools]
        assert await device.call("self.sensor.read_temperature", {"unit": "fahrenheit"}) == 70.7
        got: list[str] = []
        device.on_notification(lambda m, p: got.append(m))
        await device.call("self.test.notify", {"method": "notifications/state_changed"})
        await asyncio.sleep(0.1)
        assert got == ["notifications/state_changed"]
        hang = asyncio.create_task(device.call("self.test.hang", timeout=30))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(DeviceDisconnected):
            await device.call("self.test.die")
        with pytest.raises(DeviceDisconnected):
            await asyncio.wait_for(hang, 5)
        assert time.monotonic() - started < 3
    finally:
        await device.close()


async def test_serial_initialize_is_retried_while_the_device_boots() -> None:
    """The device ignores everything for a while (booting); initialize is re-sent."""
    core = FakeCore()
    boot_until = time.monotonic() + 0.6

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while time.monotonic() < boot_until:
            try:
                await asyncio.wait_for(reader.readline(), boot_until - time.monotonic())
            except TimeoutError:
                break
        await serve_core_on_stream(core, reader, writer)

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        device = await connect_serial(f"socket://127.0.0.1:{port}", init_retry=0.2, setup_timeout=5)
        try:
            inits = [m for m in core.received if m.get("method") == "initialize"]
            assert len(inits) >= 1
            assert await device.call("self.counter.add") == 1
        finally:
            await device.close()
    finally:
        server.close()


@pytest.mark.skipif(os.name != "posix", reason="ptys are POSIX")
async def test_serial_over_a_pty() -> None:
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    core = FakeCore()
    loop = asyncio.get_running_loop()
    os.set_blocking(master, False)
    buf = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            return
        buf.extend(chunk)
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            asyncio.ensure_future(answer(line))

    async def answer(line: bytes) -> None:
        reply = await core.handle(json.loads(line))
        if reply is not None:
            os.write(master, json.dumps(reply).encode() + b"\n")

    loop.add_reader(master, readable)
    try:
        device = await connect_serial(os.ttyname(slave), baudrate=921600)
        try:
            assert await device.call("self.counter.add", {"amount": 5}) == 5
            assert device.server_info["name"] == "xiaozhi-sim"
        finally:
            await device.close()
    finally:
        loop.remove_reader(master)
        os.close(master)
        os.close(slave)
