"""The runtime's hot path under one name: wire format, RPC sessions, deadlines.

The code lives in three compiled modules, one job each (docs/architecture.md):

* :mod:`mcpgen.runtime.core.wire`: the xiaozhi envelope and hello, JSON-RPC frame decoding,
  result kinds and result decoding (no state);
* :mod:`mcpgen.runtime.core.rpcsession`: :class:`RpcSession`, per-connection request ids, the
  pending-reply table and the request encoder;
* :mod:`mcpgen.runtime.core.deadlines`: :class:`Deadlines`, :class:`CallSite` and its
  :class:`PendingCall`, the event-loop glue (call deadlines, the compiled ``tools/call`` path).

This module re-exports their public names, so ``mcpgen.runtime.core.codec.X`` (used by the
generated bindings, the docs and the benchmarks) keeps working; the runtime's own modules
import from the three directly.
"""

from __future__ import annotations

from mcpgen.runtime.core.deadlines import CallOwner, CallSite, Deadlines, PendingCall, deadlines_for
from mcpgen.runtime.core.rpcsession import Pending, RpcSession, tools_call_tail
from mcpgen.runtime.core.wire import (
    FRAME_ERROR,
    FRAME_INVALID,
    FRAME_NOTIFICATION,
    FRAME_OTHER,
    FRAME_REQUEST,
    FRAME_RESULT,
    HELLO_VERSION,
    KIND_AUDIO,
    KIND_AUTO,
    KIND_BOOLEAN,
    KIND_CONTENT,
    KIND_IMAGE,
    KIND_INTEGER,
    KIND_NONE,
    KIND_NUMBER,
    KIND_OBJECT,
    KIND_RAW,
    KIND_RESOURCE,
    KIND_STRING,
    KINDS,
    PROTOCOL_VERSION,
    Audio,
    EmbeddedResource,
    Frame,
    Image,
    decode_frame,
    decode_hello,
    decode_result,
    dumps,
    dumps_sorted,
    encode_envelope,
    encode_goodbye,
    encode_hello,
    hello_of,
    kind_code,
    loads,
    rpc_error,
)

__all__ = [
    "KIND_RAW",
    "KIND_AUTO",
    "KIND_NONE",
    "KIND_BOOLEAN",
    "KIND_INTEGER",
    "KIND_NUMBER",
    "KIND_STRING",
    "KIND_OBJECT",
    "KIND_IMAGE",
    "KIND_AUDIO",
    "KIND_RESOURCE",
    "KIND_CONTENT",
    "KINDS",
    "FRAME_INVALID",
    "FRAME_REQUEST",
    "FRAME_NOTIFICATION",
    "FRAME_RESULT",
    "FRAME_ERROR",
    "FRAME_OTHER",
    "PROTOCOL_VERSION",
    "Image",
    "Audio",
    "EmbeddedResource",
    "Frame",
    "Pending",
    "RpcSession",
    "tools_call_tail",
    "CallOwner",
    "Deadlines",
    "deadlines_for",
    "CallSite",
    "PendingCall",
    "decode_frame",
    "decode_result",
    "rpc_error",
    "kind_code",
    "HELLO_VERSION",
    "encode_envelope",
    "encode_hello",
    "encode_goodbye",
    "decode_hello",
    "hello_of",
    "loads",
    "dumps",
    "dumps_sorted",
]
