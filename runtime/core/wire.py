# cython: annotation_typing=False
"""The wire format: the xiaozhi envelope and hello, JSON-RPC frames, result kinds.

Compiled by Cython (pure-Python mode; declarations in ``wire.pxd``). The same file runs
unchanged as Python when the build skips compilation. Nothing here holds state: the
per-connection state (ids, pending replies) is :mod:`mcpgen.runtime.core.rpcsession`, the
event-loop glue (deadlines, the compiled call path) :mod:`mcpgen.runtime.core.deadlines`;
:mod:`mcpgen.runtime.core.codec` re-exports all three under their historical names.

Frames are either the xiaozhi envelope ``{"session_id", "type": "mcp", "payload"}`` or
bare JSON-RPC 2.0 (stdio and serial transports); envelopes of other types (``hello``,
``listen``, ...) are passed up untouched. JSON is parsed and written by orjson.

What stock xiaozhi devices send is accepted: error objects without ``code``, numeric ids
only, ``nextCursor`` holding the next tool's name, results carrying only text content.
"""

from __future__ import annotations

import base64
from typing import Any, Optional, Union

import cython
import orjson

from mcpgen.protocol import DEFAULT_PROTOCOL_VERSION
from mcpgen.runtime.core.stock_replies import stock_image as _stock_image
from mcpgen.runtime.errors import ProtocolError, RpcError, ToolError

_loads = orjson.loads
_dumps = orjson.dumps
_JSONDecodeError = orjson.JSONDecodeError

# The reply fast path (RpcSession.feed, runtime.core.rpcsession): msgspec decodes a tools/call reply
# straight into small typed Structs, which measured ~1.0x orjson.loads for the whole
# parse + id match + decode + future against ~1.9x for orjson's dicts plus our lookups
# (benchmarks/gw_decode.py). Anything it does not model goes the general orjson way.
try:
    import msgspec as _msgspec
except ImportError:  # optional: the general path handles everything alone
    _msgspec = None  # type: ignore[assignment]  # (mypy: a module, msgspec is a dependency)

# The Structs below are made at run time (defstruct): mypy knows neither their fields nor
# what the decoders return, so the fast path is typed Any.
fast_reply_decode: Any  # a bare JSON-RPC reply; None without msgspec
fast_envelope_decode: Any  # a reply in a xiaozhi envelope; None without msgspec
FastReplyError: type[Exception]

if _msgspec is not None:
    # gc=False: the decoded Structs are never in a reference cycle (JSON has none), so
    # they stay out of the cyclic GC (no tracking, and fewer collections per reply).
    # Only the fields the fast path reads are declared: msgspec skips the others without
    # building them (a content item's "type" is not needed to take its "text"), and every
    # declared field a frame lacks costs a default to fill in.
    # The compiled RpcSession reads these Structs through C views (rpcsession.pxd).
    _Content = _msgspec.defstruct("_Content", [("text", Any, None)], gc=False)
    _Result = _msgspec.defstruct(
        "_Result",
        # a field type made at run time, which mypy cannot read as a type
        [("content", Optional[list[_Content]], None), ("isError", Any, None)],  # type: ignore[valid-type]
        gc=False,
    )
    # An error object as a Struct rather than a dict (an error that is not an object
    # fails the typed decode and takes the general path, which says what is wrong).
    _Err = _msgspec.defstruct(
        "_Err", [("code", Any, None), ("message", Any, None), ("data", Any, None)], gc=False
    )
    _Inner = _msgspec.defstruct(
        "_Inner",
        [
            ("id", Any, None),
            ("method", Any, None),
            ("result", Optional[_Result], None),
            ("error", Optional[_Err], None),
        ],
        gc=False,
    )
    _Env = _msgspec.defstruct("_Env", [("type", Any, None), ("payload", Optional[_Inner], None)], gc=False)
    fast_reply_decode = _msgspec.json.Decoder(_Inner).decode
    fast_envelope_decode = _msgspec.json.Decoder(_Env).decode
    FastReplyError = _msgspec.MsgspecError
else:
    fast_reply_decode = fast_envelope_decode = None
    FastReplyError = Exception
    # rpcsession.pxd imports these types by name when the module loads
    _Env = _Inner = _Err = _Result = _Content = object

if not cython.compiled:  # compiled: a direct call of the type's tp_new (wire.pxd)

    def _exc_new(cls: type, args: tuple) -> Any:
        """An exception of ``cls`` with these ``args``, its ``__init__`` not run."""
        return BaseException.__new__(cls, *args)


_INF = float("inf")


_COMPILED = cython.compiled  # a constant of the build (True in the Cython one)

# Return kinds: how the ``result`` of a ``tools/call`` is turned into a Python value.
KIND_RAW = -1  # the MCP result object as sent (call_raw, initialize, tools/list)
KIND_AUTO = 0  # unknown spec: structuredContent, else best-effort decoding of the text
KIND_NONE = 1
KIND_BOOLEAN = 2
KIND_INTEGER = 3
KIND_NUMBER = 4
KIND_STRING = 5
KIND_OBJECT = 6
KIND_IMAGE = 7
KIND_AUDIO = 8
KIND_RESOURCE = 9  # one embedded resource
KIND_CONTENT = 10  # several content items (`returns: [text, image, ...]`): a tuple

KINDS: dict = {
    "raw": KIND_RAW,
    "auto": KIND_AUTO,
    "none": KIND_NONE,
    "boolean": KIND_BOOLEAN,
    "integer": KIND_INTEGER,
    "number": KIND_NUMBER,
    "string": KIND_STRING,
    "object": KIND_OBJECT,
    "image": KIND_IMAGE,
    "audio": KIND_AUDIO,
    "resource": KIND_RESOURCE,
    "content": KIND_CONTENT,
}

# Frame classes returned by decode_frame / RpcSession.feed.
FRAME_INVALID = 0  # not JSON, not an object, or not JSON-RPC
FRAME_REQUEST = 1  # has id and method (a device-initiated request)
FRAME_NOTIFICATION = 2  # method without id
FRAME_RESULT = 3  # id and result
FRAME_ERROR = 4  # error (with id, or id null)
FRAME_OTHER = 5  # an envelope whose type is not "mcp" (hello, listen, ...)

PROTOCOL_VERSION = DEFAULT_PROTOCOL_VERSION  # what `initialize` asks for (mcpgen.protocol)

# C-level copies used by the compiled hot path (declared in wire.pxd).
_K_RAW = KIND_RAW
_K_AUTO = KIND_AUTO
_K_NONE = KIND_NONE
_K_BOOLEAN = KIND_BOOLEAN
_K_INTEGER = KIND_INTEGER
_K_NUMBER = KIND_NUMBER
_K_STRING = KIND_STRING
_K_OBJECT = KIND_OBJECT
_K_IMAGE = KIND_IMAGE
_K_AUDIO = KIND_AUDIO
_K_RESOURCE = KIND_RESOURCE
_K_CONTENT = KIND_CONTENT
_F_INVALID = FRAME_INVALID
_F_REQUEST = FRAME_REQUEST
_F_NOTIFICATION = FRAME_NOTIFICATION
_F_RESULT = FRAME_RESULT
_F_ERROR = FRAME_ERROR
_F_OTHER = FRAME_OTHER


def kind_code(kind: Optional[str]) -> int:
    """The ``KIND_*`` code of a spec return kind name (``None`` -> ``KIND_AUTO``)."""
    if kind is None:
        return _K_AUTO
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown return kind {kind!r}") from None


class _Base64Media:
    """MIME type and base64 data, decoded on first use: the body :class:`Image` and
    :class:`Audio` share (a ``cdef class`` base in the compiled build, wire.pxd).

    Equal when of the same class with the same MIME type and data; an image never equals
    an audio clip of the same bytes.
    """

    def __init__(self, mime_type: str, data_base64: str) -> None:
        self.mime_type = mime_type
        self.data_base64 = data_base64
        self._data: Optional[bytes] = None

    @property
    def data(self) -> bytes:
        """The decoded bytes (the image file; the audio clip, e.g. a WAV file)."""
        d = self._data
        if d is None:
            d = base64.b64decode(self.data_base64)
            self._data = d
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.mime_type == other.mime_type and self.data_base64 == other.data_base64

    def __hash__(self) -> int:
        return hash((self.mime_type, self.data_base64))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mime_type!r}, {len(self.data_base64)} base64 chars)"


class Image(_Base64Media):
    """An image returned by a tool: MIME type and base64 data (decoded on first use)."""


class Audio(_Base64Media):
    """An audio clip returned by a tool: MIME type and base64 data (decoded on first use)."""


class EmbeddedResource:
    """A resource carried in a tool result (MCP ``{"type": "resource"}``): its URI as the
    device gave it, MIME type, and ``text`` or ``blob_base64`` (the other one is None)."""

    def __init__(
        self, uri: str, mime_type: str, text: Optional[str] = None, blob_base64: Optional[str] = None
    ) -> None:
        self.uri = uri
        self.mime_type = mime_type
        self.text = text
        self.blob_base64 = blob_base64

    @property
    def data(self) -> bytes:
        """The content's bytes: the blob decoded, or the text as UTF-8."""
        if self.blob_base64 is not None:
            return base64.b64decode(self.blob_base64)
        return (self.text or "").encode("utf-8")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EmbeddedResource):
            return NotImplemented
        return (self.uri, self.mime_type, self.text, self.blob_base64) == (
            other.uri,
            other.mime_type,
            other.text,
            other.blob_base64,
        )

    def __hash__(self) -> int:
        return hash((self.uri, self.mime_type, self.text, self.blob_base64))

    def __repr__(self) -> str:
        if self.text is not None:
            size = f"{len(self.text)} characters"
        else:
            size = f"{len(self.blob_base64 or '')} base64 chars"
        return f"EmbeddedResource({self.uri!r}, {self.mime_type!r}, {size})"


class Frame:
    """One decoded incoming frame that is not a reply already routed to its caller.

    ``kind`` is a ``FRAME_*`` code; ``type`` the envelope type (``None`` for bare
    JSON-RPC); ``message`` the whole parsed object (the envelope when there is one).
    """

    def __init__(
        self,
        kind: int,
        type: Optional[str] = None,
        session_id: Any = None,
        id: Any = None,
        method: Optional[str] = None,
        params: Any = None,
        result: Any = None,
        error: Any = None,
        message: Any = None,
    ) -> None:
        self.kind = kind
        self.type = type
        self.session_id = session_id
        self.id = id
        self.method = method
        self.params = params
        self.result = result
        self.error = error
        self.message = message

    def value(self, kind: int = KIND_AUTO) -> object:
        """The decoded result (raises the device's error for error frames)."""
        if self.kind == _F_ERROR:
            raise rpc_error(self.error)
        if self.kind != _F_RESULT:
            raise ProtocolError("frame is not a response")
        return decode_result(self.result, kind)

    def __repr__(self) -> str:
        names = ("invalid", "request", "notification", "result", "error", "other")
        return f"Frame({names[self.kind]}, type={self.type!r}, id={self.id!r}, method={self.method!r})"


def new_frame(
    kind: int,
    etype: Any = None,
    sid: Any = None,
    rid: Any = None,
    method: Any = None,
    params: Any = None,
    result: Any = None,
    error: Any = None,
    message: Any = None,
) -> Frame:
    """Builds a Frame without going through keyword-argument parsing (hot path)."""
    f = Frame.__new__(Frame)
    f.kind = kind
    f.type = etype
    f.session_id = sid
    f.id = rid
    f.method = method
    f.params = params
    f.result = result
    f.error = error
    f.message = message
    return f


def decode_frame(data: Union[bytes, bytearray, memoryview, str]) -> Frame:
    """Parses and classifies one frame without any session state."""
    try:
        msg = _loads(data)
    except _JSONDecodeError:
        return new_frame(_F_INVALID)
    return classify(msg)


def classify(msg: object) -> Frame:
    if type(msg) is not dict:
        return new_frame(_F_INVALID, None, None, None, None, None, None, None, msg)
    env = msg
    etype = env.get("type")
    sid = None
    payload = env
    if etype is not None:
        sid = env.get("session_id")
        if etype != "mcp":
            return new_frame(_F_OTHER, etype, sid, None, None, None, None, None, msg)
        inner = env.get("payload")
        if type(inner) is not dict:
            return new_frame(_F_INVALID, etype, sid, None, None, None, None, None, msg)
        payload = inner
    rid = payload.get("id")
    method = payload.get("method")
    if method is not None:
        if type(method) is not str:
            return new_frame(_F_INVALID, etype, sid, rid, None, None, None, None, msg)
        if rid is None:
            params = payload.get("params")
            return new_frame(_F_NOTIFICATION, etype, sid, None, method, params, None, None, msg)
        return new_frame(_F_REQUEST, etype, sid, rid, method, payload.get("params"), None, None, msg)
    if "result" in payload:
        return new_frame(_F_RESULT, etype, sid, rid, None, None, payload["result"], None, msg)
    if "error" in payload:
        return new_frame(_F_ERROR, etype, sid, rid, None, None, None, payload["error"], msg)
    return new_frame(_F_INVALID, etype, sid, rid, None, None, None, None, msg)


def rpc_error(err: object) -> RpcError:
    """An :class:`RpcError` from a JSON-RPC error object (``code`` may be missing)."""
    if type(err) is not dict:
        return _new_rpc_error(None, str(err), None)
    e = err
    code = e.get("code")
    if type(code) is not int and (isinstance(code, bool) or not isinstance(code, int)):
        code = None
    msg = e.get("message")
    return _new_rpc_error(code, msg if isinstance(msg, str) else str(msg), e.get("data"))


def rpc_error_fields(code: object, msg: object, data: object) -> RpcError:
    """:func:`rpc_error` of an error object already split into its fields (the fast path)."""
    if type(code) is not int and (isinstance(code, bool) or not isinstance(code, int)):
        code = None
    return _new_rpc_error(code, msg if isinstance(msg, str) else str(msg), data)


def _new_rpc_error(code: Optional[int], message: str, data: object) -> RpcError:
    """``RpcError(code, message, data)`` without running its interpreted ``__init__``.

    The object is the same as the constructor's (its ``args`` are the three fields;
    tests/runtime check it): on the decode hot path the Python-level ``__init__`` and
    ``super().__init__`` cost more than parsing the reply.
    """
    return _exc_new(RpcError, (code, message, data))


def _content_text(content: object) -> Optional[str]:
    """The text of the first text item of a content list, or None."""
    if type(content) is list:
        for x in content:
            if type(x) is dict:
                item = x
                if item.get("type") == "text":
                    text = item.get("text")
                    if type(text) is str:
                        return text
    return None


def _tool_error(content: object) -> ToolError:
    """``ToolError(message, content)`` for an ``isError`` result, built like :func:`_new_rpc_error`."""
    text = _content_text(content)
    message = text if text is not None else "tool failed"
    exc = _exc_new(ToolError, (message,))
    exc.message = message
    exc.content = list(content) if type(content) is list and content else []
    return exc


def _image(content: object) -> Image:
    if type(content) is list:
        for x in content:
            if type(x) is dict:
                item = x
                if item.get("type") == "image":
                    data = item.get("data")
                    mime = item.get("mimeType")
                    if type(data) is str:
                        return Image(mime if type(mime) is str else "application/octet-stream", data)
    nested = _stock_image(content)  # stock xiaozhi: the ImageContent JSON as a string
    if nested is not None:
        return Image(nested[0], nested[1])
    raise ProtocolError("expected image content in the tool result")


def _audio(content: object) -> Audio:
    if type(content) is list:
        for x in content:
            if type(x) is dict:
                item = x
                if item.get("type") == "audio":
                    data = item.get("data")
                    mime = item.get("mimeType")
                    if type(data) is str:
                        return Audio(mime if type(mime) is str else "application/octet-stream", data)
    raise ProtocolError("expected audio content in the tool result")


def _embedded(content: object) -> EmbeddedResource:
    if type(content) is list:
        for x in content:
            if type(x) is dict:
                item = x
                res = item.get("resource")
                if item.get("type") == "resource" and type(res) is dict:
                    r = res
                    uri = r.get("uri")
                    mime = r.get("mimeType")
                    text = r.get("text")
                    blob = r.get("blob")
                    if type(uri) is str and (type(text) is str or type(blob) is str):
                        return EmbeddedResource(
                            uri,
                            mime if type(mime) is str else "application/octet-stream",
                            text if type(text) is str else None,
                            blob if type(text) is not str else None,
                        )
    raise ProtocolError("expected an embedded resource in the tool result")


def _content_item(item: object) -> object:
    """One item of a several-item result: text as ``str``, image / audio / embedded
    resource as their classes, any other item (a resource link, ...) as sent."""
    if type(item) is dict:
        d = item
        t = d.get("type")
        if t == "text":
            text = d.get("text")
            if type(text) is str:
                return text
        elif t == "image":
            return _image([d])
        elif t == "audio":
            return _audio([d])
        elif t == "resource":
            return _embedded([d])
    return item


def _content(content: object) -> tuple:
    if type(content) is not list:
        raise ProtocolError("expected a list of content items in the tool result")
    return tuple([_content_item(x) for x in content])


def _auto_text(text: str) -> object:
    """Best-effort value of a text result from a tool of unknown return kind."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text:
        c = text[0]
        if c == "{" or c == "[" or c == "-" or ("0" <= c <= "9"):
            try:
                return _loads(text)
            except _JSONDecodeError:
                return text
    return text


def _auto_item(item: object) -> object:
    if type(item) is dict:
        d = item
        t = d.get("type")
        if t == "text":
            text = d.get("text")
            return _auto_text(text) if type(text) is str else text
        if t == "image":
            return _image([d])
        if t == "audio":
            return _audio([d])
        if t == "resource":
            return _embedded([d])
    return item


def _decode_text_kind(content: object, kind: int) -> object:
    text = _content_text(content)
    if text is None:
        raise ProtocolError("expected text content in the tool result")
    value = text_scalar(text, kind)  # the plain form (None for the object kind)
    if value is not None:
        return value
    if kind == _K_BOOLEAN:
        low = text.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ProtocolError(f"expected a boolean result, got {_preview(text)}")
    if kind == _K_INTEGER:  # int() refused it (also: more digits than int() allows)
        try:
            f = float(text)
        except ValueError:
            raise ProtocolError(f"expected an integer result, got {_preview(text)}") from None
        # NaN, +-Infinity and 1e400 (which float() reads as infinity) have no integer value:
        # int() would raise OverflowError/ValueError, which callers must never see.
        if f != f or f == _INF or f == -_INF or f != int(f):
            raise ProtocolError(f"expected an integer result, got {_preview(text)}")
        return int(f)
    if kind == _K_NUMBER:
        raise ProtocolError(f"expected a number result, got {_preview(text)}")
    # _K_OBJECT without structuredContent: the text is the JSON object.
    try:
        return _loads(text)
    except _JSONDecodeError:
        raise ProtocolError(f"expected a JSON object result, got {text[:80]!r}") from None


def _preview(text: str) -> str:
    """``repr`` of the start of a device's text, for error messages (it may be megabytes)."""
    if len(text) <= 80:
        return repr(text)
    return f"{text[:80]!r}... ({len(text)} characters)"


def decode_result(result: object, kind: int) -> object:
    """The value of a ``tools/call`` result for a tool of return kind ``kind``.

    ``isError: true`` raises :class:`ToolError` with the device's message.
    """
    if type(result) is not dict:
        raise ProtocolError("the result of tools/call must be an object")
    if kind == _K_RAW:
        return result
    res = result
    if res.get("isError") is True:
        raise _tool_error(res.get("content"))
    if kind == _K_NONE:
        return None
    if kind == _K_OBJECT:
        sc = res.get("structuredContent")
        if sc is not None:
            return sc
        return _decode_text_kind(res.get("content"), kind)
    content = res.get("content")
    if kind == _K_BOOLEAN or kind == _K_STRING or kind == _K_INTEGER or kind == _K_NUMBER:
        # Fast path: one text item, as every device sends for scalars; anything else
        # (and text the fast path does not take) goes through _decode_text_kind.
        if type(content) is list:
            items = content
            if len(items) == 1:
                first = items[0]
                if type(first) is dict:
                    item = first
                    text = item.get("text")
                    if type(text) is str:
                        value = text_scalar(text, kind)
                        if value is not None:
                            return value
        return _decode_text_kind(content, kind)
    if kind == _K_IMAGE:
        return _image(content)
    if kind == _K_AUDIO:
        return _audio(content)
    if kind == _K_RESOURCE:
        return _embedded(content)
    if kind == _K_CONTENT:
        return _content(content)
    # _K_AUTO
    sc = res.get("structuredContent")
    if sc is not None:
        return sc
    if type(content) is not list or not content:
        return None
    if len(content) == 1:
        return _auto_item(content[0])
    return [_auto_item(x) for x in content]


def text_scalar(s: str, kind: int) -> object:
    """The value of a scalar return kind's text in its plain form (``true``/``false``,
    ``int()`` or ``float()`` text, any string), or None (``_decode_text_kind`` then takes
    what else devices send, or says what is wrong). The rule of every fast path."""
    if kind == _K_STRING:
        return s
    if kind == _K_BOOLEAN:
        if s == "true":
            return True
        if s == "false":
            return False
        return None
    if kind == _K_INTEGER:
        if _COMPILED:
            n = plain_int(s)
            if n is not None:
                return n
        try:
            return int(s)
        except ValueError:  # also more digits than int() takes
            return None
    if kind == _K_NUMBER:
        try:
            return float(s)
        except ValueError:
            return None
    return None


def plain_int(s: str) -> Optional[int]:
    """``int(s)`` for short plain decimals (``-?[0-9]{1,18}``), else None.

    Only used by the compiled build, where it is a C loop; ``int(str)`` goes through a
    normalised copy of the text first. The interpreted build calls ``int`` directly.
    """
    n = len(s)
    if n == 0 or n > 18:
        return None
    neg = s[0] == "-"
    i = 1 if neg else 0
    if i == n:
        return None
    v = 0
    while i < n:
        c = s[i]
        if c < "0" or c > "9":
            return None
        v = v * 10 + (ord(c) - 48)
        i += 1
    return -v if neg else v


def undecodable(exc: BaseException) -> ProtocolError:
    """The typed error a reply ends in when decoding it failed unexpectedly (a bug)."""
    err = ProtocolError(f"the device's reply could not be decoded: {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


# -- the xiaozhi envelope and hello ---------------------------------------------------
# Every frame the runtime writes outside a session's precomputed request framing
# (RpcSession) is encoded here, and device hellos are recognised here, for every
# transport (WebSocket gateway, MQTT gateway, MQTT fleet).

#: The xiaozhi protocol version the server hello announces.
HELLO_VERSION = 3
_GOODBYE_ANY = b'{"type":"goodbye"}'


def encode_envelope(session_id: Optional[str], message: object) -> bytes:
    """One JSON-RPC ``message`` as a frame: in the ``mcp`` envelope of ``session_id``,
    bare JSON-RPC when ``session_id`` is None (stdio, serial, MQTT fleet requests)."""
    if session_id is None:
        return _dumps(message)
    return _dumps({"session_id": session_id, "type": "mcp", "payload": message})


def encode_hello(transport: str, session_id: str) -> bytes:
    """The server ``hello`` that accepts a device's hello and names its session."""
    hello = {"type": "hello", "transport": transport, "session_id": session_id, "version": HELLO_VERSION}
    return _dumps(hello)


def encode_goodbye(session_id: Optional[str] = None) -> bytes:
    """``goodbye``: ends the device's session ``session_id``; without one, whatever
    session the device is in (it then says hello again)."""
    if session_id is None:
        return _GOODBYE_ANY
    return _dumps({"session_id": session_id, "type": "goodbye"})


def hello_of(frame: Frame) -> Optional[dict]:
    """The device ``hello`` (the parsed object) that ``frame`` is, or None when it is not one."""
    msg = frame.message
    if frame.kind == _F_OTHER and frame.type == "hello" and "jsonrpc" not in msg:
        return msg
    return None


def decode_hello(data: Union[bytes, bytearray, memoryview, str]) -> Optional[dict]:
    """The device ``hello`` in ``data`` (the parsed object), or None when it is not one."""
    return hello_of(decode_frame(data))


def loads(data: Union[bytes, bytearray, memoryview, str]) -> Any:
    """orjson.loads, re-exported so callers share one JSON parser."""
    return _loads(data)


def dumps(value: object) -> bytes:
    """orjson.dumps, re-exported so callers share one JSON writer."""
    return _dumps(value)


def dumps_sorted(value: object) -> bytes:
    """orjson.dumps with sorted keys: equal values give equal bytes (a cache key)."""
    return _dumps(value, option=orjson.OPT_SORT_KEYS)


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
    "new_frame",
    "classify",
    "decode_frame",
    "decode_result",
    "rpc_error",
    "rpc_error_fields",
    "plain_int",
    "undecodable",
    "kind_code",
    "fast_reply_decode",
    "fast_envelope_decode",
    "FastReplyError",
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
