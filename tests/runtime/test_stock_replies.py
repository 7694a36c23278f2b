"""Stock xiaozhi devices' quirks on the reply path: an error reply that is not valid JSON
(an unescaped quote in its message) fails its call at once with a ProtocolError, and an
image result nested as a JSON string decodes into the runtime's Image (and, for
call_raw and therefore the bridge, into MCP image content)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import orjson
import pytest

from mcpgen.runtime.core import codec
from mcpgen.runtime.core.codec import Image
from mcpgen.runtime.core.stock_replies import mcp_image_items, salvage_reply_id
from mcpgen.runtime.errors import DeviceTimeout, ProtocolError
from mcpgen.runtime.session.device import Device

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-not-really").decode()


class _Capture:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        self.sent.append(orjson.loads(data))

    async def close(self) -> None:
        pass


async def _sent_id(t: _Capture, n: int = 1) -> int:
    for _ in range(100):
        if len(t.sent) >= n:
            break
        await asyncio.sleep(0)
    msg = t.sent[n - 1]
    return int(msg.get("payload", msg)["id"])


def _stock_error(rid: Any, message: str) -> bytes:
    # What the stock McpServer::ReplyError writes: the message pasted in unescaped.
    head = '{"session_id":"s1","type":"mcp","payload":{"jsonrpc":"2.0","id":' + json.dumps(rid)
    return (head + ',"error":{"message":"' + message + '"}}}').encode()


async def test_unparsable_error_reply_fails_its_call_at_once() -> None:
    t = _Capture()
    device = Device(t, device_id="stock", session_id="s1", call_timeout=30)
    first = asyncio.ensure_future(device.call_raw("self.audio_speaker.set_volume", {"volume": 500}))
    rid = await _sent_id(t)
    other = asyncio.ensure_future(device.call_raw("self.other", {}, timeout=0.5))
    other_id = await _sent_id(t, 2)
    loop = asyncio.get_running_loop()
    started = loop.time()
    device.feed(_stock_error(rid, 'Invalid value for "volume": must be between 0 and 100'))
    with pytest.raises(ProtocolError) as info:
        await asyncio.wait_for(first, 2)
    assert loop.time() - started < 1  # not the 30 s call timeout
    text = str(info.value)
    assert f"request {rid}" in text and 'the device said: Invalid value for "volume": must be' in text
    # A broken frame for no pending id, or with no id at all, fails nothing.
    device.feed(_stock_error(rid + 100, 'a "b"'))
    device.feed(b'{"jsonrpc":"2.0","error":{"message":"x"y"}}')
    assert device.session.pending_count == 1
    with pytest.raises(DeviceTimeout):
        await other
    assert other_id != rid


@pytest.mark.parametrize(
    ("text", "rid"),
    [
        (b'{"jsonrpc":"2.0","id":12,"error":{"message":"a"b"}}', 12),
        (b'{"jsonrpc":"2.0","id" : "req-1","error":{"message":"a"b"}}', "req-1"),
        (b'{"jsonrpc":"2.0","id":1.5,"error":{"message":"a"b"}}', None),
        (b'{"jsonrpc":"2.0","error":{"message":"a"b"}}', None),
        ("not json at all", None),
    ],
)
def test_salvage_reply_id(text: Any, rid: Any) -> None:
    assert salvage_reply_id(text) == rid


def _reply(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": _stock_image_result()}


def _stock_image_result() -> dict[str, Any]:
    nested = json.dumps({"type": "image", "mimeType": "image/png", "data": PNG})
    return {"content": [{"type": "image", "image": nested}], "isError": False}


async def test_stock_nested_image_decodes_into_image() -> None:
    assert codec.decode_result(_stock_image_result(), codec.KIND_IMAGE) == Image("image/png", PNG)
    assert codec.decode_result(_stock_image_result(), codec.KIND_AUTO) == Image("image/png", PNG)
    broken = {"content": [{"type": "image", "image": "{not json"}]}
    with pytest.raises(ProtocolError, match="nested `image`"):
        codec.decode_result(broken, codec.KIND_IMAGE)
    t = _Capture()
    device = Device(t, device_id="stock", session_id="s1")
    call = asyncio.ensure_future(device.invoke("self.camera.take_photo", {}, codec.KIND_IMAGE))
    rid = await _sent_id(t)
    reply = {"session_id": "s1", "type": "mcp", "payload": _reply(rid)}
    device.feed(json.dumps(reply).encode())
    image = await asyncio.wait_for(call, 2)
    assert isinstance(image, Image) and image.data.startswith(b"\x89PNG")


async def test_call_raw_gives_mcp_image_content() -> None:
    t = _Capture()
    device = Device(t, device_id="stock", session_id="s1")
    call = asyncio.ensure_future(device.call_raw("self.camera.take_photo"))
    rid = await _sent_id(t)
    reply = {"session_id": "s1", "type": "mcp", "payload": _reply(rid)}
    device.feed(json.dumps(reply).encode())
    result = await asyncio.wait_for(call, 2)
    assert result["content"] == [{"type": "image", "mimeType": "image/png", "data": PNG}]
    plain = {"content": [{"type": "text", "text": "hi"}]}
    assert mcp_image_items(plain) is plain  # nothing to fix: the same object
