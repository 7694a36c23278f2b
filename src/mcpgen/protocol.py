"""Protocol constants that the generator, the runtime and the bridge share: one source.

They live in the neutral top-level package so both ends import them without importing
each other (the runtime never imports the generator; importing ``mcpgen.runtime.*``
would load the gateway and the compiled hot path into ``codegen check``).

The device core (C++) holds its own copies; tests/spec/test_protocol_constants.py reads
them from ``mcp_core.h``, ``server_impl.h`` and ``mcp_server.cpp`` and compares.
"""

from __future__ import annotations

#: MCP revisions that open with the ``initialize`` handshake, oldest first. The device
#: core speaks exactly these (``kSupportedProtocols`` in mcp_server.cpp), so a spec's
#: ``device.protocol_version`` is one of them.
SESSION_PROTOCOL_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Stateless revisions: the version travels in every request's ``_meta`` (bridge only).
STATELESS_PROTOCOL_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Every revision the bridge serves, oldest first.
PROTOCOL_VERSIONS: tuple[str, ...] = SESSION_PROTOCOL_VERSIONS + STATELESS_PROTOCOL_VERSIONS
#: What xiaozhi devices speak, hence the spec's default and the runtime's ``initialize``.
DEFAULT_PROTOCOL_VERSION = "2024-11-05"

#: What a tool may return (spec ``returns:``), in the order error messages list them.
#: The device core's ``ReturnKind`` enum and the codec's ``KINDS`` name the same kinds.
#: ``content`` is the list form (``returns: [text, image]``): several content items.
RETURN_KINDS: tuple[str, ...] = (
    "boolean",
    "integer",
    "number",
    "string",
    "object",
    "image",
    "audio",
    "resource",
    "content",
    "none",
)
#: The kinds of one item of a ``content`` result, in the order error messages list them
#: (MCP content types: ``text``, ``image``, ``audio``, ``resource`` for an embedded resource).
CONTENT_ITEM_KINDS: tuple[str, ...] = ("text", "image", "audio", "resource")

#: A spec-declared device event is the JSON-RPC notification ``<prefix><event name>``
#: whose ``params`` are the event's arguments (the generated C++ writes the whole method).
EVENT_METHOD_PREFIX = "notifications/events/"

#: A tool whose spec says ``progress: true`` carries ``"_meta": {PROGRESS_META_KEY: true}``
#: in its ``tools/list`` entry: its handler reports ``notifications/progress`` when the
#: caller sent ``params._meta.progressToken`` (the bindings, the bridge and the console read it).
PROGRESS_META_KEY = "mcpgen/progress"

__all__ = [
    "CONTENT_ITEM_KINDS",
    "DEFAULT_PROTOCOL_VERSION",
    "EVENT_METHOD_PREFIX",
    "PROGRESS_META_KEY",
    "PROTOCOL_VERSIONS",
    "RETURN_KINDS",
    "SESSION_PROTOCOL_VERSIONS",
    "STATELESS_PROTOCOL_VERSIONS",
]
