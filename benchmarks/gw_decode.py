"""Reply decoding: the runtime's orjson + compiled codec path vs a msgspec typed decode.

``python -m benchmarks.gw_decode`` times, per ``tools/call`` reply as a device sends it
(a xiaozhi envelope around a JSON-RPC result with one text item), in interleaved
batches:

* ``orjson.loads`` of the frame alone: the floor every candidate is measured against;
* ``Session.feed``: parse, id match in the pending table, decode for the return kind,
  future resolved (what the gateway does per reply; the build this process imports);
* msgspec: ``msgspec.json.Decoder`` into typed Structs (envelope, JSON-RPC reply,
  result, content items), then the same id match, decode and future.

Issue 32's target: an error reply <= 1.2x ``orjson.loads`` (1.65x when it was filed).
Each batch's futures stay referenced until the batch ends, so a failed one is read after
the clock stops. Prints a JSON object with the medians and ratios.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any, Optional, Union

import orjson

from mcpgen.runtime import COMPILED
from mcpgen.runtime.core import codec

try:
    import msgspec
except ImportError:  # pragma: no cover - msgspec is optional here
    msgspec = None

N = 2000  # replies per batch


def _frame(rid: int, error: bool) -> bytes:
    payload: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    if error:
        payload["error"] = {"code": -32602, "message": "Invalid params: volume must be <= 100"}
    else:
        payload["result"] = {"content": [{"type": "text", "text": "true"}], "isError": False}
    return orjson.dumps(
        {"session_id": "7c1f8a4e-2d0b-4f57-9e36-0c1d2e3f4a5b", "type": "mcp", "payload": payload}
    )


if msgspec is not None:

    class Content(msgspec.Struct):
        type: str
        text: Optional[str] = None

    class Result(msgspec.Struct):
        content: list[Content] = []
        isError: bool = False  # noqa: N815 - the wire name

    class Error(msgspec.Struct):
        message: str = ""
        code: Optional[int] = None
        data: Any = None

    class Reply(msgspec.Struct):
        jsonrpc: str = "2.0"
        id: Union[int, str, None] = None
        result: Optional[Result] = None
        error: Optional[Error] = None

    class Envelope(msgspec.Struct):
        payload: Reply
        type: str = "mcp"
        session_id: Optional[str] = None

    _DECODER = msgspec.json.Decoder(Envelope)


def _msgspec_feed(pending: dict, data: bytes) -> None:
    env = _DECODER.decode(data)
    p = env.payload
    entry = pending.pop(p.id, None)
    if entry is None:
        return
    fut = entry
    if p.result is not None:
        items = p.result.content
        text = items[0].text if len(items) == 1 else None
        fut.set_result(text == "true")
    elif p.error is not None:
        fut.set_exception(codec.rpc_error({"code": p.error.code, "message": p.error.message}))


def _batch(kind: str, frames: list[bytes], loop: asyncio.AbstractEventLoop) -> float:
    """Seconds per reply for one batch of ``kind``."""
    if kind == "orjson.loads":
        loads = orjson.loads
        t0 = time.perf_counter()
        for f in frames:
            loads(f)
        return (time.perf_counter() - t0) / len(frames)
    futs = [loop.create_future() for _ in frames]
    if kind == "Session.feed":
        s = codec.RpcSession("7c1f8a4e-2d0b-4f57-9e36-0c1d2e3f4a5b")
        for i, fut in enumerate(futs):
            s.expect(i + 1, fut, codec.KIND_BOOLEAN)
        feed = s.feed
        t0 = time.perf_counter()
        for f in frames:
            feed(f)
        dt = time.perf_counter() - t0
    else:
        pending = {i + 1: fut for i, fut in enumerate(futs)}
        t0 = time.perf_counter()
        for f in frames:
            _msgspec_feed(pending, f)
        dt = time.perf_counter() - t0
    for fut in futs:
        assert fut.done()
        fut.exception() if fut.exception() is not None else None
    return dt / len(frames)


def measure(rounds: int = 15) -> dict[str, Any]:
    loop = asyncio.new_event_loop()
    kinds = ["orjson.loads", "Session.feed"] + (["msgspec"] if msgspec is not None else [])
    out: dict[str, Any] = {"compiled": COMPILED, "msgspec": getattr(msgspec, "__version__", None)}
    try:
        for label, error in (("result", False), ("error", True)):
            frames = [_frame(i + 1, error) for i in range(N)]
            samples: dict[str, list[float]] = {k: [] for k in kinds}
            for _ in range(rounds):
                for k in kinds:
                    samples[k].append(_batch(k, frames, loop))
            floor = samples["orjson.loads"]
            out[label] = {
                k: {
                    "ns": statistics.median(v) * 1e9,
                    "x_orjson": statistics.median(a / b for a, b in zip(v, floor, strict=True)),
                }
                for k, v in samples.items()
            }
    finally:
        loop.close()
    return out


def main() -> int:
    print(json.dumps(measure(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
