"""The MCP ``resources/list`` and ``resources/templates/list`` JSON of a resource, computed
once from the model: the device stores exactly these bytes, the bindings and the bridge
read the same objects, and the page-size check measures them."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from mcpgen.codegen.spec.mcp_json import CURSOR_LEN, dumps_compact
from mcpgen.codegen.spec.model import Resource


def list_entry(r: Resource) -> dict[str, Any]:
    """The entry of a fixed-URI resource (resources/list) or of a template
    (resources/templates/list); key order is part of the bytes."""
    entry: dict[str, Any] = {"uri": r.uri} if r.uri is not None else {"uriTemplate": r.uri_template}
    entry["name"] = r.name
    entry["description"] = r.description
    entry["mimeType"] = r.mime_type
    return entry


def list_entry_json(r: Resource) -> str:
    return dumps_compact(list_entry(r))


def worst_case_page_bytes(r: Resource) -> int:
    """Bytes of a page that holds only ``r`` and a next-page cursor."""
    head = '{"resources":[' if r.uri is not None else '{"resourceTemplates":['
    return len(head) + len(list_entry_json(r).encode("utf-8")) + len('],"nextCursor":"') + CURSOR_LEN + 2


#: Longest session id the runtime gives a device (a UUID): the WebSocket and MQTT replies
#: carry it in their envelope.
_SESSION_ID_LEN = 36
#: Room for the request id of a read (the runtime's ids are integers; 10 digits).
_ID_LEN = 10


def _json_string_bytes(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def read_reply_bytes(
    content: str, mime: str, uri: Optional[str], template: Optional[str], content_bytes: int
) -> int:
    """The fewest bytes of the reply to a ``resources/read`` of ``content_bytes`` bytes of
    content, as the device core writes it (``resources.cpp``), in the xiaozhi envelope:
    ``{"session_id":..,"type":"mcp","payload":{"jsonrpc":"2.0","id":..,"result":{"contents":
    [{"uri":..,"mimeType":..,"text"|"blob":".."}]}}}``. A template's URI counts one
    character per variable (its shortest value); text counts unescaped (its least)."""
    if uri is None:
        uri = re.sub(r"\{[^{}]*\}", "x", template or "")
    body = 4 * ((content_bytes + 2) // 3) if content == "binary" else content_bytes
    envelope = len('{"session_id":"","type":"mcp","payload":}') + _SESSION_ID_LEN
    reply = len('{"jsonrpc":"2.0","id":,"result":{"contents":[{"uri":,"mimeType":,"text":""}]}}') + _ID_LEN
    return envelope + reply + _json_string_bytes(uri) + _json_string_bytes(mime) + body


def largest_content(content: str, mime: str, uri: Optional[str], template: Optional[str], buffer: int) -> int:
    """The largest ``max_size`` whose read still fits ``buffer`` (0: none does)."""
    room = buffer - read_reply_bytes(content, mime, uri, template, 0)
    if room <= 0:
        return 0
    return (room // 4) * 3 if content == "binary" else room
