"""MCP protocol constants the bridge speaks, and the JSON-RPC error type it raises."""

from __future__ import annotations

import json
from typing import Any

from mcpgen.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcpgen.protocol import SESSION_PROTOCOL_VERSIONS, STATELESS_PROTOCOL_VERSIONS

LEGACY_VERSIONS: tuple[str, ...] = SESSION_PROTOCOL_VERSIONS
"""Revisions that open with the ``initialize`` handshake, oldest first."""
MODERN_VERSIONS: tuple[str, ...] = STATELESS_PROTOCOL_VERSIONS
"""Stateless revisions: the version travels in every request's ``_meta``."""
SUPPORTED_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS
BATCH_VERSIONS: frozenset[str] = frozenset({"2025-03-26"})
"""JSON-RPC batching exists only in this revision (added in it, removed in the next)."""

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_DEVICE = "io.mcpgen/device"
META_DEVICE_TOOL = "io.mcpgen/tool"

# The JSON-RPC codes (PARSE_ERROR ... INTERNAL_ERROR) are mcpgen.jsonrpc's, imported
# above for the bridge's modules; the Streamable HTTP one is the bridge's own.
HEADER_MISMATCH = -32020

__all__ = [
    "BATCH_VERSIONS",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_VERSIONS",
    "MAX_JSON_DEPTH",
    "META_DEVICE",
    "META_DEVICE_TOOL",
    "META_PROTOCOL_VERSION",
    "METHOD_NOT_FOUND",
    "MODERN_VERSIONS",
    "PARSE_ERROR",
    "RpcFailure",
    "SUPPORTED_VERSIONS",
    "error_response",
    "notification",
    "parse_message",
    "version_at_least",
]


def version_at_least(version: str, minimum: str) -> bool:
    """Compare two known revisions by their place in the release list (unknown -> False)."""
    try:
        return SUPPORTED_VERSIONS.index(version) >= SUPPORTED_VERSIONS.index(minimum)
    except ValueError:
        return False


class RpcFailure(Exception):
    """A JSON-RPC error to answer with; ``http_status`` is what Streamable HTTP returns."""

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def error_object(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects accepted in a client message (tool arguments are flat
in practice; the limit keeps recursion in every later consumer bounded)."""
_TOO_DEEP = f"Parse error: JSON nested deeper than {MAX_JSON_DEPTH} levels"


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_message(data: bytes | str) -> Any:
    """Decode one JSON-RPC message (or batch) from a client.

    Raises :class:`RpcFailure` with ``PARSE_ERROR`` for text that is not JSON or nests deeper
    than :data:`MAX_JSON_DEPTH`, and ``INVALID_REQUEST`` for an object with a duplicate key:
    parsers disagree on which duplicate wins (the device core took the first ``name``, Python
    the last), so a checker and the device could read different tool names. Refusing them is
    the only reading every end agrees on.
    """
    try:
        value = json.loads(data, object_pairs_hook=_unique_keys)
    except _DuplicateKey as dup:
        message = f"Invalid Request: duplicate key {dup.key!r} in a JSON object (each key may appear once)"
        raise RpcFailure(INVALID_REQUEST, message) from None
    except RecursionError:
        raise RpcFailure(PARSE_ERROR, _TOO_DEEP) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RpcFailure(PARSE_ERROR, f"Parse error: {exc}") from None
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        raise RpcFailure(PARSE_ERROR, _TOO_DEEP)
    return value
