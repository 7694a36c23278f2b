"""MCP protocol constants the bridge speaks, and the JSON-RPC error type it raises."""

from __future__ import annotations

import json
from typing import Any

from mcpgen.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcpgen.protocol import SESSION_PROTOCOL_VERSIONS, STATELESS_PROTOCOL_VERSIONS
from mcpgen.runtime import errors

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


QUOTE_LIMIT = 120
"""Characters of a client's input an error text quotes: enough to recognise it, never
the whole input (a 3 MB tool name would otherwise be answered with 3 MB)."""
TEXT_LIMIT = 1000
"""Characters of an error text built from input (a schema checker's messages quote it)."""


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``value`` for an error text (a string quoted, anything else as JSON), cut to
    ``limit`` characters with the full size noted."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value)} characters)"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return errors.clip(text, limit)


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (for messages that may quote input in full)."""
    return errors.clip(text, limit)


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def bounded_error(message: Any) -> Any:
    """An error response with its ``message`` and a text ``data`` cut to size, for answers
    the SDK builds: it quotes input in them (``Method not found`` carries the whole method
    name as ``data``). Anything else is returned as it is."""
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict):
        return message
    text, data = error.get("message"), error.get("data")
    if isinstance(text, str) and len(text) > TEXT_LIMIT:
        error["message"] = clip(text)
    if isinstance(data, str) and len(data) > QUOTE_LIMIT:
        error["data"] = clip(data, QUOTE_LIMIT)
    return message


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
        key = quote(dup.key)
        message = f"Invalid Request: duplicate key {key} in a JSON object (each key may appear once)"
        raise RpcFailure(INVALID_REQUEST, message) from None
    except RecursionError:
        raise RpcFailure(PARSE_ERROR, _TOO_DEEP) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RpcFailure(PARSE_ERROR, f"Parse error: {exc}") from None
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        raise RpcFailure(PARSE_ERROR, _TOO_DEEP)
    return value


def _usable_id(value: Any) -> bool:
    """MCP request ids are strings or integers (never null, a fraction, a boolean or a structure)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def invalid_message(message: Any) -> dict[str, Any] | None:
    """The ``-32600`` error response for a message that is not a well-formed JSON-RPC 2.0
    request, notification or response in MCP's shape; None when it is one.

    Why the bridge checks this itself: the SDK drops what it cannot read as a message
    (``42``, ``"jsonrpc": "1.0"``, ``"method": 5``) without a word, and reads a request
    whose id is null, fractional or boolean as a notification (no answer), while JSON-RPC
    2.0 asks for an error answer to each. The answer carries the message's id when that
    id is usable, and null otherwise, as JSON-RPC 2.0 says.
    """
    if not isinstance(message, dict):
        return _invalid(None, "a JSON-RPC message must be an object")
    raw_id = message.get("id")
    answer_id = raw_id if _usable_id(raw_id) else None
    if message.get("jsonrpc") != "2.0":
        if "jsonrpc" not in message:
            return _invalid(answer_id, 'the "jsonrpc" member is missing (it must be "2.0")')
        return _invalid(answer_id, f'"jsonrpc" must be "2.0", not {quote(message["jsonrpc"])}')
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            return _invalid(answer_id, f'"method" must be a string, not {quote(method)}')
        if "id" in message and not _usable_id(raw_id):
            return _invalid(None, f'"id" must be a string or an integer, not {quote(raw_id)}')
        if "params" in message and not isinstance(message["params"], dict):
            return _invalid(answer_id, f'"params" must be an object, not {quote(message["params"])}')
        if "result" in message or "error" in message:
            return _invalid(answer_id, 'a request or notification has no "result" or "error"')
        return None
    # a response (the bridge sends no requests, but a client may still answer one)
    if "id" not in message:
        return _invalid(None, 'no "method": not a request, a notification or a response')
    if ("result" in message) == ("error" in message):
        return _invalid(answer_id, 'a response has exactly one of "result" and "error"')
    if "result" in message:
        if not _usable_id(raw_id):
            return _invalid(None, f'"id" must be a string or an integer, not {quote(raw_id)}')
        if not isinstance(message["result"], dict):
            return _invalid(answer_id, f'"result" must be an object, not {quote(message["result"])}')
        return None
    error = message["error"]
    if raw_id is not None and not _usable_id(raw_id):
        return _invalid(None, f'"id" must be a string, an integer or null, not {quote(raw_id)}')
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(error.get("message"), str):
        return _invalid(answer_id, '"error" must be an object with an integer "code" and a string "message"')
    return None


def _invalid(request_id: Any, reason: str) -> dict[str, Any]:
    return error_response(request_id, INVALID_REQUEST, f"Invalid Request: {reason}")
