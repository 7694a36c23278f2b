"""The official MCP Python SDK's path for the same work.

Decode: what the SDK's client does with a line it reads -- ``jsonrpc_message_adapter
.validate_json`` (see ``mcp.server.stdio`` / ``mcp.client.stdio``), the reply matched to
its pending request by id, then the typed result model (``CallToolResult`` /
``ListToolsResult``, ``model_validate(..., by_name=False)`` as ``ClientSession
.send_request`` does) and the value taken out of it. The SDK knows nothing of the
xiaozhi envelope, so it is handed the bare JSON-RPC payload (fewer bytes than the
others parse: in its favour).

Encode: ``CallToolRequest`` model construction, ``model_dump`` as the session does,
then the ``JSONRPCRequest`` model and ``model_dump_json`` (bare JSON-RPC, no envelope).
"""

from __future__ import annotations

from typing import Any

import mcp.types as mt
from mcp.shared.exceptions import MCPError
from mcp.types import jsonrpc_message_adapter

_validate_json = jsonrpc_message_adapter.validate_json
_Response = mt.JSONRPCResponse
_CallToolResult = mt.CallToolResult
_ListToolsResult = mt.ListToolsResult


def _value(result: dict[str, Any], kind: str) -> Any:
    if kind == "raw":
        return _ListToolsResult.model_validate(result, by_name=False)
    res = _CallToolResult.model_validate(result, by_name=False)
    if res.is_error:
        raise MCPError(-1, "tool error")
    if kind == "object":
        return res.structured_content
    item = res.content[0]
    text = item.text if isinstance(item, mt.TextContent) else ""
    if kind == "boolean":
        return text == "true"
    if kind == "integer":
        return int(text)
    return text


def make_decoder(pending: dict[Any, Any], kind: str) -> Any:
    """``decode(bare_payload_bytes)``: resolves the future registered in ``pending``."""

    def decode(data: bytes) -> None:
        msg = _validate_json(data, by_name=False)
        fut = pending.pop(msg.id)
        if isinstance(msg, _Response):
            try:
                fut.set_result(_value(msg.result, kind))
            except Exception as exc:
                fut.set_exception(exc)
        else:
            err = msg.error
            fut.set_exception(MCPError(err.code, err.message, err.data))

    return decode


def make_encoder(name: str) -> Any:
    """``encode(args) -> bytes`` with a fresh id per request."""
    counter = [0]

    def encode(arguments: dict[str, Any]) -> bytes:
        counter[0] += 1
        request = mt.CallToolRequest(params=mt.CallToolRequestParams(name=name, arguments=arguments))
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        msg = mt.JSONRPCRequest(
            jsonrpc="2.0", id=counter[0], method=data["method"], params=data.get("params")
        )
        return msg.model_dump_json(by_alias=True, exclude_none=True).encode()

    return encode
