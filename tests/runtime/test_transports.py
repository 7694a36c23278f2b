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
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout, ProtocolError, SpecMismatch
from mcpgen.runtime.links.transports import LineFramer, is_jsonrpc_line, reply_head_id

# -- line framing ------------------------------------------------------------------------------


def test_line_framer_splits_strips_and_drops_overlong_lines() -> None:
    heads: list[bytes] = []
    f = LineFramer(max_frame=10, on_overlong=heads.append)
    assert f.feed(b'{"a":') == []
    assert f.feed(b'1}\r\n\n  \n{"b"') == [b'{"a":1}']
    assert f.feed(b":2}\n") == [b'{"b":2}']
    # an overlong line arriving in pieces is dropped to its newline, reported once
    assert f.feed(b"x" * 12) == [] and heads == [b"x" * 12]
    assert f.feed(b"y" * 5000) == [] and f.feed(b"zz\n{}\n") == [b"{}"]
    assert heads == [b"x" * 12] and f.dropped == 1
    # one in a single chunk, between two good lines
    assert f.feed(b"1\n" + b"n" * 20 + b"\n2\r\n") == [b"1", b"2"]
    assert f.dropped == 2 and heads[1] == b"n" * 20
    assert LineFramer(max_frame=4).feed(b"12345\n1234\r\n") == [b"1234"]


def test_overlong_noise_is_not_kept() -> None:
    """Regression (issue 40): a 2 MiB line of noise closed a serial device for good. The
    framer skips it without storing it and reads on from the next newline."""
    f = LineFramer(max_frame=1 << 20)
    for _ in range(32):
        assert f.feed(b"\xff" * 65536) == []
        assert len(f._buf) <= 1 << 20
    assert f.feed(b"\n" + b'{"jsonrpc":"2.0","method":"m"}\n') == [b'{"jsonrpc":"2.0","method":"m"}']
    assert f.dropped == 1


def test_only_jsonrpc_lines_reach_the_session() -> None:
    assert is_jsonrpc_line(b'{"jsonrpc":"2.0","id":5,"result":{}}')
    assert is_jsonrpc_line(b' {"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}}')
    assert is_jsonrpc_line(b'{"jsonrpc":"2.0","method":"notifications/x"}')
    assert not is_jsonrpc_line(b'I (1234) mcp: reply {"jsonrpc":"2.0","id":5,"result":{}}')
    assert not is_jsonrpc_line(b'{"id":5,"level":"info","msg":"handling call 5"}')  # a structured log
    assert not is_jsonrpc_line(b'{"jsonrpc":"2.0","id":5}')  # neither result nor error
    assert not is_jsonrpc_line(b'{"jsonrpc":"2.0","id":5,"result":')
    assert not is_jsonrpc_line(b"[1,2]")
    assert reply_head_id(b'{"jsonrpc":"2.0","id":17,"result":{"contents":[{"blob":"AAAA') == 17
    assert reply_head_id(b'{"id":"a-1", "jsonrpc":"2.0", "error":') == "a-1"
    assert reply_head_id(b'log: {"jsonrpc":"2.0","id":17,"result":') is None
    assert reply_head_id(b'{"jsonrpc":"2.0","method":"x","id":17,"result":') is None


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


async def test_process_overlong_reply_fails_its_call_and_keeps_the_device() -> None:
    """Regression (issue 40): a reply longer than max_frame killed the device process (a 2 MiB
    resource read through the console ended a stdio device). The line is now skipped
    without being stored, its call fails at once with an error that says why, and the
    device answers the next call."""
    device = await connect_process(FAKE_STDIO, max_frame=2048, call_timeout=30, stderr="devnull")
    try:
        assert len(await device.call("self.test.big", {"n": 100})) == 100
        with pytest.raises(ProtocolError, match=r"longer than max_frame=2048 bytes and was dropped"):
            await asyncio.wait_for(device.call("self.test.big", {"n": 5000}), 5)
        assert not device.closed
        assert len(await device.call("self.test.big", {"n": 1000})) == 1000
        assert await device.call("self.counter.add", {"amount": 2}) == 2
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


async def serve_noisy_uart(
    core: FakeCore, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """A device whose UART also carries its log: before each reply it prints a log line that
    quotes the request (and so its id), and, once, 2 MiB of noise without a newline."""
    noise_sent = False

    while line := await reader.readline():
        msg = json.loads(line)
        rid = msg.get("id")
        writer.write(b"I (4711) mcp: handling " + line.rstrip() + b"\n")
        writer.write(b'{"level":"debug","id":%s,"msg":"calling handler"}\n' % json.dumps(rid).encode())
        writer.write(
            b'E (4712) mcp: {"jsonrpc":"2.0","id":%s,"error":{"code":-1,"message":"old"}}\n'
            % json.dumps(rid).encode()
        )
        if msg.get("method") == "tools/call" and not noise_sent:
            noise_sent = True
            for _ in range(32):
                writer.write(bytes(range(11, 256)) * 270)  # ~64 KiB, no newline
                await writer.drain()
            writer.write(b"\n")
        reply = await core.handle(msg)
        if reply is not None:
            writer.write(json.dumps(reply).encode() + b"\n")
        await writer.drain()


async def test_serial_resyncs_after_noise_and_ignores_log_lines_that_quote_ids(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Regression (issue 40): 2 MiB of noise without a newline closed a serial device for
    good, and a log line quoting a pending call's id failed that call (19 of 20). Now the
    noise is skipped to the next newline (logged once), and only JSON-RPC lines are
    matched to calls: all 20 calls succeed on the same link."""
    core = FakeCore()
    server = await asyncio.start_server(lambda r, w: serve_noisy_uart(core, r, w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with caplog.at_level(logging.WARNING, "mcpgen.runtime.links.transports"):
            device = await connect_serial(f"socket://127.0.0.1:{port}", setup_timeout=10, call_timeout=10)
            try:
                results = [await device.call("self.counter.add", {"amount": 1}) for _ in range(20)]
                assert results == list(range(1, 21))
                assert not device.closed
                link = device._transport.link
                assert link.framer.dropped == 1 and link.ignored >= 3 * 20
            finally:
                await device.close()
        dropped = [r.getMessage() for r in caplog.records if "longer than max_frame" in r.getMessage()]
        assert len(dropped) == 1, dropped
    finally:
        server.close()
