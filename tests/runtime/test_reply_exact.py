"""The exact-layout reply path (``RpcSession._feed_exact``, compiled build): a reply
written byte for byte as the device core writes it skips msgspec, and every frame ends
exactly as it would without that path.

The reference for "without that path" is a second session whose envelope names another
session id: its own prefix never matches, so each frame goes through msgspec and the
general path (neither reads the session id), with the same calls pending.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import pytest

from mcpgen.runtime.core import codec

SID = "7c1f8a4e-2d0b-4f57-9e36-0c1d2e3f4a5b"
HEAD = b'{"session_id":"%s","type":"mcp","payload":{"jsonrpc":"2.0","id":' % SID.encode()
BARE_HEAD = b'{"jsonrpc":"2.0","id":'
BARE_TAIL = b'"}],"isError":false}}'


def reply(rid: bytes, text: bytes, tail: bytes = b'"}],"isError":false}}}', head: bytes = HEAD) -> bytes:
    """A tools/call reply as the device core lays it out (``tail`` and ``head`` varied)."""
    return head + rid + b',"result":{"content":[{"type":"text","text":"' + text + tail


def outcome(session: Any, fut: asyncio.Future, data: bytes) -> tuple[Any, ...]:
    """What feeding ``data`` did: the frame kind returned (None: consumed), the future's
    end, and the session's counters."""
    got = session.feed(data)
    if not fut.done():
        end: tuple[Any, ...] = ("pending",)
    elif fut.exception() is not None:
        exc = fut.exception()
        end = ("raised", type(exc).__name__, str(exc))
    else:
        value = fut.result()
        end = ("returned", type(value).__name__, value)
    return (None if got is None else got.kind, end, session.stale, session.pending_count)


def both(data: bytes, kind: int, rid: int = 1, pending: Optional[list[int]] = None) -> tuple[Any, Any]:
    """``data`` fed to a session that may take the exact path, and to the reference."""
    loop = asyncio.new_event_loop()
    try:
        results = []
        for sid in (SID, "another-session"):
            s = codec.RpcSession(sid)
            for other in pending or []:  # other calls in flight (ring collisions, overflow)
                s.expect(other, loop.create_future(), codec.KIND_STRING)
            fut = loop.create_future()
            s.expect(rid, fut, kind)
            results.append(outcome(s, fut, data))
        return results[0], results[1]
    finally:
        loop.close()


K = codec
CASES = [
    # (what, frame, return kind of the pending call)
    ("boolean true", reply(b"1", b"true"), K.KIND_BOOLEAN),
    ("boolean false", reply(b"1", b"false"), K.KIND_BOOLEAN),
    ("boolean kind, other text", reply(b"1", b"yes"), K.KIND_BOOLEAN),
    ("string, non-ASCII", reply(b"1", "héllo ✓".encode()), K.KIND_STRING),
    ("string, empty", reply(b"1", b""), K.KIND_STRING),
    ("integer", reply(b"1", b"-42"), K.KIND_INTEGER),
    ("integer kind, not a number", reply(b"1", b"4x"), K.KIND_INTEGER),
    ("number", reply(b"1", b"2.5e3"), K.KIND_NUMBER),
    ("number kind, not a number", reply(b"1", b"nan?"), K.KIND_NUMBER),
    ("a kind the path leaves alone", reply(b"1", b"true"), K.KIND_RAW),
    ("object kind", reply(b"1", b"{}"), K.KIND_OBJECT),
    ("auto kind", reply(b"1", b"7"), K.KIND_AUTO),
    ("escape in the text", reply(b"1", b"tr\\u0075e"), K.KIND_BOOLEAN),
    ("escaped quote", reply(b"1", b'a\\"b'), K.KIND_STRING),
    ("control character (invalid JSON)", reply(b"1", b"a\x01b"), K.KIND_STRING),
    ("invalid UTF-8", reply(b"1", b"a\xff\xfeb"), K.KIND_STRING),
    ("leading zero in the id (invalid JSON)", reply(b"01", b"true"), K.KIND_BOOLEAN),
    ("id not pending", reply(b"2", b"true"), K.KIND_BOOLEAN),
    ("19-digit id", reply(b"1000000000000000001", b"true"), K.KIND_BOOLEAN),
    ("negative id", reply(b"-1", b"true"), K.KIND_BOOLEAN),
    ("id as a string", reply(b'"1"', b"true"), K.KIND_BOOLEAN),
    ("isError true", reply(b"1", b"boom", b'"}],"isError":true}}}'), K.KIND_BOOLEAN),
    ("no isError", reply(b"1", b"true", b'"}]}}}'), K.KIND_BOOLEAN),
    ("trailing newline", reply(b"1", b"true") + b"\n", K.KIND_BOOLEAN),
    ("trailing garbage", reply(b"1", b"true") + b"x", K.KIND_BOOLEAN),
    ("truncated", reply(b"1", b"true")[:-1], K.KIND_BOOLEAN),
    ("two content items", reply(b"1", b'a"},{"type":"text","text":"b'), K.KIND_STRING),
    ("whitespace after the id", reply(b"1 ", b"true"), K.KIND_BOOLEAN),
    (
        "bare frame to an envelope session",
        reply(b"1", b"true", b'"}],"isError":false}}', b'{"jsonrpc":"2.0","id":'),
        K.KIND_BOOLEAN,
    ),
]


@pytest.mark.parametrize(("what", "data", "kind"), CASES, ids=[c[0] for c in CASES])
def test_same_outcome_with_and_without_the_exact_path(what: str, data: bytes, kind: int) -> None:
    exact, reference = both(data, kind)
    assert exact == reference, what


def test_the_common_reply_resolves() -> None:
    # Not only "the same as the reference": the value a caller gets.
    exact, _ = both(reply(b"1", b"true"), K.KIND_BOOLEAN)
    assert exact == (None, ("returned", "bool", True), 0, 0)
    exact, _ = both(reply(b"1", "héllo ✓".encode()), K.KIND_STRING)
    assert exact[1] == ("returned", "str", "héllo ✓")


@pytest.mark.parametrize("rid", [1, 2, 9, 17, 123456789012345678])
def test_ids_in_a_grown_ring_and_the_overflow_dict(rid: int) -> None:
    # Many calls in flight grow the ring; ids that collide in it live in the overflow dict.
    others = [i for i in range(1, 40) if i != rid] + [rid + 4096, rid + 8192]
    data = reply(str(rid).encode(), b"true")
    exact, reference = both(data, K.KIND_BOOLEAN, rid, others)
    assert exact == reference
    assert exact[1] == ("returned", "bool", True)


async def test_a_bare_session_takes_the_bare_layout() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession(None)
    fut = loop.create_future()
    s.expect(3, fut, K.KIND_INTEGER)
    bare = b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"12"}],"isError":false}}'
    assert s.feed(bare) is None and fut.result() == 12 and s.pending_count == 0
