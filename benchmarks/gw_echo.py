"""Reference rows of the gateway benchmark: the bare transport, no MCP work.

``python -m benchmarks.gw_echo --transport picows|websockets`` is a WebSocket server
that speaks just enough for ``benchmarks.gw_emulator`` (answers the device hello with a
session id) and then, per round, sends each device one precomputed ``tools/call`` frame
and waits for any text frame back, one in flight per device: the cost of moving a
request and its reply through that transport and a future, which the gateway cannot
undercut. Same JSON-lines control protocol and figures as ``benchmarks.gw_worker``.

With picows, ``{"cmd": "broadcast", "rounds": k}`` is the floor of a fan-out: each round
sends every device its precomputed frame in one pass (``transport.send`` of prebuilt
bytes: nothing encoded, no id, no future per device) and counts the replies in the
frame callback without looking at them; the round ends when every device answered.
It reports the process's user and system CPU per device-call (``getrusage``).

* ``picows``: a picows server on uvloop; the reply resolves the waiting future from the
  frame callback (what the gateway's compiled listener does, minus the MCP work). picows
  runs it on its default transport, aiofastnet's (it reads with ``recv()``), as the
  gateway rows do (``socket_transport="aiofastnet"``, which paces aiofastnet's read loop
  to the per-turn bound ``wslink.READ_CHUNK``; the echo reads up to 256 KiB per turn).
* ``picows-stream``: the same on uvloop's own TCP stream (libuv reads with ``read()``;
  uvloop's buffered-protocol path asks picows for a buffer before every read), the
  transport of ``Gateway(socket_transport="loop")``, the gateway's default.
* ``websockets``: a websockets server on plain asyncio, one reader task per connection
  (what the gateway was built on before).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import resource
import sys
import time
from typing import Any, Optional

import orjson

from benchmarks.gw_worker import _emit, commands, drive
from benchmarks.procutil import raise_nofile_limit, rss_bytes

REQUEST_PAYLOAD = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "self.light.set_rgb", "arguments": {"r": 255, "g": 128, "b": 0}},
}


def _request(session_id: str) -> bytes:
    return orjson.dumps({"session_id": session_id, "type": "mcp", "payload": REQUEST_PAYLOAD})


def _server_hello(index: int) -> tuple[str, bytes]:
    sid = f"echo-session-{index}"
    return sid, orjson.dumps({"type": "hello", "transport": "websocket", "session_id": sid, "version": 3})


def cpu_split() -> tuple[float, float]:
    """This process's (user, system) CPU seconds so far."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime, ru.ru_stime


def with_split(res: dict[str, Any], before: tuple[float, float]) -> dict[str, Any]:
    """``res`` with its ``cpu_us_per_call`` split into user and system time, in the shares
    the process spent of each since ``before``."""
    user, system = cpu_split()
    du, ds = user - before[0], system - before[1]
    share = du / (du + ds) if du + ds > 0 else 0.0
    res["user_us_per_call"] = res["cpu_us_per_call"] * share
    res["system_us_per_call"] = res["cpu_us_per_call"] * (1 - share)
    return res


class PicowsEcho:
    def __init__(self, use_aiofastnet: bool = True) -> None:
        self.use_aiofastnet = use_aiofastnet
        self.links: list[Any] = []
        # The broadcast round in progress: replies still due, and what to wake at zero.
        self.due = 0
        self.round_done: Optional[asyncio.Future] = None

    async def start(self) -> int:
        from picows import WSListener, WSMsgType, ws_create_server

        server_self = self

        class Link(WSListener):  # type: ignore[misc]
            def __init__(self) -> None:
                super().__init__()
                self.transport: Any = None
                self.fut: Optional[asyncio.Future] = None
                self.request = b""

            def on_ws_connected(self, transport: Any) -> None:
                self.transport = transport

            def on_ws_frame(self, transport: Any, frame: Any) -> None:
                if frame.msg_type != WSMsgType.TEXT:
                    if frame.msg_type == WSMsgType.CLOSE:
                        transport.send_close(frame.get_close_code())
                        transport.disconnect()
                    return
                fut = self.fut
                if fut is not None:
                    self.fut = None
                    fut.set_result(None)
                    return
                done = server_self.round_done
                if done is not None and self.request:  # a broadcast reply: counted, not read
                    server_self.due -= 1
                    if server_self.due == 0:
                        server_self.round_done = None
                        done.set_result(None)
                    return
                if not self.request:  # the device hello
                    sid, hello = _server_hello(len(server_self.links))
                    self.request = _request(sid)
                    transport.send(WSMsgType.TEXT, hello)
                    server_self.links.append(self)

        self._text = WSMsgType.TEXT
        self.server = await ws_create_server(
            lambda request: Link(),
            "127.0.0.1",
            0,
            max_frame_size=1 << 20,
            read_buffer_init_size=2048,
            logger_name=logging.LoggerAdapter(logging.getLogger("benchmarks.gw_echo"), {}),
            backlog=1024,
            use_aiofastnet=self.use_aiofastnet,
        )
        return int(self.server.sockets[0].getsockname()[1])

    def callers(self) -> list[Any]:
        loop = asyncio.get_running_loop()
        text = self._text

        def make(link: Any) -> Any:
            async def call() -> None:
                fut = loop.create_future()
                link.fut = fut
                link.transport.send(text, link.request)
                await fut

            return call

        return [make(link) for link in self.links]

    async def broadcast(self, rounds: int, timeout: float) -> dict[str, Any]:
        """``rounds`` broadcasts to every device (see the module docstring)."""
        loop = asyncio.get_running_loop()
        text = self._text
        pairs = [(link.transport, link.request) for link in self.links]
        gc.collect()
        before = cpu_split()
        t0 = time.perf_counter()
        for _ in range(rounds):
            done = loop.create_future()
            self.due = len(pairs)
            self.round_done = done
            for transport, request in pairs:
                transport.send(text, request)
            try:
                await asyncio.wait_for(done, timeout)
            except TimeoutError:
                self.round_done = None
                return {"error": f"broadcast: {self.due} of {len(pairs)} devices did not answer"}
        elapsed = time.perf_counter() - t0
        calls = rounds * len(pairs)
        user, system = cpu_split()
        cpu = user - before[0] + system - before[1]
        res = {
            "devices": len(pairs),
            "calls": calls,
            "errors": 0,
            "seconds": elapsed,
            "cpu_seconds": cpu,
            "cpu_us_per_call": cpu / calls * 1e6 if calls else 0.0,
        }
        return with_split(res, before)

    async def close(self) -> None:
        for link in self.links:
            link.transport.disconnect()
        self.server.close()


class WebsocketsEcho:
    def __init__(self) -> None:
        self.conns: list[Any] = []

    async def start(self) -> int:
        from websockets.asyncio.server import serve
        from websockets.exceptions import ConnectionClosed

        async def handler(ws: Any) -> None:
            await ws.recv()  # the device hello
            sid, hello = _server_hello(len(self.conns))
            await ws.send(hello, text=True)
            conn = {"ws": ws, "fut": None, "request": _request(sid)}
            self.conns.append(conn)
            try:
                async for _ in ws:
                    fut = conn["fut"]
                    if fut is not None:
                        conn["fut"] = None
                        fut.set_result(None)
            except ConnectionClosed:
                pass  # the emulator went away at the end of the run

        self.server = await serve(
            handler, "127.0.0.1", 0, compression=None, ping_interval=None, max_size=1 << 20
        )
        return int(next(iter(self.server.sockets)).getsockname()[1])

    def callers(self) -> list[Any]:
        loop = asyncio.get_running_loop()

        def make(conn: dict[str, Any]) -> Any:
            ws = conn["ws"]
            request = conn["request"]

            async def call() -> None:
                fut = loop.create_future()
                conn["fut"] = fut
                await ws.send(request, text=True)
                await fut

            return call

        return [make(c) for c in self.conns]

    async def close(self) -> None:
        self.server.close()


async def main_async(transport: str) -> int:
    server: Any = WebsocketsEcho() if transport == "websockets" else PicowsEcho(transport == "picows")
    port = await server.start()
    loop = asyncio.get_running_loop()
    _emit({"port": port, "compiled": False, "rss": rss_bytes(), "loop": type(loop).__module__})
    try:
        async for cmd in commands():
            op = cmd.get("cmd")
            if op == "quit":
                break
            if op == "await":
                n = int(cmd["n"])
                t0 = time.perf_counter()
                deadline = t0 + float(cmd.get("timeout", 60))
                while len(server.callers()) < n and time.perf_counter() < deadline:
                    await asyncio.sleep(0.02)
                _emit(
                    {"ready": len(server.callers()), "rss": rss_bytes(), "seconds": time.perf_counter() - t0}
                )
            elif op == "bench":
                before = cpu_split()
                res = await drive(
                    server.callers(),
                    float(cmd.get("duration", 1.0)),
                    int(cmd.get("per_device", 1 << 30)),
                    bool(cmd.get("freeze")),
                )
                _emit(with_split(res, before))
            elif op == "broadcast" and isinstance(server, PicowsEcho):
                _emit(await server.broadcast(int(cmd.get("rounds", 1)), float(cmd.get("timeout", 60))))
            else:
                _emit({"error": f"unknown command {op!r}"})
    finally:
        await server.close()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="bare-transport reference server of the gateway benchmark")
    ap.add_argument("--transport", choices=("picows", "picows-stream", "websockets"), required=True)
    args = ap.parse_args(argv)
    raise_nofile_limit()
    from mcpgen.runtime.core.loop import run

    return run(main_async(args.transport), use_uvloop=args.transport != "websockets")


if __name__ == "__main__":
    sys.exit(main())
