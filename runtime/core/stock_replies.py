"""Leniency for what stock xiaozhi-esp32 devices send, on the error paths of the codec only.

* **Unparsable replies.** The stock ``McpServer::ReplyError`` pastes its message into a
  JSON string without escaping, so ``Invalid value for "volume"`` gives invalid JSON.
  Without help the frame is dropped and the call waits out its timeout. When a frame
  does not parse, :func:`salvage_reply_id` scans its text for the reply's ``"id"``;
  ``RpcSession.feed`` (``core/rpcsession.py``) fails the pending call with that id at once with the
  :class:`ProtocolError` :func:`unparsable_reply_error` builds (the device's message as
  far as it can be read, and the raw text). No JSON parser reads broken JSON, so this is
  a small hand-written scan; it runs only after the real parser refused the frame.
* **Nested images.** The stock ``McpTool::Call`` sends an image result as
  ``{"type": "image", "image": "<ImageContent JSON as a string>"}`` instead of MCP's
  ``{"type": "image", "mimeType": ..., "data": ...}``. :func:`stock_image` decodes that
  into the runtime's :class:`codec.Image`, so callers, the bridge and MCP clients see a
  proper image; ``core/wire.py`` asks for it only when the MCP form is absent.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Union

import orjson

from mcpgen.runtime.errors import ProtocolError

# The first "id" member with a number or a string value. The stock device writes the id
# before `error` / `result`, and a reply's id comes before anything a message could
# contain in the replies seen so far. An unparsable frame whose id is not pending is
# left alone, so a wrong guess cannot fail another call.
_ID_RE = re.compile(rb'"id"\s*:\s*(-?\d+(?![.\deE])|"(?:[^"\\]|\\.){0,128}")')
# The message of an error object: from its opening quote to the last quote that closes
# an object, so unescaped quotes inside it are kept.
_MESSAGE_RE = re.compile(rb'"message"\s*:\s*"(.*)"\s*}', re.DOTALL)
_RAW_LIMIT = 200


def _as_bytes(data: Union[bytes, bytearray, memoryview, str]) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8", "replace")
    return bytes(data)


def salvage_reply_id(data: Union[bytes, bytearray, memoryview, str]) -> Optional[Union[int, str]]:
    """The JSON-RPC id of a reply that does not parse as JSON, when its text shows one."""
    raw = _as_bytes(data)
    m = _ID_RE.search(raw)
    if m is None:
        return None
    text = m.group(1)
    if text[:1] == b'"':
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, str) else None
    return int(text)


def unparsable_reply_error(
    data: Union[bytes, bytearray, memoryview, str], rid: Union[int, str]
) -> ProtocolError:
    """The error a call gets when its reply (id ``rid``) is not valid JSON."""
    raw = _as_bytes(data)
    shown = raw[:_RAW_LIMIT].decode("utf-8", "replace")
    more = f"... ({len(raw)} bytes)" if len(raw) > _RAW_LIMIT else ""
    m = _MESSAGE_RE.search(raw)
    said = ""
    if m is not None:
        said = f"; the device said: {m.group(1).decode('utf-8', 'replace')}"
    return ProtocolError(
        f"the reply to request {rid!r} is not valid JSON (stock xiaozhi firmware does not escape "
        f"quotes in error messages){said}; reply as received: {shown}{more}"
    )


def stock_image(content: Any) -> Optional[tuple[str, str]]:
    """``(mime_type, data_base64)`` of a stock nested image item in ``content``, or None."""
    if not isinstance(content, list):
        return None
    for item in content:
        if not isinstance(item, dict) or item.get("type") != "image":
            continue
        nested = item.get("image")
        if isinstance(nested, str):
            try:
                nested = orjson.loads(nested)
            except orjson.JSONDecodeError:
                raise ProtocolError("the image item's nested `image` text is not valid JSON") from None
        if isinstance(nested, dict):
            data = nested.get("data")
            mime = nested.get("mimeType")
            if isinstance(data, str):
                return (mime if isinstance(mime, str) else "application/octet-stream", data)
    return None


def mcp_image_items(result: Any) -> Any:
    """``result`` with every stock nested image item turned into MCP image content
    (``{"type": "image", "mimeType": ..., "data": ...}``); the same object when it has none."""
    if not isinstance(result, dict):
        return result
    content = result.get("content")
    if not isinstance(content, list):
        return result
    fixed = None
    for i, item in enumerate(content):
        if isinstance(item, dict) and item.get("type") == "image" and "data" not in item and "image" in item:
            image = stock_image([item])
            if image is None:
                continue
            if fixed is None:
                fixed = list(content)
            fixed[i] = {"type": "image", "mimeType": image[0], "data": image[1]}
    if fixed is None:
        return result
    out = dict(result)
    out["content"] = fixed
    return out


__all__ = ["mcp_image_items", "salvage_reply_id", "stock_image", "unparsable_reply_error"]
