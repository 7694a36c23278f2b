"""The gateway's own per-call code, compiled vs interpreted, without sockets or a loop turn.

``python -m benchmarks.gw_frame`` runs, in one process and in interleaved rounds, one
``tools/call`` round trip through each build of the runtime (the compiled modules and a
second, source-only copy imported by :mod:`benchmarks.purepy`):

* the call: ``Session.call`` (id, encode, pending slot), ``Deadlines.add_call`` (its
  deadline in the slot) and ``DeviceLink.send_now`` (picows frames it; the socket write
  is a no-op);
* the reply: ``DeviceLink.on_ws_frame`` with the device's reply as picows hands it over
  (a ``WSFrame``), then ``Session.feed``: envelope, JSON-RPC, id match, decode for the
  tool's return kind (boolean), the caller's future resolved.

That is everything the gateway adds per call to the transport, loop and future that the
picows echo of ``benchmarks/gateway.py`` also pays, so the ratio of the two builds here is
the compiled build's own gain. A second measurement (``call_*`` keys) runs the same round
trip as the gateway does, through ``CallSite.call``: the awaitable (``PendingCall``) a
binding method returns, its future, and its resumption with the decoded value. The cyclic GC is off
while a batch runs (as in the hot path section); what the GC costs under load is the
gateway section's business. Prints medians (ns per call) and the per-round ratio.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import socket
import statistics
import sys
import time
from types import ModuleType
from typing import Any

from benchmarks.purepy import import_pure, is_compiled

N = 2000  # calls per batch
SESSION_ID = "7c1f8a4e-2d0b-4f57-9e36-0c1d2e3f4a5b"
ARGS = {"r": 255, "g": 128, "b": 0}


class _NullTransport:
    """What picows' WSTransport writes to: always "busy", so it hands bytes to write(), a no-op."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.get_write_buffer_size = (1).__index__  # non-zero: picows does not send() itself
        self.write = collections.deque(maxlen=0).append  # C-level, drops the bytes

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._sock if name == "socket" else default


def _reply(rid: int) -> bytes:
    return (
        b'{"session_id":"%s","type":"mcp","payload":{"jsonrpc":"2.0","id":%d,'
        b'"result":{"content":[{"type":"text","text":"true"}],"isError":false}}}' % (SESSION_ID.encode(), rid)
    )


class _Owner:
    closed = False
    call_timeout = 30.0

    def expire_request(self, rid: int, timeout: float, what: str) -> None:  # pragma: no cover - 30 s
        pass


def _batch(
    codec: ModuleType, wslink: ModuleType, loop: asyncio.AbstractEventLoop, sock: socket.socket
) -> float:
    from picows import WSMsgType
    from picows.picows import WSTransport, _make_test_ws_frame  # type: ignore[attr-defined]

    transport = WSTransport(False, _NullTransport(sock), _Logger(), loop)
    link = wslink.DeviceLink(None, None, 1 << 20)
    link.transport = transport
    session = codec.RpcSession(SESSION_ID)
    link.session = session
    link.state = wslink.RUNNING
    deadlines = codec.Deadlines(loop)
    owner = _Owner()
    first = session.next_id
    frames = [_make_test_ws_frame(WSMsgType.TEXT, _reply(first + i), True, False) for i in range(N)]
    futs = [loop.create_future() for _ in range(N)]
    call, add_call, send_now, on_frame = session.call, deadlines.add_call, link.send_now, link.on_ws_frame
    kind = codec.KIND_BOOLEAN
    gc.collect()
    gc.disable()  # a batch's prepared frames and futures would trigger full collections
    t0 = time.perf_counter()
    for i in range(N):
        fut = futs[i]
        send_now(call("self.light.set_rgb", ARGS, fut, kind))
        add_call(session, session.last_id, 30.0, owner, "self.light.set_rgb")
        on_frame(transport, frames[i])
    dt = time.perf_counter() - t0
    gc.enable()
    deadlines.close()
    for fut in futs:
        assert fut.result() is True
    return dt / N


def _batch_call(
    codec: ModuleType, wslink: ModuleType, loop: asyncio.AbstractEventLoop, sock: socket.socket
) -> float:
    """The whole call as the gateway runs it: ``CallSite.call`` (the awaitable a binding
    method returns), awaited by a caller's coroutine that is stepped by hand where the
    loop would: it runs to its ``await`` (future, encode, pending slot, deadline, send),
    the reply frame resolves the future, and the caller resumes with the value."""
    from picows import WSMsgType
    from picows.picows import WSTransport, _make_test_ws_frame  # type: ignore[attr-defined]

    transport = WSTransport(False, _NullTransport(sock), _Logger(), loop)
    link = wslink.DeviceLink(None, None, 1 << 20)
    link.transport = transport
    session = codec.RpcSession(SESSION_ID)
    link.session = session
    link.state = wslink.RUNNING
    deadlines = codec.Deadlines(loop)
    site = codec.CallSite(session, loop, deadlines, _Owner(), link)
    first = session.next_id
    frames = [_make_test_ws_frame(WSMsgType.TEXT, _reply(first + i), True, False) for i in range(N)]
    call, on_frame = site.call, link.on_ws_frame
    kind = codec.KIND_BOOLEAN
    values = []
    gc.collect()
    gc.disable()
    t0 = time.perf_counter()
    for i in range(N):
        coro = _caller(call("self.light.set_rgb", ARGS, kind))
        coro.send(None)  # yields the future it waits on
        on_frame(transport, frames[i])
        try:
            coro.send(None)
        except StopIteration as stop:
            values.append(stop.value)
    dt = time.perf_counter() - t0
    gc.enable()
    deadlines.close()
    assert values == [True] * N
    return dt / N


async def _caller(call: Any) -> Any:
    """The binding's caller (``await lamp.light.set_rgb(...)``): the interpreter's ``await``."""
    return await call


class _Logger:
    """picows asks its logger whether debug logging is on; nothing else is logged here."""

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 - the logging API
        return False


def measure(rounds: int = 15) -> dict[str, Any]:
    from mcpgen.runtime.core import codec, rpcsession
    from mcpgen.runtime.links.websocket import wslink

    pure = import_pure(
        [
            "mcpgen.runtime.core.codec",
            "mcpgen.runtime.core.rpcsession",
            "mcpgen.runtime.links.websocket.wslink",
        ]
    )
    builds = {
        "compiled": (codec, wslink),
        "pure Python": (pure["mcpgen.runtime.core.codec"], pure["mcpgen.runtime.links.websocket.wslink"]),
    }
    from mcpgen.runtime.core.loop import new_event_loop, uvloop_available

    loop = new_event_loop()  # uvloop where installed, as the gateway runs (loop.time() per deadline)
    sock = socket.socket()
    out: dict[str, Any] = {
        "loop": "uvloop" if uvloop_available() else "asyncio",
        "compiled": is_compiled(rpcsession) and is_compiled(wslink),  # codec re-exports rpcsession
        "pure_is_source": not is_compiled(pure["mcpgen.runtime.core.rpcsession"]),
        "calls_per_batch": N,
    }
    try:
        for key, batch in (("", _batch), ("call_", _batch_call)):
            samples: dict[str, list[float]] = {k: [] for k in builds}
            for c, w in builds.values():  # warm-up
                batch(c, w, loop, sock)
            for r in range(rounds):
                order = list(builds) if r % 2 == 0 else list(reversed(builds))
                for k in order:
                    samples[k].append(batch(*builds[k], loop, sock))
            out[key + "ns_per_call"] = {k: statistics.median(v) * 1e9 for k, v in samples.items()}
            out[key + "pure_vs_compiled"] = statistics.median(
                p / c for p, c in zip(samples["pure Python"], samples["compiled"], strict=True)
            )
    finally:
        sock.close()
        loop.close()
    return out


def main() -> int:
    print(json.dumps(measure(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
