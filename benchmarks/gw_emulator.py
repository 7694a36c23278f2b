"""Light device emulators for the gateway benchmark (a separate process).

``python -m benchmarks.gw_emulator --url ws://127.0.0.1:PORT/ --count N`` opens N
WebSocket connections to the gateway (picows clients on uvloop: replies are written from
the frame callback, so the emulator stays well below one core and is not what limits
the gateway; a ``cpu`` line on stdin prints its CPU seconds so far), each a xiaozhi-style
device: the handshake headers (``Authorization: Bearer``, ``Protocol-Version``,
``Device-Id``, ``Client-Id``), the device ``hello`` with ``features.mcp``, then MCP over
``{"session_id","type":"mcp","payload"}`` envelopes answering ``initialize``,
``tools/list`` (desk-lamp's tools, as the firmware stores them) and ``tools/call`` with
precomputed replies, like the C++ core writes them.

Bounded: at most ``MAX_DEVICES`` connections, only to 127.0.0.1, and the process exits
after ``--max-seconds``, when its stdin closes or says ``quit``, or when its parent dies.
Prints one JSON line ``{"connected": n, "failed": m}`` once every connection is up.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import resource
import socket
import sys
import threading
import time
from typing import Any, Optional
from urllib.parse import urlparse

import orjson
from picows import WSFrame, WSListener, WSMsgType, WSTransport, ws_connect

from benchmarks.procutil import raise_nofile_limit
from mcpgen.runtime.core.loop import run
from tests.support.device_replies import Replies

#: Linux's IP_BIND_ADDRESS_NO_PORT (absent from Python's socket module before 3.12).
IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)
MAX_DEVICES = 19000  # under the 20,000 descriptors a process may hold on the benchmark machines
CONNECT_CONCURRENCY = 64
# An adapter, not a Logger: picows creates a child Logger per connection for a Logger.
_LOGGER = logging.LoggerAdapter(logging.getLogger("benchmarks.gw_emulator"), {})
HELLO = orjson.dumps(
    {
        "type": "hello",
        "version": 1,
        "features": {"mcp": True},
        "transport": "websocket",
        "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60},
    }
)


class Stats:
    def __init__(self, target: int) -> None:
        self.target = target
        self.connected = 0
        self.failed = 0
        self.calls = 0


class EmulatedDevice(WSListener):
    """One device: answers every request from precomputed templates, in the frame callback."""

    def __init__(self, replies: Replies, stats: Stats, hello_done: asyncio.Future) -> None:
        super().__init__()
        self.replies = replies
        self.stats = stats
        self.hello_done = hello_done
        self.tpl: Optional[dict[str, tuple[bytes, bytes]]] = None

    def on_ws_connected(self, transport: WSTransport) -> None:
        transport.send(WSMsgType.TEXT, HELLO)

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        mt = frame.msg_type
        if mt != WSMsgType.TEXT:
            if mt == WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code())
                transport.disconnect()
            return
        msg = orjson.loads(frame.get_payload_as_bytes())
        tpl = self.tpl
        if tpl is None:
            if msg.get("type") == "hello":
                self.tpl = self.replies.templates(str(msg.get("session_id", "")))
                if not self.hello_done.done():
                    self.hello_done.set_result(True)
            return
        p = msg.get("payload")
        if type(p) is not dict:
            return
        rid = p.get("id")
        method = p.get("method")
        if rid is None or method is None:
            return  # notifications and replies
        if method == "tools/call":
            params = p.get("params") or {}
            t = tpl.get("call:" + str(params.get("name"))) or tpl["error:unknown"]
            self.stats.calls += 1
        else:
            t = tpl.get(method) or tpl["ping"]
        transport.send(WSMsgType.TEXT, t[0] + str(rid).encode() + t[1])


async def run_device(
    url: str,
    index: int,
    prefix: str,
    replies: Replies,
    stats: Stats,
    ready: asyncio.Event,
    gate: asyncio.Semaphore,
    source: Optional[str] = None,
) -> Optional[WSTransport]:
    headers = {
        "Authorization": "Bearer bench-token",
        "Protocol-Version": "1",
        "Device-Id": f"{prefix}:{index // 65536 % 256:02x}:{index // 256 % 256:02x}:{index % 256:02x}",
        "Client-Id": f"bench-client-{index}",
    }
    transport: Optional[WSTransport] = None
    async with gate:
        try:
            hello_done = asyncio.get_running_loop().create_future()
            transport, _ = await ws_connect(
                lambda: EmulatedDevice(replies, stats, hello_done),
                url,
                extra_headers=headers,
                websocket_handshake_timeout=60,
                max_frame_size=1 << 20,
                read_buffer_init_size=4096,
                logger_name=_LOGGER,
                socket_factory=None if source is None else _bound_to(source),
            )
            await asyncio.wait_for(hello_done, 60)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            stats.failed += 1
            print(f"device {index}: connect failed: {exc!r}", file=sys.stderr)
            if transport is not None:
                transport.disconnect()
            transport = None
    if transport is not None:
        stats.connected += 1
    if stats.connected + stats.failed >= stats.target:
        ready.set()
    return transport


def _bound_to(source: str) -> Any:
    """A picows socket factory: a socket bound to ``source`` whose port connect() picks.

    A plain bind to port 0 reserves a port of ``source`` for any destination, searching the
    address's ports one by one: with 16,000 connections from one address that search was
    most of the emulators' CPU (system time) and set the 100,000-device ready time.
    IP_BIND_ADDRESS_NO_PORT defers the choice to connect(), which looks up the 4-tuple."""

    def factory(_url: Any) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
            s.bind((source, 0))
            s.setblocking(False)
        except OSError:
            s.close()
            raise
        return s

    return factory


def _cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    for line in sys.stdin:
        if "quit" in line:
            break
        if "cpu" in line:  # the parent samples the emulator's CPU around each round
            sys.stdout.write(orjson.dumps({"cpu_seconds": _cpu_seconds()}).decode() + "\n")
            sys.stdout.flush()
    loop.call_soon_threadsafe(stop.set)


async def main_async(args: argparse.Namespace) -> int:
    host = urlparse(args.url).hostname
    if host not in ("127.0.0.1", "localhost", "::1") or (args.source and not args.source.startswith("127.")):
        print("the emulator only connects to loopback", file=sys.stderr)
        return 2
    count = min(args.count, MAX_DEVICES)
    replies = Replies(args.spec)
    stats = Stats(count)
    ready = asyncio.Event()
    stop = asyncio.Event()
    gate = asyncio.Semaphore(args.concurrency)
    loop = asyncio.get_running_loop()
    threading.Thread(target=_watch_stdin, args=(loop, stop), daemon=True).start()
    parent = os.getppid()
    t0 = time.monotonic()
    connecting = asyncio.gather(
        *(
            run_device(args.url, i, args.prefix, replies, stats, ready, gate, args.source)
            for i in range(count)
        )
    )
    try:
        await asyncio.wait_for(ready.wait(), args.max_seconds)
    except TimeoutError:
        pass
    print(
        orjson.dumps(
            {"connected": stats.connected, "failed": stats.failed, "seconds": round(time.monotonic() - t0, 3)}
        ).decode(),
        flush=True,
    )
    deadline = t0 + args.max_seconds
    while not stop.is_set() and time.monotonic() < deadline and os.getppid() == parent:
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass
    stop.set()
    transports = await connecting
    for t in transports:
        if t is not None:
            t.disconnect()
    await asyncio.sleep(0.1)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--prefix", default="be:ec")
    ap.add_argument(
        "--spec", default=os.path.join(os.path.dirname(__file__), "..", "toolspec", "desk_lamp.yaml")
    )
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument(
        "--source",
        default=None,
        help="loopback source address (127.0.0.x): each has its own ~28,000 ephemeral ports",
    )
    ap.add_argument("--concurrency", type=int, default=CONNECT_CONCURRENCY, help="connections opened at once")
    args = ap.parse_args(argv)
    raise_nofile_limit()
    return run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
