"""The msgspec reply fast path: on where it should be, and the same outcome whichever
framing the session and the frame use.

A session picks the decoder for its own framing (envelope or bare); a frame of the other
framing must still be understood (through the general path), and frames the fast path
does not model (a request that carries an error, an envelope of another type) must be
left exactly as the general path sees them.
"""

from __future__ import annotations

import asyncio
import os
import pickle
from typing import Any, Optional

import orjson
import pytest

from mcpgen.runtime.core import codec, rpcsession, wire
from mcpgen.runtime.errors import RpcError

SID = "7c1f8a4e-2d0b-4f57-9e36-0c1d2e3f4a5b"


def frame(payload: dict[str, Any], enveloped: bool) -> bytes:
    if enveloped:
        return orjson.dumps({"session_id": SID, "type": "mcp", "payload": payload})
    return orjson.dumps(payload)


def test_fast_path_is_on_with_msgspec() -> None:
    pytest.importorskip("msgspec")
    # Compiled, this also says the C views of the Structs matched msgspec's layout.
    assert rpcsession.FAST_REPLIES is True
    if os.environ.get("MCPGEN_EXPECT_COMPILED") == "1":
        assert wire.fast_envelope_decode is not None


ERROR = {"code": -32602, "message": "Invalid params: volume must be <= 100", "data": {"max": 100}}


@pytest.mark.parametrize("session_enveloped", [True, False])
@pytest.mark.parametrize("frame_enveloped", [True, False])
async def test_replies_resolve_whatever_the_framing(session_enveloped: bool, frame_enveloped: bool) -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession(SID if session_enveloped else None)
    ok, bad, raw = loop.create_future(), loop.create_future(), loop.create_future()
    s.expect(1, ok, codec.KIND_BOOLEAN)
    s.expect(2, bad, codec.KIND_INTEGER)
    s.expect(3, raw, codec.KIND_RAW)
    result = {"content": [{"type": "text", "text": "true"}], "isError": False}
    assert s.feed(frame({"jsonrpc": "2.0", "id": 1, "result": result}, frame_enveloped)) is None
    assert s.feed(frame({"jsonrpc": "2.0", "id": 2, "error": ERROR}, frame_enveloped)) is None
    assert (
        s.feed(frame({"jsonrpc": "2.0", "id": 3, "error": {"message": "no code"}}, frame_enveloped)) is None
    )
    assert ok.result() is True
    exc = bad.exception()
    assert isinstance(exc, RpcError)
    assert (exc.code, exc.message, exc.data) == (-32602, ERROR["message"], {"max": 100})
    assert exc.args == (-32602, ERROR["message"], {"max": 100})
    assert str(exc) == "[-32602] Invalid params: volume must be <= 100"
    no_code = raw.exception()
    assert isinstance(no_code, RpcError) and no_code.code is None and str(no_code) == "no code"
    assert s.pending_count == 0


@pytest.mark.parametrize("enveloped", [True, False])
async def test_a_request_carrying_an_error_is_not_a_reply(enveloped: bool) -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession(SID if enveloped else None)
    fut = loop.create_future()
    s.expect(5, fut, codec.KIND_BOOLEAN)
    got: Optional[Any] = s.feed(
        frame({"jsonrpc": "2.0", "id": 5, "method": "ping", "error": ERROR}, enveloped)
    )
    assert got is not None and got.kind == codec.FRAME_REQUEST and got.method == "ping"
    assert not fut.done() and s.is_pending(5)


async def test_an_envelope_of_another_type_is_passed_up() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession(SID)
    fut = loop.create_future()
    s.expect(1, fut, codec.KIND_BOOLEAN)
    data = orjson.dumps(
        {"session_id": SID, "type": "listen", "payload": {"jsonrpc": "2.0", "id": 1, "error": ERROR}}
    )
    got = s.feed(data)
    assert got is not None and got.kind == codec.FRAME_OTHER
    assert not fut.done()


def test_rpc_error_args_str_repr_and_pickle() -> None:
    e = RpcError(-32601, "Method not found", {"m": "x"})
    assert e.args == (-32601, "Method not found", {"m": "x"})
    assert str(e) == "[-32601] Method not found"
    assert repr(e) == "RpcError(-32601, 'Method not found', {'m': 'x'})"
    clone = pickle.loads(pickle.dumps(e))
    assert type(clone) is RpcError and clone.args == e.args and str(clone) == str(e)
    assert str(RpcError(None, "plain")) == "plain"
    with pytest.raises(RpcError, match=r"^\[7\] boom$"):
        raise RpcError(7, "boom")
