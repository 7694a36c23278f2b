"""The decode/encode fast paths behave exactly like the general code they short-cut.

Covers what the hot-path work changed: per-kind fast paths for scalar results, typed
errors built without their interpreted ``__init__``, futures resolved without a
``done()`` pre-check (a cancelled caller must not break ``feed``), and the request
encoder writing the id itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import pickle
from typing import Any

import orjson
import pytest

from mcpgen.runtime.core import codec, wire
from mcpgen.runtime.core.codec import RpcSession, decode_result
from mcpgen.runtime.errors import ProtocolError, RpcError, ToolError


def text_result(t: str, is_error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": t}], "isError": is_error}


def _same_exception(a: BaseException, b: BaseException) -> None:
    assert type(a) is type(b)
    assert a.args == b.args
    assert str(a) == str(b) and repr(a) == repr(b)


# -- typed errors built on the hot path ------------------------------------------------------


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (
            {"code": -32602, "message": "Invalid params", "data": {"p": "v"}},
            (-32602, "Invalid params", {"p": "v"}),
        ),
        ({"message": "Unknown tool: self.x"}, (None, "Unknown tool: self.x", None)),
        ({"code": True, "message": "bool is not a code"}, (None, "bool is not a code", None)),
        ({"code": "7", "message": 5}, (None, "5", None)),
        ({"code": 2**70, "message": "huge"}, (2**70, "huge", None)),
        ({"code": -(2**31), "message": "int32 min"}, (-(2**31), "int32 min", None)),
        ("not an object", (None, "not an object", None)),
        (None, (None, "None", None)),
    ],
)
def test_rpc_error_matches_the_constructor(err: Any, expected: tuple) -> None:
    fast = codec.rpc_error(err)
    ref = RpcError(*expected)
    _same_exception(fast, ref)
    assert (fast.code, fast.message, fast.data) == expected
    assert isinstance(fast, RpcError) and fast.__traceback__ is None


def test_tool_error_matches_the_constructor() -> None:
    content = [{"type": "text", "text": "Invalid volume"}, {"type": "text", "text": "more"}]
    with pytest.raises(ToolError) as err:
        decode_result({"content": content, "isError": True}, codec.KIND_INTEGER)
    ref = ToolError("Invalid volume", content)
    _same_exception(err.value, ref)
    assert err.value.message == ref.message and err.value.content == ref.content
    assert err.value.content is not content  # a copy, as the constructor makes
    with pytest.raises(ToolError) as no_text:
        decode_result({"content": [], "isError": True}, codec.KIND_OBJECT)
    _same_exception(no_text.value, ToolError("tool failed"))
    assert no_text.value.content == []


@pytest.mark.parametrize(
    "exc", [RpcError(-1, "m", {"d": 1}), RpcError(None, "m"), ToolError("t", [{"a": 1}])]
)
def test_typed_errors_pickle_and_copy(exc: Exception) -> None:
    for clone in (pickle.loads(pickle.dumps(exc)), copy.copy(exc)):
        _same_exception(clone, exc)
        assert vars_of(clone) == vars_of(exc)


def vars_of(exc: Exception) -> dict[str, Any]:
    return {k: getattr(exc, k) for k in ("code", "message", "data", "content") if hasattr(exc, k)}


def test_typed_errors_still_take_extra_attributes() -> None:
    e = codec.rpc_error({"code": 1, "message": "m"})
    e.note = "added by a caller"  # type: ignore[attr-defined]
    assert e.note == "added by a caller"  # type: ignore[attr-defined]


# -- scalar fast paths --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("42", 42), ("-7", -7), (" 5\n", 5), ("42.0", 42), ("1e3", 1000), ("0", 0), (str(2**80), 2**80)],
)
def test_integer_results(text: str, value: int) -> None:
    got = decode_result(text_result(text), codec.KIND_INTEGER)
    assert got == value and type(got) is int


@pytest.mark.parametrize("text", ["4.5", "abc", "", "nan", "true"])
def test_bad_integer_results_are_protocol_errors(text: str) -> None:
    with pytest.raises(ProtocolError):
        decode_result(text_result(text), codec.KIND_INTEGER)


@pytest.mark.parametrize(("text", "value"), [("21.5", 21.5), ("3", 3.0), ("-0.25", -0.25), (" 1e-3 ", 0.001)])
def test_number_results(text: str, value: float) -> None:
    got = decode_result(text_result(text), codec.KIND_NUMBER)
    assert got == value and type(got) is float


def test_bad_number_and_boolean_results_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError):
        decode_result(text_result("warm"), codec.KIND_NUMBER)
    with pytest.raises(ProtocolError):
        decode_result(text_result("yes"), codec.KIND_BOOLEAN)


def test_boolean_and_string_results_off_the_fast_path() -> None:
    assert decode_result(text_result(" TRUE "), codec.KIND_BOOLEAN) is True
    assert decode_result(text_result("0"), codec.KIND_BOOLEAN) is False
    # the text item is not the only one: the general path finds the first text item
    mixed = {
        "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}, {"type": "text", "text": "7"}]
    }
    assert decode_result(mixed, codec.KIND_INTEGER) == 7
    assert decode_result(mixed, codec.KIND_NUMBER) == 7.0
    assert decode_result(mixed, codec.KIND_STRING) == "7"
    assert decode_result({"content": [{"type": "text", "text": 5}]}.copy(), codec.KIND_AUTO) == 5
    with pytest.raises(ProtocolError):
        decode_result({"content": [{"type": "text", "text": 5}]}, codec.KIND_INTEGER)
    with pytest.raises(ProtocolError):
        decode_result({"content": "true"}, codec.KIND_BOOLEAN)


def test_is_error_is_checked_for_every_kind() -> None:
    for kind in (codec.KIND_NONE, codec.KIND_BOOLEAN, codec.KIND_OBJECT, codec.KIND_IMAGE, codec.KIND_AUTO):
        with pytest.raises(ToolError):
            decode_result({**text_result("no", True), "structuredContent": {"a": 1}}, kind)
    assert decode_result(text_result("x", True), codec.KIND_RAW)["isError"] is True
    # isError other than true is not an error
    assert decode_result({**text_result("true"), "isError": "yes"}, codec.KIND_BOOLEAN) is True


# -- resolving futures ------------------------------------------------------------------------


def _reply(rid: int, result: Any = None, error: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    return orjson.dumps({"session_id": "s", "type": "mcp", "payload": msg})


async def test_a_reply_for_a_cancelled_caller_is_dropped_quietly() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession("s")
    futs = [loop.create_future() for _ in range(4)]
    for i, f in enumerate(futs, 1):
        s.expect(i, f, codec.KIND_BOOLEAN)
        f.cancel()  # the caller gave up; forget() has not run yet
    assert s.feed(_reply(1, text_result("true"))) is None
    assert s.feed(_reply(2, error={"code": -1, "message": "m"})) is None
    assert s.feed(_reply(3, text_result("not a bool"))) is None  # decoding fails too
    assert s.feed(_reply(4, text_result("x", True))) is None
    assert s.pending_count == 0 and all(f.cancelled() for f in futs)


async def test_a_future_resolved_elsewhere_is_left_alone() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession()
    f = loop.create_future()
    s.expect(1, f, codec.KIND_STRING)
    f.set_result("first")
    assert s.feed(b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"second"}]}}') is None
    assert f.result() == "first"
    assert s.fail(1, RuntimeError("x")) is False


async def test_other_future_types_are_resolved_too() -> None:
    class MyFuture(asyncio.Future):  # a subclass: resolved through its own methods
        pass

    loop = asyncio.get_running_loop()
    s = RpcSession()
    sub = MyFuture(loop=loop)
    conc: concurrent.futures.Future = concurrent.futures.Future()
    done: concurrent.futures.Future = concurrent.futures.Future()
    done.set_result("early")
    s.expect(1, sub, codec.KIND_INTEGER)
    s.expect(2, conc, codec.KIND_RAW)
    s.expect(3, done, codec.KIND_RAW)
    s.feed(b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"9"}]}}')
    s.feed(b'{"jsonrpc":"2.0","id":2,"error":{"code":3,"message":"no"}}')
    s.feed(b'{"jsonrpc":"2.0","id":3,"result":{}}')
    assert sub.result() == 9
    assert isinstance(conc.exception(), RpcError) and conc.exception().code == 3
    assert done.result() == "early"


async def test_null_result_and_null_error_are_replies() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession()
    f1, f2 = loop.create_future(), loop.create_future()
    s.expect(1, f1, codec.KIND_RAW)
    s.expect(2, f2, codec.KIND_RAW)
    s.feed(b'{"jsonrpc":"2.0","id":1,"result":null}')
    s.feed(b'{"jsonrpc":"2.0","id":2,"error":null}')
    assert isinstance(f1.exception(), ProtocolError)
    assert isinstance(f2.exception(), RpcError) and f2.exception().code is None


# -- encoding -----------------------------------------------------------------------------------


def test_encoded_ids_match_the_counter() -> None:
    s = RpcSession("s")
    for _ in range(1234):
        s.ping()
    data = s.tools_call("self.a", {"x": 1})
    assert s.last_id == 1235
    assert data.startswith(b'{"session_id":"s","type":"mcp","payload":{"jsonrpc":"2.0","id":1235,')
    assert orjson.loads(data)["payload"] == {
        "jsonrpc": "2.0",
        "id": 1235,
        "method": "tools/call",
        "params": {"name": "self.a", "arguments": {"x": 1}},
    }
    req = orjson.loads(s.request("tools/call", {"name": "n", "arguments": {}, "_meta": {"progressToken": 7}}))
    assert req["payload"]["id"] == 1236 and req["payload"]["params"]["_meta"] == {"progressToken": 7}


@pytest.mark.parametrize("session_id", ["s", None])
def test_every_id_is_written_in_full_in_both_framings(session_id: object) -> None:
    # the compiled encoder writes the id's digits itself: 1 digit, carries (9 -> 10, 99 -> 100)
    s = RpcSession(session_id)  # type: ignore[arg-type]
    for rid in range(1, 1002):
        data = s.tools_call("self.light.set_rgb", {"r": rid})
        msg = orjson.loads(data)
        payload = msg["payload"] if session_id is not None else msg
        assert payload == {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "self.light.set_rgb", "arguments": {"r": rid}},
        }


def test_alternating_and_equal_but_distinct_tool_names_encode_their_own_name() -> None:
    # the session remembers its last tool's head by identity; any other name is looked up
    s = RpcSession("s")
    names = ["self.a", "self.b", "self.a", "".join(["self.", "b"]), "".join(["self.", "b"]), "self.ü"]
    for name in names:
        assert orjson.loads(s.tools_call(name, {}))["payload"]["params"]["name"] == name


def test_plain_int_helper() -> None:
    plain_int = getattr(wire, "plain_int", None)
    if plain_int is None:
        pytest.skip("a C-level function in the compiled build (covered through decode_result)")
    for text in ("0", "42", "-7", "123456789012345678", "-12345678901234567"):
        assert plain_int(text) == int(text)
    for text in ("", "-", "1234567890123456789", "4_2", " 5", "1e3", "+1", "٣"):
        assert plain_int(text) is None


@pytest.mark.parametrize("text", ["٣", "-٣٣", "１２"])
def test_integer_results_in_other_scripts_match_int(text: str) -> None:
    assert decode_result(text_result(text), codec.KIND_INTEGER) == int(text)
