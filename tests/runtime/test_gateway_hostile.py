"""A hostile device against the gateway's WebSocket layer (issue 31, items 1-4).

A device that never reads what it is sent, one that floods, and connections that never
finish their HTTP upgrade: each may end its own connection, never grow the gateway
without bound or lock the other devices out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import resource
import socket
import struct
from typing import Any

import pytest
from runtime_fakes import FakeWsDevice
from test_gateway_transport import HELLO, open_raw, read_all, read_frame, upgrade_request, url_of

from mcpgen.runtime import Gateway
from mcpgen.runtime.core.loop import new_event_loop, uvloop_available
from mcpgen.runtime.links import fdlimit
from mcpgen.runtime.links.websocket import gateway

MIB = 1 << 20


def rss_bytes() -> int:
    """This process's resident set now (the gateway runs in it)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def frame(opcode: int, payload: bytes) -> bytes:
    """A client frame with a zero mask (cheap to build for large payloads; still masked)."""
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + b"\0\0\0\0" + payload


def raw_device(port: int, device_id: str) -> socket.socket:
    """A connected, upgraded socket with a tiny receive buffer (it will not read)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(upgrade_request(port, {"Device-Id": device_id}))
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101 ")
    return sock


def server_hello(sock: socket.socket) -> dict[str, Any]:
    """Reads exactly the server hello (the first frame) from a blocking socket."""

    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            data += sock.recv(n - len(data))
        return data

    b0, b1 = exactly(2)
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", exactly(2))
    assert b0 & 0x0F == 0x1
    hello: dict[str, Any] = json.loads(exactly(n))
    assert hello["type"] == "hello"
    return hello


async def flood(sock: socket.socket, batch: bytes, limit: int, on_sent: Any = None) -> int:
    """Sends ``batch`` again and again without reading, until ``limit`` bytes went out or
    the gateway stopped taking any (the kernel's buffers are full); returns bytes sent."""
    sock.setblocking(False)
    view = memoryview(batch)
    sent = pos = stalls = 0
    while sent < limit and stalls < 100:
        try:
            n = sock.send(view[pos:])
        except BlockingIOError:
            stalls += 1
            await asyncio.sleep(0.01)
            continue
        except (ConnectionResetError, BrokenPipeError):  # the gateway closed it
            break
        stalls = 0
        sent += n
        pos = (pos + n) % len(batch)
        if on_sent is not None:
            on_sent()
        await asyncio.sleep(0)  # the gateway's turn
    return sent


# -- item 1: a device that does not read what it is sent ----------------------------------------


@pytest.mark.parametrize("phase", ["pings-before-hello", "unknown-method-in-setup", "long-id-in-setup"])
async def test_device_that_never_reads_cannot_grow_the_gateway(
    phase: str, fake_devices: list[FakeWsDevice]
) -> None:
    """Frames the gateway answers, sent by a device that never reads: WebSocket pings
    before its hello, 60 kB requests with an unknown method (whose error quoted it in
    full), JSON-RPC pings with a 60 kB id (echoed, as JSON-RPC wants) in a session never
    set up. The old gateway read everything and queued every reply (128 MiB sent grew it
    by as much); now the error quotes a bounded prefix, the gateway stops reading from a
    device that does not drain its replies, other devices' calls keep completing, and the
    stalled device is closed after ``drain_timeout`` with a log line and a count."""
    async with Gateway(port=0, drain_timeout=3.0, hello_timeout=30, ping_interval=None) as gw:
        good = FakeWsDevice(url_of(gw), "good", token=None)
        fake_devices.append(good)
        await good.start()
        device = await gw.wait_for_device("good", timeout=5)
        sock = await asyncio.to_thread(raw_device, gw.port, "mute")
        if phase == "pings-before-hello":
            batch = frame(0x9, b"p" * 125) * 512  # pings: each answered with a 127-byte pong
        else:
            sock.sendall(frame(0x1, HELLO))
            sid = (await asyncio.to_thread(server_hello, sock))["session_id"]
            if phase == "unknown-method-in-setup":
                request = {"jsonrpc": "2.0", "id": 1, "method": "x" * 60000}
            else:
                request = {"jsonrpc": "2.0", "id": "i" * 60000, "method": "ping"}
            batch = frame(0x1, json.dumps({"session_id": sid, "type": "mcp", "payload": request}).encode())
        before = rss_bytes()
        peak = [before]

        def sample() -> None:
            peak[0] = max(peak[0], rss_bytes())

        sent = await flood(sock, batch, 128 * MIB, sample)
        sample()
        # What the kernel holds (a few MiB) is all the device got out; the gateway queued
        # at most its high watermark plus one read's replies.
        if phase != "unknown-method-in-setup":  # (its replies are small now: the kernel takes them)
            assert sent < 64 * MIB, f"the gateway read on from a device that does not read ({sent} B)"
        assert peak[0] - before < 48 * MIB, f"gateway grew by {(peak[0] - before) / MIB:.0f} MiB"
        for i in range(5):  # the other device is served meanwhile
            assert await device.call("self.counter.add", {"amount": 1}) == i + 1
        for _ in range(100 if phase != "unknown-method-in-setup" else 0):
            if gw.stalled_closed:
                break
            await asyncio.sleep(0.05)
        assert gw.stalled_closed == (0 if phase == "unknown-method-in-setup" else 1)
        assert await device.call("self.counter.add", {"amount": 1}) == 6
        sock.close()


@pytest.mark.skipif(not uvloop_available(), reason="uvloop is not installed")
def test_a_device_that_never_reads_is_paused_on_uvloop_too() -> None:
    """The same back-pressure on uvloop's transports (the loop backends run on)."""

    async def scenario() -> tuple[int, int]:
        async with Gateway(port=0, drain_timeout=2.0, hello_timeout=30, ping_interval=None) as gw:
            sock = await asyncio.to_thread(raw_device, gw.port, "mute")
            sent = await flood(sock, frame(0x9, b"p" * 125) * 512, 128 * MIB)
            for _ in range(100):
                if gw.stalled_closed:
                    break
                await asyncio.sleep(0.05)
            sock.close()
            return sent, gw.stalled_closed

    loop = new_event_loop(use_uvloop=True)
    try:
        sent, closed = loop.run_until_complete(scenario())
    finally:
        loop.close()
    assert sent < 64 * MIB and closed == 1


async def test_calls_to_a_stalled_device_stop_at_max_backlog(caplog: pytest.LogCaptureFixture) -> None:
    """Calls keep queueing requests for a device that does not read: past ``max_backlog``
    the call fails with DeviceDisconnected and the connection is closed (logged, counted)."""
    from mcpgen.runtime.errors import DeviceDisconnected

    async with Gateway(port=0, max_backlog=256 * 1024, drain_timeout=60, ping_interval=None) as gw:
        sock = await asyncio.to_thread(raw_device, gw.port, "mute")
        sock.sendall(frame(0x1, HELLO))
        await asyncio.to_thread(server_hello, sock)
        link = next(iter(gw._links))
        params = {"a": "a" * 30000}
        request = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
        with caplog.at_level(logging.WARNING, "mcpgen.runtime.links.websocket.gateway"):
            with pytest.raises(DeviceDisconnected):
                for _ in range(10000):  # 300 MB if nothing stopped it
                    link.send_now(request.encode())
        assert gw.stalled_closed == 1
        assert any("does not read its connection" in r.getMessage() for r in caplog.records)
        sock.close()


# -- item 3: one flooding device gets a bounded share of each loop turn ------------------------


@pytest.mark.parametrize("socket_transport", ["aiofastnet", "loop"])
async def test_a_flooding_device_is_read_in_bounded_chunks(socket_transport: str) -> None:
    """A device flooding notifications: each loop turn handles at most READ_CHUNK bytes of
    its frames (the old gateway's read buffer doubled with every full read, and one turn
    parsed what the kernel held: thousands of frames while the other devices waited).
    aiofastnet reads on while reads fill the buffer (256 KiB a turn): the protocol pauses it."""
    async with Gateway(port=0, ping_interval=None, socket_transport=socket_transport) as gw:
        sock = await asyncio.to_thread(raw_device, gw.port, "loud")
        sock.sendall(frame(0x1, HELLO))
        sid = (await asyncio.to_thread(server_hello, sock))["session_id"]
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
        one = frame(0x1, json.dumps({"session_id": sid, "type": "mcp", "payload": note}).encode())
        link = next(iter(gw._links))
        per_turn: list[int] = []
        done = asyncio.Event()

        async def ticker() -> None:
            last = link.frames
            while not done.is_set():
                await asyncio.sleep(0)  # one loop turn
                per_turn.append(link.frames - last)
                last = link.frames

        tick = asyncio.ensure_future(ticker())
        sent = await flood(sock, one * 10000, 32 * MIB)
        for _ in range(200):  # let the gateway read what the kernel still holds
            await asyncio.sleep(0.01)
        done.set()
        await tick
        sock.close()
        assert sent >= 32 * MIB
        assert gateway.READ_CHUNK <= 16384
        bound = 16384 // len(one) + 1  # READ_CHUNK bytes of these frames, one more straddling
        assert sum(per_turn) > 10 * bound  # the flood was read
        assert max(per_turn) <= bound, f"{max(per_turn)} frames in one turn (bound {bound})"


# -- item 2: connections that never finish the HTTP upgrade ------------------------------------


async def test_half_open_connections_are_capped_per_source_and_in_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with Gateway(port=0, max_handshakes=100, max_handshakes_per_source=3) as gw:
        idle = [await asyncio.open_connection("127.0.0.1", gw.port) for _ in range(3)]
        await asyncio.sleep(0.1)
        with caplog.at_level(logging.WARNING, "mcpgen.runtime.links.websocket.gateway"):
            refused = [await asyncio.open_connection("127.0.0.1", gw.port) for _ in range(10)]
            for reader, _ in refused:  # closed at once, nothing said
                assert await read_all(reader) == b""
        assert gw.handshakes_refused == 10
        lines = [r for r in caplog.records if "refused connection" in r.getMessage()]
        assert len(lines) == 1, "refusals are logged at a bounded rate"
        # one idle connection leaves: a device gets its slot
        idle[0][1].close()
        await asyncio.sleep(0.1)
        reader, writer, head = await open_raw(gw, {"Device-Id": "ok"})
        assert head.startswith(b"HTTP/1.1 101 ")
        writer.close()
        for _, w in idle[1:]:
            w.close()
    async with Gateway(port=0, max_handshakes=2, max_handshakes_per_source=100) as gw:
        idle = [await asyncio.open_connection("127.0.0.1", gw.port) for _ in range(2)]
        await asyncio.sleep(0.1)
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        assert await read_all(reader) == b""
        assert gw.handshakes_refused == 1 and gw._half_open == 2
        for _, w in idle:
            w.close()
        await asyncio.sleep(0.1)
        assert gw._half_open == 0 and gw._half_open_by_source == {}


async def test_rejected_upgrades_log_clipped_lines_at_a_bounded_rate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Regression (issue 40): each rejected upgrade logged the whole 10 kB header twice
    (HmacAuth, then the gateway), without a rate limit, so a peer chose how much the log
    grew. Now what the peer sent is quoted as a bounded prefix, and each of the two logs
    says at most ``burst`` lines per interval, then how many it left out."""
    from mcpgen.runtime.auth import HmacAuth

    big = "d" * 10_000
    async with Gateway(port=0, auth=HmacAuth("s" * 32)) as gw:
        with caplog.at_level(logging.WARNING, "mcpgen.runtime"):
            for _ in range(40):
                headers = {"Device-Id": big, "Authorization": "Bearer forged"}
                reader, writer, head = await open_raw(gw, headers)
                assert head.startswith(b"HTTP/1.1 401 ")
                await read_all(reader)
                writer.close()
        assert gw.rejected == 40
    said = [r.getMessage() for r in caplog.records if r.name.startswith("mcpgen.runtime")]
    assert said, "rejections are still logged"
    assert max(len(line) for line in said) < 400, "a logged line carries a bounded quote of the header"
    assert all(big not in line for line in said)
    assert any("(10002 characters)" in line for line in said), "the quote says how long the value was"
    # two loggers (HmacAuth, the gateway), each at most `burst` lines per interval
    assert len(said) <= 2 * 10, f"{len(said)} lines for 40 rejections"


def test_log_throttle_counts_what_it_leaves_out() -> None:
    from mcpgen.runtime.errors import LogThrottle

    now = [0.0]
    records: list[str] = []

    class Sink(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("mcpgen.test.throttle")
    logger.addHandler(sink := Sink())
    logger.propagate = False
    try:
        throttle = LogThrottle(logger, burst=2, interval=5.0, clock=lambda: now[0])
        assert [throttle.warning("refused %d", i) for i in range(5)] == [True, True, False, False, False]
        now[0] = 5.0
        assert throttle.warning("refused %d", 5)
        last = "refused 5 (3 more like it left out of the log since the last line)"
        assert records == ["refused 0", "refused 1", last]
    finally:
        logger.removeHandler(sink)
        logger.propagate = True


def test_gateway_start_raises_the_open_file_limit(caplog: pytest.LogCaptureFixture) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = 256
    if hard != resource.RLIM_INFINITY and hard <= low:
        pytest.skip(f"the hard open-file limit is {hard}: nothing to raise it to")
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:

        async def start() -> Gateway:
            async with Gateway(port=0) as gw:
                return gw

        with caplog.at_level(logging.INFO, "mcpgen.runtime.links.websocket.gateway"):
            gw = asyncio.run(start())
        now = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert now > low and (now == hard or now == 1 << 20)
        said = [r.getMessage() for r in caplog.records]
        assert any("RLIMIT_NOFILE" in m and f"from {low}" in m for m in said)
        assert gw.max_handshakes <= now // 2
        assert fdlimit.raise_nofile_limit() == now  # once raised, nothing more to say
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# -- item 4: the upgrade head's limit holds however it arrives ---------------------------------


async def test_oversize_upgrade_head_in_one_read_is_refused() -> None:
    async with Gateway(port=0) as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        pad = {"X-Pad": "a" * 20000}  # a whole 20 KB head, terminator included, in one write
        writer.write(upgrade_request(gw.port, {"Device-Id": "big", **pad}))
        assert (await read_all(reader)).startswith(b"HTTP/1.1 431 ")
        assert gw.rejected == 1
        writer.close()


async def test_unknown_method_error_quotes_a_bounded_prefix() -> None:
    async with Gateway(port=0, ping_interval=None) as gw:
        reader, writer, _ = await open_raw(gw, {"Device-Id": "long"})
        writer.write(frame(0x1, HELLO))
        _, payload = await asyncio.wait_for(read_frame(reader), 5)
        sid = json.loads(payload)["session_id"]
        request = {"jsonrpc": "2.0", "id": "q", "method": "m" * 50000}
        writer.write(frame(0x1, json.dumps({"session_id": sid, "type": "mcp", "payload": request}).encode()))
        while True:
            _, payload = await asyncio.wait_for(read_frame(reader), 5)
            reply = json.loads(payload)["payload"]
            if reply.get("id") == "q":
                break
        assert reply["error"]["code"] == -32601
        message = reply["error"]["message"]
        assert len(message) < 200 and message.startswith("Method not found: mmmm") and "50000" in message
        writer.close()


@pytest.mark.parametrize("when", ["as-hello", "in-session"])
async def test_text_frame_that_is_not_utf8_fails_with_1007(when: str) -> None:
    """RFC 6455 8.1: a text frame that is not UTF-8 fails the connection with 1007
    (the old gateway ignored it in a session and answered 1008 to such a hello)."""
    async with Gateway(port=0, ping_interval=None) as gw:
        reader, writer, _ = await open_raw(gw, {"Device-Id": "latin"})
        if when == "in-session":
            writer.write(frame(0x1, HELLO))
            _, payload = await asyncio.wait_for(read_frame(reader), 5)
            assert json.loads(payload)["type"] == "hello"
        writer.write(frame(0x1, b'{"type": "hello", "x": "\xff\xfe"}'))
        while True:
            opcode, payload = await asyncio.wait_for(read_frame(reader), 5)
            if opcode == 0x8:
                break
        assert struct.unpack("!H", payload[:2])[0] == 1007
        writer.close()


async def test_http_refusals_quote_a_bounded_prefix() -> None:
    async with Gateway(port=0, path="/xiaozhi/v1/") as gw:
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(upgrade_request(gw.port, {"Device-Id": "x", "Protocol-Version": "v" * 10000}))
        answer = await read_all(reader)
        assert answer.startswith(b"HTTP/1.1 400 ") and len(answer) < 400, answer[:500]
        assert b"(10002 characters)" in answer
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(upgrade_request(gw.port, {"Device-Id": "x"}, path="/" + "p" * 10000))
        answer = await read_all(reader)
        assert answer.startswith(b"HTTP/1.1 404 ") and len(answer) < 400, answer[:500]
