"""Hostile replies (issue 18, item 3): only typed errors, and the link survives.

A reply whose id is a list, an object or a non-ASCII digit, and integer-kind results the
int type cannot hold, used to raise TypeError/ValueError/OverflowError out of
``RpcSession.feed`` (dropping a stdio or serial link) or through the bindings. Runs on
whichever build is installed; scripts/dev.sh runs tests/runtime on both.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from runtime_fakes import FAKE_STDIO

from mcpgen.runtime import connect_process
from mcpgen.runtime.core import codec
from mcpgen.runtime.core.codec import RpcSession, decode_result
from mcpgen.runtime.errors import DeviceTimeout, ProtocolError

HOSTILE_IDS: list[Any] = [[1], {"a": 1}, "²", "١", True, "9" * 5000, 1e300, -0.5, "", "01x"]
HUGE_DIGITS = "7" * 4301


def reply(rid: Any, text: str = "1") -> bytes:
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
    )


@pytest.mark.parametrize("rid", HOSTILE_IDS, ids=repr)
def test_feed_takes_any_reply_id_without_raising(rid: Any) -> None:
    loop = asyncio.new_event_loop()
    try:
        s = RpcSession("s")
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_INTEGER)  # request 1 waits
        frame = s.feed(b'{"session_id":"s","type":"mcp","payload":' + reply(rid) + b"}")
        # Nothing of ours was answered: request 1 is still pending, its future untouched.
        assert not fut.done() and s.pending_count == 1
        assert frame is None or frame.kind == codec.FRAME_INVALID
        s.feed(reply(1, "5"))
        assert fut.result() == 5
    finally:
        loop.close()


def test_true_is_not_request_one() -> None:
    """``True == 1`` in Python: a reply with id true must not answer request 1."""
    loop = asyncio.new_event_loop()
    try:
        s = RpcSession()
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_STRING)
        s.feed(reply(True, "forged"))
        assert not fut.done()
    finally:
        loop.close()


@pytest.mark.parametrize(
    "text",
    [
        "1e400",
        "-1e400",
        "Infinity",
        "-Infinity",
        "inf",
        "NaN",
        "nan",
        "1.5",
        HUGE_DIGITS + ".0",
        "1" + "0" * 400 + ".5",
    ],
)
def test_integer_kind_bad_values_are_protocol_errors(text: str) -> None:
    with pytest.raises(ProtocolError, match="expected an integer result"):
        decode_result({"content": [{"type": "text", "text": text}]}, codec.KIND_INTEGER)


def test_integer_kind_error_message_is_bounded() -> None:
    with pytest.raises(ProtocolError) as err:
        decode_result({"content": [{"type": "text", "text": "x" * 100_000}]}, codec.KIND_INTEGER)
    assert len(str(err.value)) < 300 and "100000 characters" in str(err.value)


def test_integer_kind_over_4300_digits_is_a_value_or_a_typed_error() -> None:
    # Python refuses int() of more than 4300 digits; the decoder falls back to float, gets
    # infinity, and must say so with a ProtocolError rather than OverflowError.
    with pytest.raises(ProtocolError):
        decode_result({"content": [{"type": "text", "text": HUGE_DIGITS}]}, codec.KIND_INTEGER)
    # A large integer that fits is still decoded exactly, and 1e3 still reads as 1000.
    assert decode_result({"content": [{"type": "text", "text": "9" * 30}]}, codec.KIND_INTEGER) == int(
        "9" * 30
    )
    assert decode_result({"content": [{"type": "text", "text": "1e3"}]}, codec.KIND_INTEGER) == 1000


@pytest.mark.parametrize("text", ["1e400", "Infinity", HUGE_DIGITS])
def test_integer_kind_bad_values_reach_the_caller_typed(text: str) -> None:
    loop = asyncio.new_event_loop()
    try:
        s = RpcSession()
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_INTEGER)
        assert s.feed(reply(1, text)) is None
        assert isinstance(fut.exception(), ProtocolError)
    finally:
        loop.close()


async def test_stdio_link_survives_hostile_replies() -> None:
    """Over stdio one bad reply used to drop the link and fail every pending call."""
    device = await connect_process(FAKE_STDIO, call_timeout=5, stderr="devnull")
    try:
        slow = asyncio.ensure_future(device.call("self.test.sleep", {"ms": 300, "tag": "still here"}))
        for rid in ([7], {"x": 1}, "²", True):
            with pytest.raises(DeviceTimeout):
                await device.call("self.test.reply_id", {"id": rid}, timeout=0.3)
        for text in ("1e400", "Infinity", HUGE_DIGITS):
            with pytest.raises(ProtocolError):
                await device.invoke("self.test.text", {"text": text}, codec.KIND_INTEGER)
        assert await slow == "still here"
        assert not device.closed
        assert await device.call("self.counter.add", {"amount": 2}) == 2
    finally:
        await device.close()
