"""JSON-RPC 2.0 error codes: one home for the runtime, the bridge and the tests.

The device core holds the same codes (``ErrorCode`` in the core's ``server_impl.h``);
tests/spec/test_protocol_constants.py compares them with these.
"""

from __future__ import annotations

#: The text is not JSON (or nests too deep).
PARSE_ERROR = -32700
#: Not a JSON-RPC request object.
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: MCP: ``resources/read`` of an unknown URI.
RESOURCE_NOT_FOUND = -32002

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
]
