"""The compiled hot path: frame decoding, result decoding, correlation, request encoding."""

from __future__ import annotations

import asyncio
import base64

import orjson
import pytest

from mcpgen.runtime.core import codec
from mcpgen.runtime.core.codec import RpcSession, decode_frame, decode_result
from mcpgen.runtime.errors import ProtocolError, RpcError, ToolError


def env(payload: dict, sid: str = "s-1") -> bytes:
    return orjson.dumps({"session_id": sid, "type": "mcp", "payload": payload})


def text_result(t: str, is_error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": t}], "isError": is_error}


# -- classification ------------------------------------------------------------------------


def test_envelope_result_is_classified_with_session_and_id() -> None:
    f = decode_frame(env({"jsonrpc": "2.0", "id": 7, "result": {"x": 1}}, "abc"))
    assert f.kind == codec.FRAME_RESULT
    assert (f.type, f.session_id, f.id, f.result) == ("mcp", "abc", 7, {"x": 1})


def test_bare_jsonrpc_and_str_input() -> None:
    f = decode_frame('{"jsonrpc":"2.0","id":3,"result":{}}')
    assert f.kind == codec.FRAME_RESULT and f.type is None and f.session_id is None and f.id == 3


def test_error_notification_request_and_other_envelopes() -> None:
    e = decode_frame(env({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "nope"}}))
    assert e.kind == codec.FRAME_ERROR and e.error["code"] == -32601
    n = decode_frame(env({"jsonrpc": "2.0", "method": "notifications/state_changed", "params": {"a": 1}}))
    assert (n.kind, n.method, n.params, n.id) == (
        codec.FRAME_NOTIFICATION,
        "notifications/state_changed",
        {"a": 1},
        None,
    )
    r = decode_frame(b'{"jsonrpc":"2.0","id":9,"method":"ping"}')
    assert (r.kind, r.method, r.id) == (codec.FRAME_REQUEST, "ping", 9)
    h = decode_frame(b'{"type":"hello","version":3,"features":{"mcp":true},"transport":"websocket"}')
    assert h.kind == codec.FRAME_OTHER and h.type == "hello" and h.message["features"] == {"mcp": True}


@pytest.mark.parametrize(
    "data",
    [b"not json", b"[1,2]", b'"str"', b'{"type":"mcp","payload":5}', b'{"jsonrpc":"2.0","id":1}', b""],
)
def test_malformed_frames_are_invalid_not_exceptions(data: bytes) -> None:
    assert decode_frame(data).kind == codec.FRAME_INVALID


def test_frame_value_raises_the_device_error() -> None:
    f = decode_frame(b'{"jsonrpc":"2.0","id":1,"error":{"message":"Unknown tool: x"}}')
    with pytest.raises(RpcError) as err:
        f.value()
    assert err.value.code is None and err.value.message == "Unknown tool: x"


# -- result decoding per return kind --------------------------------------------------------


def test_scalar_kinds_decode_from_text() -> None:
    assert decode_result(text_result("true"), codec.KIND_BOOLEAN) is True
    assert decode_result(text_result("false"), codec.KIND_BOOLEAN) is False
    assert decode_result(text_result("42"), codec.KIND_INTEGER) == 42
    assert type(decode_result(text_result("-7"), codec.KIND_INTEGER)) is int
    assert decode_result(text_result("21.5"), codec.KIND_NUMBER) == 21.5
    assert type(decode_result(text_result("3"), codec.KIND_NUMBER)) is float
    assert decode_result(text_result("hello"), codec.KIND_STRING) == "hello"
    assert decode_result(text_result("anything"), codec.KIND_NONE) is None
    assert decode_result({"content": []}, codec.KIND_NONE) is None


def test_object_prefers_structured_content_else_parses_text() -> None:
    both = {"content": [{"type": "text", "text": '{"a": 1}'}], "structuredContent": {"a": 2}}
    assert decode_result(both, codec.KIND_OBJECT) == {"a": 2}
    assert decode_result(text_result('{"a": [1, 2]}'), codec.KIND_OBJECT) == {"a": [1, 2]}
    with pytest.raises(ProtocolError):
        decode_result(text_result("not json"), codec.KIND_OBJECT)


def test_image_result() -> None:
    data = base64.b64encode(b"\x89PNG...").decode()
    img = decode_result(
        {"content": [{"type": "image", "data": data, "mimeType": "image/png"}]}, codec.KIND_IMAGE
    )
    assert isinstance(img, codec.Image)
    assert img.mime_type == "image/png" and img.data_base64 == data and img.data == b"\x89PNG..."
    with pytest.raises(ProtocolError):
        decode_result(text_result("x"), codec.KIND_IMAGE)


def test_is_error_raises_tool_error_with_the_device_message() -> None:
    with pytest.raises(ToolError) as err:
        decode_result(text_result("Invalid volume", is_error=True), codec.KIND_BOOLEAN)
    assert err.value.message == "Invalid volume"
    assert err.value.content == [{"type": "text", "text": "Invalid volume"}]


def test_wrong_text_for_declared_kind_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError):
        decode_result(text_result("maybe"), codec.KIND_BOOLEAN)
    with pytest.raises(ProtocolError):
        decode_result(text_result("4.5"), codec.KIND_INTEGER)
    with pytest.raises(ProtocolError):
        decode_result({"content": []}, codec.KIND_STRING)
    with pytest.raises(ProtocolError):
        decode_result([1], codec.KIND_STRING)


def test_auto_kind_for_unknown_specs() -> None:
    assert decode_result(text_result("true"), codec.KIND_AUTO) is True
    assert decode_result(text_result("12"), codec.KIND_AUTO) == 12
    assert decode_result(text_result('{"v": 1}'), codec.KIND_AUTO) == {"v": 1}
    assert decode_result(text_result("plain words"), codec.KIND_AUTO) == "plain words"
    assert decode_result({"content": [], "structuredContent": {"k": 1}}, codec.KIND_AUTO) == {"k": 1}
    assert decode_result({"content": []}, codec.KIND_AUTO) is None
    two = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "false"}]}
    assert decode_result(two, codec.KIND_AUTO) == ["a", False]


def test_raw_kind_returns_the_result_object() -> None:
    res = text_result("x", is_error=True)
    assert decode_result(res, codec.KIND_RAW) is res


# -- encoding --------------------------------------------------------------------------------


def test_ids_increase_monotonically_across_every_request_kind() -> None:
    s = RpcSession("sid")
    frames = [
        s.initialize(),
        s.tools_list(),
        s.tools_list("self.b"),
        s.tools_call("self.x", {"a": 1}),
        s.ping(),
        s.request("custom/method", {"k": 1}),
        s.tools_call("self.x", {}),
    ]
    ids = [orjson.loads(f)["payload"]["id"] for f in frames]
    assert ids == list(range(1, len(frames) + 1))
    assert s.last_id == len(frames) and s.next_id == len(frames) + 1
    # notifications take no id and do not consume one
    s.initialized()
    s.cancelled(3)
    assert orjson.loads(s.tools_call("self.y", {}))["payload"]["id"] == len(frames) + 1


def test_tools_call_envelope_bytes() -> None:
    s = RpcSession('we"ird')
    msg = orjson.loads(s.tools_call("self.audio_speaker.set_volume", {"volume": 50}))
    assert msg == {
        "session_id": 'we"ird',
        "type": "mcp",
        "payload": {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 50}},
        },
    }


def test_bare_framing_without_session_id() -> None:
    s = RpcSession()
    assert not s.enveloped
    msg = orjson.loads(s.tools_call("t", {"x": "ü"}))
    assert msg == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"x": "ü"}},
    }
    s.set_session_id("later")
    assert orjson.loads(s.ping())["session_id"] == "later"


def test_initialize_and_other_requests() -> None:
    s = RpcSession()
    init = orjson.loads(s.initialize(vision_url="http://cam/explain", vision_token="tok"))
    p = init["params"]
    assert init["method"] == "initialize" and p["protocolVersion"] == "2024-11-05"
    assert p["capabilities"] == {"vision": {"url": "http://cam/explain", "token": "tok"}}
    assert p["clientInfo"]["name"] == "mcpgen-runtime"
    assert orjson.loads(s.initialize())["params"]["capabilities"] == {}
    assert orjson.loads(s.initialized()) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    lst = orjson.loads(s.tools_list("self.next", with_user_tools=True))
    assert lst["params"] == {"cursor": "self.next", "withUserTools": True}
    assert orjson.loads(s.ping())["method"] == "ping" and "params" not in orjson.loads(s.ping())
    c = orjson.loads(s.cancelled(12, "timeout"))
    assert c == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 12, "reason": "timeout"},
    }


# -- correlation -----------------------------------------------------------------------------


async def test_feed_resolves_the_matching_future_only() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession("sid")
    f1, f2 = loop.create_future(), loop.create_future()
    s.call("a", {}, f1, codec.KIND_INTEGER)
    id1 = s.last_id
    s.call("b", {}, f2, codec.KIND_STRING)
    id2 = s.last_id
    assert s.pending_count == 2
    assert s.feed(env({"jsonrpc": "2.0", "id": id2, "result": text_result("two")})) is None
    assert f2.result() == "two" and not f1.done()
    assert s.feed(env({"jsonrpc": "2.0", "id": id1, "result": text_result("1")})) is None
    assert f1.result() == 1 and s.pending_count == 0


async def test_feed_errors_become_typed_exceptions() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession()
    f_rpc, f_tool, f_bad = loop.create_future(), loop.create_future(), loop.create_future()
    s.expect(1, f_rpc, codec.KIND_BOOLEAN)
    s.expect(2, f_tool, codec.KIND_BOOLEAN)
    s.expect(3, f_bad, codec.KIND_BOOLEAN)
    s.feed(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"p":"v"}}}')
    s.feed(orjson.dumps({"jsonrpc": "2.0", "id": 2, "result": text_result("stuck", True)}))
    s.feed(b'{"jsonrpc":"2.0","id":3}')
    e = f_rpc.exception()
    assert isinstance(e, RpcError) and (e.code, e.message, e.data) == (-32602, "Invalid params", {"p": "v"})
    assert isinstance(f_tool.exception(), ToolError) and f_tool.exception().message == "stuck"
    assert isinstance(f_bad.exception(), ProtocolError)


async def test_stock_device_quirks() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession("sid")
    # error without code
    f = loop.create_future()
    s.expect(5, f, codec.KIND_BOOLEAN)
    s.feed(env({"jsonrpc": "2.0", "id": 5, "error": {"message": "Unknown tool: self.x"}}))
    assert isinstance(f.exception(), RpcError) and f.exception().code is None
    # an id echoed as a string still matches
    g = loop.create_future()
    s.expect(6, g, codec.KIND_BOOLEAN)
    s.feed(env({"jsonrpc": "2.0", "id": "6", "result": text_result("true")}))
    assert g.result() is True


async def test_late_and_unknown_replies_are_counted_not_raised() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession()
    f = loop.create_future()
    s.expect(1, f, codec.KIND_RAW)
    assert s.forget(1) is True and s.forget(1) is False
    assert s.feed(b'{"jsonrpc":"2.0","id":1,"result":{}}') is None
    assert s.stale == 1 and not f.done()
    late_err = s.feed(b'{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"m"}}')
    assert late_err is not None and late_err.kind == codec.FRAME_ERROR


async def test_fail_and_fail_all() -> None:
    loop = asyncio.get_running_loop()
    s = RpcSession()
    futs = [loop.create_future() for _ in range(3)]
    for i, f in enumerate(futs, 1):
        s.expect(i, f, codec.KIND_RAW)
    assert s.fail(2, TimeoutError("t")) is True
    assert s.fail(2, TimeoutError("t")) is False
    assert s.fail_all(ConnectionError("gone")) == 2
    assert isinstance(futs[1].exception(), TimeoutError)
    assert isinstance(futs[0].exception(), ConnectionError) and isinstance(
        futs[2].exception(), ConnectionError
    )


async def test_feed_returns_frames_for_everything_else() -> None:
    s = RpcSession("sid")
    n = s.feed(env({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
    assert n is not None and n.kind == codec.FRAME_NOTIFICATION
    h = s.feed(b'{"type":"listen","state":"start"}')
    assert h is not None and h.kind == codec.FRAME_OTHER and h.type == "listen"
    bad = s.feed(b"\x00garbage")
    assert bad is not None and bad.kind == codec.FRAME_INVALID


def test_kind_code() -> None:
    assert codec.kind_code("boolean") == codec.KIND_BOOLEAN
    assert codec.kind_code(None) == codec.KIND_AUTO
    with pytest.raises(ValueError):
        codec.kind_code("tensor")
