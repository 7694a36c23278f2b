"""A fake device on stdio: newline-delimited bare JSON-RPC (see runtime_fakes.FakeCore).

Usage: python runtime_fake_stdio.py [--fingerprint HEX|none] [--page-size N] [--stock]
       [--spec PATH] [--banner]   (``--banner`` prints non-JSON boot noise first)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from runtime_fakes import DEFAULT_SPEC, Die, FakeCore  # noqa: E402


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fingerprint", default="spec")
    ap.add_argument("--page-size", type=int, default=4)
    ap.add_argument("--stock", action="store_true")
    ap.add_argument("--spec", default=str(DEFAULT_SPEC))
    ap.add_argument("--banner", action="store_true")
    args = ap.parse_args()
    fp = None if args.fingerprint == "none" else args.fingerprint
    core = FakeCore(Path(args.spec), fingerprint=fp, page_size=args.page_size, stock=args.stock)
    out = sys.stdout.buffer
    lock = asyncio.Lock()

    async def write(obj: object) -> None:
        async with lock:
            out.write(json.dumps(obj).encode() + b"\n")
            out.flush()

    async def notify(method: str, params: object) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await write(msg)

    core.send_notification = notify
    if args.banner:
        out.write(b"I (123) boot: ESP-IDF v5.1 second stage bootloader\n\n")
        out.flush()
    print("fake device ready", file=sys.stderr, flush=True)

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 22)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def serve(msg: object) -> None:
        try:
            reply = await core.handle(msg)
        except Die:
            os._exit(3)
        if reply is not None:
            await write(reply)

    tasks = set()
    while True:
        line = await reader.readline()
        if not line:
            break
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        t = asyncio.ensure_future(serve(msg))
        tasks.add(t)
        t.add_done_callback(tasks.discard)


if __name__ == "__main__":
    asyncio.run(main())
