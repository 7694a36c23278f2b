"""Where a connected device's memory goes in the gateway (issue 32): figures, not a test.

    python -m benchmarks.gw_rss [--devices 3000] [--trace] [--mode gateway|bare] [--auto-ping]

The gateway (``runtime.Gateway``, the options of ``benchmarks.scale``) runs in this
process on uvloop; ``benchmarks.gw_emulator`` connects 50 warm-up devices, then
``--devices`` more, and waits until their sessions are ready. Before and after those
devices (each after ``gc.collect()``), the process's memory is read
(``tests/support/memstats.py``): RSS, glibc's heap in use and free (``mallinfo2``), CPython's
obmalloc blocks and arenas, printed per device. ``--trace`` adds a ``tracemalloc`` diff
over the same span (slower; RSS is then not meaningful): the blocks that stayed, grouped
by traceback, and a size histogram of those allocated with no Python frame above them
(C callbacks: uvloop's accept, picows' parser, the compiled runtime).

``--mode bare`` measures the floor instead: a picows server on uvloop whose listener
keeps nothing (it answers each frame with a constant server hello, which is all the
emulated devices wait for), with the gateway's initial receive buffer;
``--auto-ping`` turns picows' own keepalive on (a task per connection).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import logging
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any, Optional

from benchmarks import procutil
from benchmarks.procutil import Child, raise_nofile_limit
from tests.support import memstats

WARMUP = 50
SERVER_HELLO = b'{"type":"hello","transport":"websocket","session_id":"bare","version":3}'


def _per_device(before: dict[str, Any], after: dict[str, Any], n: int) -> dict[str, float]:
    m0, m1 = before.get("malloc", {}), after.get("malloc", {})
    p0, p1 = before.get("pymalloc", {}), after.get("pymalloc", {})
    out = {
        "rss": (after["rss"] - before["rss"]) / n,
        "glibc_in_use": (m1.get("uordblks", 0) - m0.get("uordblks", 0)) / n,
        "glibc_free": (m1.get("fordblks", 0) - m0.get("fordblks", 0)) / n,
        "glibc_mmapped": (m1.get("hblkhd", 0) - m0.get("hblkhd", 0)) / n,
        "obmalloc_used": (p1.get("used_bytes", 0) - p0.get("used_bytes", 0)) / n,
        "obmalloc_free": (p1.get("free_bytes", 0) - p0.get("free_bytes", 0)) / n,
    }
    return {k: round(v, 1) for k, v in out.items()}


async def _bare_server(auto_ping: bool) -> tuple[Any, int]:
    from picows import WSListener, WSMsgType, ws_create_server

    from mcpgen.runtime.links.websocket.gateway import READ_BUFFER

    class Bare(WSListener):
        __slots__ = ()

        def on_ws_frame(self, transport: Any, frame: Any) -> None:
            transport.send(WSMsgType.TEXT, SERVER_HELLO)

    server = await ws_create_server(
        lambda request: Bare(),
        "127.0.0.1",
        0,
        max_frame_size=1 << 20,
        read_buffer_init_size=READ_BUFFER,
        enable_auto_ping=auto_ping,
        logger_name=logging.LoggerAdapter(logging.getLogger("benchmarks.gw_rss"), {}),
        backlog=1024,
    )
    return server, int(server.sockets[0].getsockname()[1])


async def _emulators(url: str, count: int, prefix: str) -> Child:
    def start() -> Child:
        child = procutil.emulator(url, count, 600, prefix=prefix)
        child.read(300)  # {"connected": n, "failed": m} once every connection is up
        return child

    return await asyncio.get_running_loop().run_in_executor(None, start)


def _print_trace(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, n: int, top: int) -> None:
    skip = [tracemalloc.Filter(False, tracemalloc.__file__)]
    stats = after.filter_traces(skip).compare_to(before.filter_traces(skip), "traceback")
    print(f"tracemalloc: {sum(s.size_diff for s in stats) / n:,.0f} B per device that stayed")
    for s in stats[:top]:
        if abs(s.size_diff) / n < 8:
            continue
        frames = [
            f
            for f in s.traceback
            if not f.filename.endswith(("asyncio/runners.py", "gw_rss.py", "loop.py"))
            and not f.filename.startswith("<frozen")
        ]
        where = " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(frames))
        print(f"  {s.size_diff / n:8.1f} B {s.count_diff / n:6.2f} blocks  {where or '(C callbacks)'}")

    def c_blocks(snap: tracemalloc.Snapshot) -> collections.Counter[int]:
        sizes: collections.Counter[int] = collections.Counter()
        for trace in snap.traces:
            if trace.traceback[-1].filename.endswith("asyncio/runners.py"):  # the loop's C code
                sizes[trace.size] += 1
        return sizes

    c0, c1 = c_blocks(before), c_blocks(after)
    print("blocks allocated from C callbacks, by size:")
    rows = [(size, (c1[size] - c0[size]) / n) for size in set(c0) | set(c1)]
    for size, count in sorted(rows, key=lambda r: -r[0] * r[1]):
        if abs(size * count) >= 16:
            print(f"  {size:6d} B x {count:5.2f} = {size * count:8.1f} B")


async def main_async(args: argparse.Namespace) -> int:
    raise_nofile_limit()
    ready: Callable[[], Optional[int]]
    if args.mode == "gateway":
        from mcpgen.runtime.links.websocket.gateway import Gateway

        gw = Gateway(
            policy="off", call_timeout=60.0, hello_timeout=120.0, handshake_timeout=60.0, max_frame=1 << 20
        )
        await gw.start()
        port = gw.port

        def ready() -> Optional[int]:
            return sum(1 for d in gw.connected.values() if not d.closed)
    else:
        server, port = await _bare_server(args.auto_ping)

        def ready() -> Optional[int]:
            return None

    url = f"ws://127.0.0.1:{port}/"
    children = [await _emulators(url, WARMUP, "w")]
    await asyncio.sleep(1.0)
    gc.collect()
    before = memstats.snapshot()
    if args.trace:
        tracemalloc.start(args.frames)
        t0 = tracemalloc.take_snapshot()
    children.append(await _emulators(url, args.devices, "d"))
    for _ in range(600):  # the sessions' setup
        got = ready()
        if got is None or got >= WARMUP + args.devices:
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.5)
    gc.collect()
    after = memstats.snapshot()
    per = _per_device(before, after, args.devices)
    print(
        f"{args.mode}{' (auto-ping)' if args.auto_ping else ''}: {args.devices:,} devices; per device: "
        f"RSS {per['rss']:,.0f} B, glibc in use {per['glibc_in_use']:,.0f} B "
        f"(free {per['glibc_free']:,.0f}), obmalloc blocks {per['obmalloc_used']:,.0f} B"
    )
    if args.trace:
        _print_trace(t0, tracemalloc.take_snapshot(), args.devices, args.top)
        tracemalloc.stop()
    print(
        json.dumps(
            {"mode": args.mode, "auto_ping": args.auto_ping, "devices": args.devices, "per_device": per}
        )
    )
    for child in children:
        child.stop()
    if args.mode == "gateway":
        await gw.close()
    else:
        server.close()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    from mcpgen.runtime.core.loop import run

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--devices", type=int, default=3000)
    ap.add_argument("--mode", choices=("gateway", "bare"), default="gateway")
    ap.add_argument("--auto-ping", action="store_true", help="bare: picows' own keepalive on")
    ap.add_argument("--trace", action="store_true", help="tracemalloc diff (slow; RSS not meaningful then)")
    ap.add_argument("--frames", type=int, default=10, help="traceback frames kept by tracemalloc")
    ap.add_argument("--top", type=int, default=40, help="traceback groups printed")
    args = ap.parse_args(argv)
    return run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
