# cython: annotation_typing=False
"""The hot path: frame decoding, reply correlation, result decoding, request encoding.

Compiled by Cython (pure-Python mode; declarations in ``codec.pxd``). The same file runs
unchanged as Python when the build skips compilation.

Frames are either the xiaozhi envelope ``{"session_id", "type": "mcp", "payload"}`` or
bare JSON-RPC 2.0 (stdio and serial transports); envelopes of other types (``hello``,
``listen``, ...) are passed up untouched. JSON is parsed and written by orjson; replies
to pending requests are decoded straight into the waiting future without building any
intermediate object.

What stock xiaozhi devices send is accepted: error objects without ``code``, numeric ids
only, ``nextCursor`` holding the next tool's name, results carrying only text content.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import types
import weakref
from typing import Any, Optional, Union

import cython
import orjson

from mcpgen import __version__ as _MCPGEN_VERSION
from mcpgen.protocol import DEFAULT_PROTOCOL_VERSION
from mcpgen.runtime.errors import McpDeviceError, ProtocolError, RpcError, ToolError
from mcpgen.runtime.stock_replies import salvage_reply_id as _salvage_reply_id
from mcpgen.runtime.stock_replies import stock_image as _stock_image
from mcpgen.runtime.stock_replies import unparsable_reply_error as _unparsable_reply_error

_loads = orjson.loads
_dumps = orjson.dumps
_JSONDecodeError = orjson.JSONDecodeError

# The reply fast path (see RpcSession._feed_reply): msgspec decodes a tools/call reply
# straight into small typed Structs, which measured ~1.0x orjson.loads for the whole
# parse + id match + decode + future against ~1.9x for orjson's dicts plus our lookups
# (benchmarks/gw_decode.py). Anything it does not model goes the general orjson way.
try:
    import msgspec as _msgspec
except ImportError:  # optional: the general path handles everything alone
    _msgspec = None  # type: ignore[assignment]  # (mypy: a module, msgspec is a dependency)

# The Structs below are made at run time (defstruct): mypy knows neither their fields nor
# what the decoder returns, so the fast path is typed Any.
_fast_decode: Any  # None without msgspec
_FastError: type[Exception]

if _msgspec is not None:
    # gc=False: the decoded Structs are never in a reference cycle (JSON has none), so
    # they stay out of the cyclic GC (no tracking, and fewer collections per reply).
    # Only the fields the fast path reads are declared: msgspec skips the others without
    # building them (a content item's "type" is not needed to take its "text").
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
    _Outer = _msgspec.defstruct(
        "_Outer",
        [
            ("type", Any, None),
            ("payload", Optional[_Inner], None),
            ("id", Any, None),
            ("method", Any, None),
            ("result", Optional[_Result], None),
            ("error", Optional[_Err], None),
        ],
        gc=False,
    )
    _fast_decode = _msgspec.json.Decoder(_Outer).decode
    _FastError = _msgspec.MsgspecError
else:
    _fast_decode = None
    _FastError = Exception

# Resolving the caller's future: for the C-implemented asyncio.Future (what every event
# loop's create_future returns) the unbound methods are called directly, which skips the
# per-call attribute lookup; a future that is already done (its caller was cancelled
# between the reply's arrival and forget()) raises InvalidStateError, which is ignored.
_Future = asyncio.Future
_future_set_result = asyncio.Future.set_result
_future_set_exception = asyncio.Future.set_exception
_InvalidStateError = asyncio.InvalidStateError
_exc_new = BaseException.__new__

# "absent" for dict.get, where JSON null is a value
_MISSING = object()
_INF = float("inf")
_ID_FLOAT_MAX = 1e18  # a float id beyond this is not one of ours (ids are < 2**63)


def _compiled() -> bool:
    """True in the Cython build (its functions are not interpreted Python functions)."""
    return not isinstance(_compiled, types.FunctionType)


_COMPILED = _compiled()

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
}

# Frame classes returned by decode_frame / RpcSession.feed.
FRAME_INVALID = 0  # not JSON, not an object, or not JSON-RPC
FRAME_REQUEST = 1  # has id and method (a device-initiated request)
FRAME_NOTIFICATION = 2  # method without id
FRAME_RESULT = 3  # id and result
FRAME_ERROR = 4  # error (with id, or id null)
FRAME_OTHER = 5  # an envelope whose type is not "mcp" (hello, listen, ...)

PROTOCOL_VERSION = DEFAULT_PROTOCOL_VERSION  # what `initialize` asks for (mcpgen.protocol)

# C-level copies used by the compiled hot path (declared in codec.pxd).
_K_RAW = KIND_RAW
_K_AUTO = KIND_AUTO
_K_NONE = KIND_NONE
_K_BOOLEAN = KIND_BOOLEAN
_K_INTEGER = KIND_INTEGER
_K_NUMBER = KIND_NUMBER
_K_STRING = KIND_STRING
_K_OBJECT = KIND_OBJECT
_K_IMAGE = KIND_IMAGE
_F_INVALID = FRAME_INVALID
_F_REQUEST = FRAME_REQUEST
_F_NOTIFICATION = FRAME_NOTIFICATION
_F_RESULT = FRAME_RESULT
_F_ERROR = FRAME_ERROR
_F_OTHER = FRAME_OTHER

_EMPTY = b""
_CALL_CLOSE_BARE = b"}}"
_CALL_CLOSE_ENV = b"}}}"


def kind_code(kind: Optional[str]) -> int:
    """The ``KIND_*`` code of a spec return kind name (``None`` -> ``KIND_AUTO``)."""
    if kind is None:
        return _K_AUTO
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown return kind {kind!r}") from None


class Image:
    """An image returned by a tool: MIME type and base64 data (decoded on first use)."""

    def __init__(self, mime_type: str, data_base64: str) -> None:
        self.mime_type = mime_type
        self.data_base64 = data_base64
        self._data: Optional[bytes] = None

    @property
    def data(self) -> bytes:
        """The decoded image bytes."""
        d = self._data
        if d is None:
            d = base64.b64decode(self.data_base64)
            self._data = d
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Image):
            return NotImplemented
        return self.mime_type == other.mime_type and self.data_base64 == other.data_base64

    def __hash__(self) -> int:
        return hash((self.mime_type, self.data_base64))

    def __repr__(self) -> str:
        return f"Image({self.mime_type!r}, {len(self.data_base64)} base64 chars)"


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


def _frame(
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
        return _frame(_F_INVALID)
    return _classify(msg)


def _classify(msg: object) -> Frame:
    if type(msg) is not dict:
        return _frame(_F_INVALID, None, None, None, None, None, None, None, msg)
    env = msg
    etype = env.get("type")
    sid = None
    payload = env
    if etype is not None:
        sid = env.get("session_id")
        if etype != "mcp":
            return _frame(_F_OTHER, etype, sid, None, None, None, None, None, msg)
        inner = env.get("payload")
        if type(inner) is not dict:
            return _frame(_F_INVALID, etype, sid, None, None, None, None, None, msg)
        payload = inner
    rid = payload.get("id")
    method = payload.get("method")
    if method is not None:
        if type(method) is not str:
            return _frame(_F_INVALID, etype, sid, rid, None, None, None, None, msg)
        if rid is None:
            return _frame(_F_NOTIFICATION, etype, sid, None, method, payload.get("params"), None, None, msg)
        return _frame(_F_REQUEST, etype, sid, rid, method, payload.get("params"), None, None, msg)
    if "result" in payload:
        return _frame(_F_RESULT, etype, sid, rid, None, None, payload["result"], None, msg)
    if "error" in payload:
        return _frame(_F_ERROR, etype, sid, rid, None, None, None, payload["error"], msg)
    return _frame(_F_INVALID, etype, sid, rid, None, None, None, None, msg)


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


def _rpc_error_fields(code: object, msg: object, data: object) -> RpcError:
    """:func:`rpc_error` of an error object already split into its fields (the fast path)."""
    if type(code) is not int and (isinstance(code, bool) or not isinstance(code, int)):
        code = None
    return _new_rpc_error(code, msg if isinstance(msg, str) else str(msg), data)


def _new_rpc_error(code: Optional[int], message: str, data: object) -> RpcError:
    """``RpcError(code, message, data)`` without running its interpreted ``__init__``.

    The object is the same as the constructor's (``args``, ``code``, ``message``,
    ``data``; tests/runtime check it): on the decode hot path the Python-level
    ``__init__`` and ``super().__init__`` cost more than parsing the reply.
    """
    if code is None:
        text = message
    elif -2147483648 <= code <= 2147483647:  # JSON-RPC codes: formatted as a C int when compiled
        icode = code
        text = f"[{icode}] {message}"
    else:
        text = f"[{code}] {message}"
    exc = _exc_new(RpcError, text)
    exc.code = code
    exc.message = message
    exc.data = data
    return exc


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
    exc = _exc_new(ToolError, message)
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
    return item


def _decode_text_kind(content: object, kind: int) -> object:
    text = _content_text(content)
    if text is None:
        raise ProtocolError("expected text content in the tool result")
    if kind == _K_STRING:
        return text
    if kind == _K_BOOLEAN:
        if text == "true":
            return True
        if text == "false":
            return False
        low = text.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ProtocolError(f"expected a boolean result, got {_preview(text)}")
    if kind == _K_INTEGER:
        try:
            return int(text)
        except ValueError:  # also: more digits than sys.get_int_max_str_digits() allows
            pass
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
        try:
            return float(text)
        except ValueError:
            raise ProtocolError(f"expected a number result, got {_preview(text)}") from None
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
                        s = text
                        if kind == _K_STRING:
                            return s
                        if kind == _K_BOOLEAN:
                            if s == "true":
                                return True
                            if s == "false":
                                return False
                        elif kind == _K_INTEGER:
                            if _COMPILED:
                                n = _plain_int(s)
                                if n is not None:
                                    return n
                            try:
                                return int(s)
                            except ValueError:
                                pass
                        else:
                            try:
                                return float(s)
                            except ValueError:
                                pass
        return _decode_text_kind(content, kind)
    if kind == _K_IMAGE:
        return _image(content)
    # _K_AUTO
    sc = res.get("structuredContent")
    if sc is not None:
        return sc
    if type(content) is not list or not content:
        return None
    if len(content) == 1:
        return _auto_item(content[0])
    return [_auto_item(x) for x in content]


def _plain_int(s: str) -> Optional[int]:
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


def _resolve(fut: Any, value: object) -> None:
    """Completes ``fut`` with ``value`` unless it is already done (its caller gave up)."""
    if type(fut) is _Future:
        try:
            _future_set_result(fut, value)
        except _InvalidStateError:
            pass
    elif not fut.done():
        fut.set_result(value)


def _reject(fut: Any, exc: BaseException) -> None:
    """Fails ``fut`` with ``exc`` unless it is already done."""
    if type(fut) is _Future:
        try:
            _future_set_exception(fut, exc)
        except _InvalidStateError:
            pass
    elif not fut.done():
        fut.set_exception(exc)


class Pending:
    """A request waiting for its reply: the future to resolve and how to decode.

    Also one reusable slot of a :class:`RpcSession`'s pending table (``rid`` 0: free) and,
    for calls with a deadline, what the loop's :class:`Deadlines` sweep needs to expire
    it (``due``, ``timeout``, ``owner``, ``what``): a call allocates no table entry and
    no timer entry of its own.
    """

    def __init__(self, future: Any, kind: int) -> None:
        self.future = future
        self.kind = kind
        self.rid = 0
        self.due = -1.0
        self.timeout = 0.0
        self.owner: Any = None
        self.what: Any = None


def _free_slot() -> Pending:
    return Pending(None, 0)


#: Largest id kept in the ring (bigger ints, and strings, go to the overflow dict).
_RID_MAX = 1 << 62
#: The ring grows (doubling, rehashing its live slots) while it holds fewer than this
#: many slots per live call; past it a colliding id goes to the overflow dict, so one
#: slow call pinned in a slot cannot make the ring grow with every later id.
_RING_SPARE = 4
_RING_MAX = 4096


#: ``tools/call`` heads by tool name, shared by every session of the process: a call reads
#: one small dict that stays in the CPU's cache (one per session was a cache miss per call
#: with many devices, and a dict per device). Bounded: names past it are encoded per call.
_HEADS: dict = {}
_ERROR_KEY = b'"error"'  # the fast path also decodes error replies, whatever the call's kind
if not cython.compiled:  # the compiled build calls libc's memmem (declared in codec.pxd)
    memmem: Any = None


def _has_error_key(data: bytes) -> bool:
    """Whether ``data`` contains ``"error"``: a test before choosing the decoder.

    The compiled build asks libc's ``memmem``: ``bytes.__contains__`` costs about 200 ns
    on a 200-byte frame (CPython 3.11), more than the decode it would save.
    """
    if cython.compiled:
        key = cython.cast(cython.p_const_char, _ERROR_KEY)
        return memmem(cython.cast(cython.p_const_char, data), len(data), key, 7) != cython.NULL
    return _ERROR_KEY in data

_HEADS_MAX = 4096


class RpcSession:
    """Per-session request ids, pending-reply table and frame encoder.

    Ids start at 1 and only grow: an id is never reused within a session. With a
    ``session_id`` frames are xiaozhi envelopes, without one bare JSON-RPC. The table
    of pending requests reuses its slots: a call in flight allocates nothing there.
    """

    def __init__(self, session_id: Optional[str] = None) -> None:
        # The pending table: a ring of reusable slots indexed by ``id & _mask`` (ids only
        # grow, so calls in flight rarely collide), plus an overflow dict (created on
        # first use) for colliding ids, ids that are not ours and non-integer ids.
        # The first slot is also kept in _slot0: while the ring has one slot (one call
        # in flight, the common case) a call reads it without the list (two cache lines
        # fewer per lookup with many devices).
        self._slot0 = _free_slot()
        self._slots: list = [self._slot0]
        self._mask = 0
        self._live = 0
        # Pending calls of a kind the msgspec fast path decodes (none..string): with none
        # (e.g. only object or tools/list calls in flight) a reply that is no error goes
        # straight to the general path instead of being parsed twice.
        self._fast_live = 0
        self._extra: Optional[dict] = None
        self._timed = False  # on the loop's Deadlines sweep list
        self.next_id = 1
        self.last_id = 0
        self.stale = 0
        self._set_framing(session_id)

    def _set_framing(self, session_id: Optional[str]) -> None:
        self.session_id = session_id
        if session_id is None:
            self._env_open = _EMPTY
            self._env_close = _EMPTY
        else:
            self._env_open = b'{"session_id":' + _dumps(session_id) + b',"type":"mcp","payload":'
            self._env_close = b"}"
        self._req_open = self._env_open + b'{"jsonrpc":"2.0","id":'
        self._call_close = _CALL_CLOSE_BARE if session_id is None else _CALL_CLOSE_ENV  # shared

    def set_session_id(self, session_id: Optional[str]) -> None:
        """Switches framing (envelope with this id, or bare when ``None``)."""
        self._set_framing(session_id)

    @property
    def enveloped(self) -> bool:
        return self.session_id is not None

    def _take_id(self) -> int:
        rid = self.next_id
        self.next_id = rid + 1
        self.last_id = rid
        return rid

    # -- encoding ---------------------------------------------------------------------

    def tools_call(self, name: str, arguments: object) -> bytes:
        """Encodes ``tools/call`` with a fresh id (``last_id``); ``arguments`` must be a dict."""
        head = _HEADS.get(name)
        if head is None:
            head = b',"method":"tools/call","params":{"name":' + _dumps(name) + b',"arguments":'
            if len(_HEADS) < _HEADS_MAX:
                _HEADS[name] = head
        rid = self._take_id()
        return b"".join((self._req_open, f"{rid}".encode(), head, _dumps(arguments), self._call_close))

    def request(self, method: str, params: object = None) -> bytes:
        """Encodes a request with a fresh id (``last_id``)."""
        rid = self._take_id()
        if params is None:
            body = b',"method":' + _dumps(method) + b"}"
        else:
            body = b',"method":' + _dumps(method) + b',"params":' + _dumps(params) + b"}"
        return b"".join((self._req_open, f"{rid}".encode(), body, self._env_close))

    def notification(self, method: str, params: object = None) -> bytes:
        """Encodes a notification (no id)."""
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self._env_open + _dumps(msg) + self._env_close

    def initialize(
        self,
        client_name: str = "mcpgen-runtime",
        client_version: str = _MCPGEN_VERSION,
        vision_url: Optional[str] = None,
        vision_token: Optional[str] = None,
        protocol_version: str = PROTOCOL_VERSION,
    ) -> bytes:
        """Encodes ``initialize`` (with the optional xiaozhi ``vision`` capability)."""
        caps: dict = {}
        if vision_url is not None:
            caps["vision"] = {"url": vision_url, "token": vision_token or ""}
        return self.request(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "capabilities": caps,
                "clientInfo": {"name": client_name, "version": client_version},
            },
        )

    def initialized(self) -> bytes:
        return self.notification("notifications/initialized")

    def tools_list(self, cursor: str = "", with_user_tools: bool = True) -> bytes:
        return self.request("tools/list", {"cursor": cursor, "withUserTools": with_user_tools})

    def ping(self) -> bytes:
        return self.request("ping")

    def cancelled(self, request_id: int, reason: Optional[str] = None) -> bytes:
        params: dict = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        return self.notification("notifications/cancelled", params)

    # -- correlation --------------------------------------------------------------------

    def _ring_index(self, request_id: object) -> int:
        """The ring slot index of ``request_id``, or -1 when it is not ring-kept."""
        # Literal bounds: the compiled build compares the int object with C constants.
        if type(request_id) is int and request_id > 0 and request_id <= 4611686018427387904:
            rid = request_id
            return rid & self._mask
        return -1

    def _grow(self) -> None:
        """Doubles the ring; live slots keep their objects (distinct before, distinct after)."""
        old = self._slots
        n = len(old) * 2
        mask = n - 1
        slots: list = [None] * n
        for x in old:
            p = x
            if p.rid != 0:
                slots[p.rid & mask] = p
        for i in range(n):
            if slots[i] is None:
                slots[i] = _free_slot()
        self._slots = slots
        self._slot0 = slots[0]
        self._mask = mask

    def _put(self, request_id: object, future: Any, kind: int) -> Pending:
        """Registers ``future`` for ``request_id`` in a free ring slot or the overflow dict."""
        if self._ring_index(request_id) >= 0:
            p = self._put_rid(request_id, future, kind)  # type: ignore[arg-type]
            if p is not None:
                if self._extra:  # registered again after it overflowed: one entry only
                    self._extra_pop(request_id)
                return p
        q = Pending(future, kind)
        if self._extra is None:
            self._extra = {}
        else:
            self._extra_pop(request_id)
        self._extra[request_id] = q
        if _K_NONE <= kind <= _K_STRING:
            self._fast_live += 1
        return q

    def _extra_pop(self, request_id: object) -> Optional[Pending]:
        """Removes ``request_id`` from the overflow dict (keeps ``_fast_live`` right)."""
        q = self._extra.pop(request_id, None)  # type: ignore[union-attr]
        if q is not None and _K_NONE <= q.kind <= _K_STRING:
            self._fast_live -= 1
        return q

    def _put_rid(self, rid: int, future: Any, kind: int) -> Optional[Pending]:
        """The ring part of :meth:`_put` (``rid`` in 1.._RID_MAX); None: the slot is taken."""
        p = self._slot0 if self._mask == 0 else self._slots[rid & self._mask]
        if p.rid != 0 and p.rid != rid:
            n = len(self._slots)
            if n < _RING_MAX and n < _RING_SPARE * (self._live + 1):
                self._grow()
                p = self._slots[rid & self._mask]
        if p.rid == 0:
            p.rid = rid
            p.future = future
            p.kind = kind
            self._live += 1
            if _K_NONE <= kind <= _K_STRING:
                self._fast_live += 1
            return p
        if p.rid == rid:  # registered again: the newer future wins, as in a dict
            p.future = future
            if _K_NONE <= p.kind <= _K_STRING:
                self._fast_live -= 1
            if _K_NONE <= kind <= _K_STRING:
                self._fast_live += 1
            p.kind = kind
            p.due = -1.0
            return p
        return None

    def _find(self, request_id: object) -> Optional[Pending]:
        i = self._ring_index(request_id)
        if i >= 0:
            rid = request_id
            p = self._slot0 if self._mask == 0 else self._slots[i]
            if p.rid == rid:
                return p
        if self._extra:
            return self._extra.get(request_id)
        return None

    def _take(self, request_id: object) -> Optional[Pending]:
        """Removes ``request_id``; returns its entry (a ring slot: read it before the next put)."""
        i = self._ring_index(request_id)
        if i >= 0:
            rid = request_id
            p = self._slot0 if self._mask == 0 else self._slots[i]
            if p.rid == rid:
                self._release(p)
                return p
        if self._extra:
            return self._extra_pop(request_id)
        return None

    def _release(self, p: Pending) -> None:
        """Frees a ring slot (the future stays readable until the slot's next use)."""
        p.rid = 0
        p.due = -1.0
        p.owner = None
        p.what = None
        self._live -= 1
        if _K_NONE <= p.kind <= _K_STRING:
            self._fast_live -= 1

    def _take_future(self, p: Pending) -> Any:
        fut = p.future
        p.future = None
        return fut

    def expect(self, request_id: int, future: Any, kind: int) -> None:
        """Registers ``future`` to receive the decoded reply to ``request_id``."""
        self._put(request_id, future, kind)

    def call(self, name: str, arguments: object, future: Any, kind: int) -> bytes:
        """:meth:`tools_call` + :meth:`expect` in one step."""
        data = self.tools_call(name, arguments)
        if self._put_rid(self.last_id, future, kind) is None:
            self._put(self.last_id, future, kind)
        return data

    def call_encoded(self, tail: bytes, future: Any, kind: int) -> bytes:
        """:meth:`call` with the bytes after the id prebuilt (:func:`tools_call_tail`): a
        fan-out encodes its arguments once and only the id and envelope differ per session."""
        rid = self._take_id()
        data = b"".join((self._req_open, f"{rid}".encode(), tail, self._call_close))
        if self._put_rid(rid, future, kind) is None:
            self._put(rid, future, kind)
        return data

    def is_pending(self, request_id: object) -> bool:
        """True while ``request_id`` waits for its reply."""
        return self._find(request_id) is not None

    @property
    def pending(self) -> dict:
        """A snapshot ``{request id: Pending}`` of the requests waiting for replies."""
        out: dict = {}
        for x in self._slots:
            p = x
            if p.rid != 0:
                out[p.rid] = p
        if self._extra:
            out.update(self._extra)
        return out

    def forget(self, request_id: int) -> bool:
        """Drops a pending request (its reply, if it comes, is ignored)."""
        p = self._take(request_id)
        if p is None:
            return False
        p.future = None
        return True

    def fail(self, request_id: Union[int, str], exc: BaseException) -> bool:
        """Ends one pending request with ``exc``; False when it was no longer pending."""
        p = self._take(request_id)
        if p is None:
            return False
        _reject(self._take_future(p), exc)
        return True

    def fail_all(self, exc: BaseException) -> int:
        """Ends every pending request with ``exc``; returns how many there were."""
        futs = []
        for x in self._slots:
            p = x
            if p.rid != 0:
                self._release(p)
                futs.append(self._take_future(p))
        if self._extra:
            for q in self._extra.values():
                futs.append(q.future)
            self._extra = None
        self._fast_live = 0
        for fut in futs:
            _reject(fut, exc)
        return len(futs)

    @property
    def ring_slots(self) -> int:
        """Slots in the pending table's ring (it grows only while calls in flight collide)."""
        return len(self._slots)

    @property
    def pending_count(self) -> int:
        return self._live + (len(self._extra) if self._extra else 0)

    # -- decoding -----------------------------------------------------------------------

    def feed(self, data: Union[bytes, bytearray, memoryview, str]) -> Optional[Frame]:
        """Decodes one incoming frame.

        A reply to a pending request resolves that request's future (value or typed
        error) and returns ``None``; so does a late reply to a forgotten request
        (counted in ``stale``). Everything else is returned as a :class:`Frame`.
        """
        if (
            _fast_decode is not None
            and (self._fast_live > 0 or type(data) is not bytes or _has_error_key(data))
            and self._feed_reply(data)
        ):
            return None
        try:
            obj = _loads(data)
        except _JSONDecodeError:
            if self.pending_count and self._fail_unparsable(data):
                return None
            return _frame(_F_INVALID)
        if type(obj) is not dict:
            return _frame(_F_INVALID, None, None, None, None, None, None, None, obj)
        msg = obj
        etype = msg.get("type")
        if etype is None:
            payload = msg
        elif etype == "mcp":
            inner = msg.get("payload")
            if type(inner) is not dict:
                return _frame(_F_INVALID, "mcp", msg.get("session_id"), None, None, None, None, None, msg)
            payload = inner
        else:
            return _classify(msg)
        rid = payload.get("id")
        if rid is None or "method" in payload:
            return _classify(msg)
        trid = type(rid)
        if trid is not int and trid is not str and trid is not float:
            # JSON-RPC ids are numbers or strings. A list or an object is unhashable and
            # true would match request 1 (True == 1): such a reply answers nothing of ours.
            return _frame(_F_INVALID, etype, msg.get("session_id"), rid, None, None, None, None, msg)
        p = self._take(rid)
        if p is None:
            p = self._pop_coerced(rid)
            if p is None:
                self.stale += 1
                if "error" in payload:
                    return _classify(msg)
                return None
        # A future that is already done (its caller was cancelled and has not called
        # forget() yet) is skipped by _resolve/_reject.
        fut = self._take_future(p)
        result = payload.get("result", _MISSING)
        if result is not _MISSING:
            try:
                value = decode_result(result, p.kind)
            except McpDeviceError as exc:  # ToolError / ProtocolError reach the caller
                _reject(fut, exc)
                return None
            except Exception as exc:  # a decoding bug must still end the call with a typed error
                _reject(fut, _undecodable(exc))
                return None
            _resolve(fut, value)
            return None
        err = payload.get("error", _MISSING)
        if err is not _MISSING:
            _reject(fut, rpc_error(err))
        else:
            _reject(fut, ProtocolError("reply has neither result nor error"))
        return None

    def _fail_unparsable(self, data: Union[bytes, bytearray, memoryview, str]) -> bool:
        """A frame that is not JSON but shows the id of a pending call (a stock device's
        unescaped error message): that call fails at once (runtime.stock_replies)."""
        rid = _salvage_reply_id(data)
        if rid is None:
            return False
        return self.fail(rid, _unparsable_reply_error(data, rid))

    def _feed_reply(self, data: Union[bytes, bytearray, memoryview, str]) -> bool:
        """The common reply, decoded by msgspec: True when handled, False to take the general path.

        Handled here: a result for a pending call (integer id) of a scalar return kind
        whose content is one text item, and any error object for a pending call. Nothing
        is changed before the reply is known to be handled, so the general path sees
        every other frame exactly as if this did not exist.
        """
        try:
            m = _fast_decode(data)
        except _FastError:
            return False
        except (TypeError, ValueError):  # invalid UTF-8 inside a string, lone surrogates...
            return False
        etype = m.type
        if etype is not None:
            if etype != "mcp":
                return False
            m = m.payload
            if m is None:
                return False
        if m.method is not None:
            return False
        rid = m.id
        if type(rid) is not int:
            return False
        p = self._find(rid)
        if p is None:
            return False
        res = m.result
        if res is None:
            err = m.error
            if err is None:
                return False
            _reject(self._drop(p, rid), _rpc_error_fields(err.code, err.message, err.data))
            return True
        kind = p.kind
        if kind == _K_NONE:
            if res.isError is True:
                return False
            _resolve(self._drop(p, rid), None)
            return True
        if kind != _K_BOOLEAN and kind != _K_STRING and kind != _K_INTEGER and kind != _K_NUMBER:
            return False
        if res.isError is True:
            return False
        content = res.content
        if content is None or len(content) != 1:
            return False
        text = content[0].text
        if type(text) is not str:
            return False
        s = text
        value: object
        if kind == _K_STRING:
            value = s
        elif kind == _K_BOOLEAN:
            if s == "true":
                value = True
            elif s == "false":
                value = False
            else:
                return False
        elif kind == _K_INTEGER:
            value = _plain_int(s) if _COMPILED else None
            if value is None:
                try:
                    value = int(s)
                except ValueError:  # also more digits than int() takes: the general path says why
                    return False
        else:
            try:
                value = float(s)
            except ValueError:
                return False
        _resolve(self._drop(p, rid), value)
        return True

    def _drop(self, p: Pending, rid: object) -> Any:
        """Removes the entry ``p`` found for ``rid``; returns its future."""
        if p.rid != 0:
            self._release(p)
        else:
            self._extra_pop(rid)
        return self._take_future(p)

    def _pop_coerced(self, rid: object) -> Optional[Pending]:
        """Some peers echo numeric ids as strings (or 3.0): match them anyway.

        Only ASCII digits count (``"²".isdigit()`` is true but ``int("²")`` fails) and only
        as many as an id can have; a float must be finite and whole.
        """
        key = None
        if type(rid) is str:
            s = rid
            if 0 < len(s) <= 18 and s.isascii() and s.isdigit():
                key = int(s)
        elif type(rid) is float:
            f = rid
            if -_ID_FLOAT_MAX < f < _ID_FLOAT_MAX and f == int(f):
                key = int(f)
        if key is None:
            return None
        return self._take(key)


class Deadlines:
    """Call deadlines for every session on one event loop: a coarse periodic sweep.

    One timer per loop instead of one ``call_later`` per call. A call made through
    :meth:`CallSite.call` keeps its deadline in its own pending-table slot (:meth:`add_call`):
    nothing is allocated per call; the session joins this loop's list once, and the
    sweep (every ``resolution`` seconds while sessions or entries exist) scans the
    listed sessions' slots only when the earliest deadline it knows of is due, so
    answered calls cost nothing here. :meth:`add` is the general form (any owner and
    request id): a small entry in the bucket of the sweep tick that follows its
    deadline. Both hand due calls to ``owner._expire(request_id, timeout, what)``,
    within ``resolution`` after they are due.
    """

    def __init__(self, loop: Any, resolution: float = 0.05) -> None:
        self._loop = loop
        self._time = loop.time
        self.resolution = resolution
        self._buckets: dict = {}
        self._last = 0
        self._handle: Any = None
        self._sessions: list = []
        self._next_due = _INF

    def add(
        self, timeout: float, owner: Any, request_id: object, what: object, pending: Any = None
    ) -> None:
        """Arranges ``owner._expire(request_id, timeout, what)`` at ``timeout`` seconds from now.

        With ``pending`` (the call's :class:`RpcSession`, or a dict of pending ids) the
        sweep skips the call by itself when ``request_id`` is no longer pending there
        (answered, cancelled or failed).
        """
        res = self.resolution
        tick = int((self._time() + timeout) / res) + 1
        bucket = self._buckets.get(tick)
        if bucket is None:
            bucket = []
            self._buckets[tick] = bucket
        bucket.append((owner, request_id, timeout, what, pending))
        if self._handle is None:
            self._start()

    def add_call(
        self, session: RpcSession, request_id: int, timeout: float, owner: Any, what: object
    ) -> None:
        """The deadline of a call :meth:`RpcSession.call` just registered (no allocation)."""
        p = None
        if request_id > 0:  # ids of ours (next_id only grows) fit the ring
            p = session._slot0 if session._mask == 0 else session._slots[request_id & session._mask]
        if p is None or p.rid != request_id:  # in the overflow dict: the general form
            self.add(timeout, owner, request_id, what, session)
            return
        due = self._time() + timeout
        p.due = due
        p.timeout = timeout
        p.owner = owner
        p.what = what
        if due < self._next_due:
            self._next_due = due
        if not session._timed:
            session._timed = True
            self._sessions.append(session)
        if self._handle is None:
            self._start()

    def _start(self) -> None:
        self._last = int(self._time() / self.resolution)
        self._handle = self._loop.call_later(self.resolution, self._sweep)

    @property
    def scheduled(self) -> int:
        """Entries waiting for their tick (answered calls included) plus timed calls in flight."""
        n = 0
        for b in self._buckets.values():
            n += len(b)
        return n + self._count_timed()

    def _count_timed(self) -> int:
        n = 0
        for x in self._sessions:
            s = x
            for y in s._slots:
                p = y
                if p.rid != 0 and p.due >= 0:
                    n += 1
        return n

    def _sweep(self) -> None:
        self._handle = None
        t = self._time()
        now = int(t / self.resolution)
        tick = self._last + 1
        buckets = self._buckets
        while tick <= now:
            due = buckets.pop(tick, None)
            if due is not None:
                for entry in due:
                    table = entry[4]
                    if table is not None:
                        if type(table) is dict:
                            if entry[1] not in table:
                                continue
                        elif not table.is_pending(entry[1]):
                            continue  # answered in time: the common case, no Python call
                    try:
                        entry[0]._expire(entry[1], entry[2], entry[3])
                    except Exception:  # one owner's bug must not stop the others' deadlines
                        _log_exception("deadline handler of %r failed", entry[0])
            tick += 1
        self._last = now
        if t >= self._next_due:
            self._scan(t)
        if (buckets or self._sessions) and not self._loop.is_closed():
            self._handle = self._loop.call_later(self.resolution, self._sweep)

    def _scan(self, t: float) -> None:
        """Expires the listed sessions' due calls; drops sessions with nothing in flight."""
        keep: list = []
        expired: list = []
        nxt = _INF
        for x in self._sessions:
            s = x
            if s._live == 0:
                s._timed = False
                continue
            keep.append(s)
            for y in s._slots:
                p = y
                if p.rid == 0 or p.due < 0:
                    continue
                if p.due <= t:
                    expired.append((p.owner, p.rid, p.timeout, p.what))
                    p.due = -1.0  # once: the owner fails it, or it was answered meanwhile
                elif p.due < nxt:
                    nxt = p.due
        self._sessions = keep
        self._next_due = nxt
        for entry in expired:
            try:
                entry[0]._expire(entry[1], entry[2], entry[3])
            except Exception:  # one owner's bug must not stop the others' deadlines
                _log_exception("deadline handler of %r failed", entry[0])

    def prune(self) -> int:
        """Drops the listed sessions with no call in flight; returns how many.

        A session stays listed (and so referenced, with its pending table) until a scan
        finds it idle, and a scan runs only when a deadline is due: up to a call timeout
        after its device left. After a mass departure that pins thousands of dead
        sessions, spread over CPython's arenas, past the moment the memory is trimmed
        (issue 18); :class:`mcpgen.runtime.memtrim.Trimmer` prunes before it trims.
        """
        keep: list = []
        n = 0
        for x in self._sessions:
            s = x
            if s._live == 0:
                s._timed = False
                n += 1
            else:
                keep.append(s)
        self._sessions = keep
        return n

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._buckets.clear()
        for x in self._sessions:
            s = x
            s._timed = False
        self._sessions = []
        self._next_due = _INF


_deadlines: Any = weakref.WeakKeyDictionary()
_CancelledError = asyncio.CancelledError


class CallSite:
    """One device's compiled ``tools/call`` path over a transport that sends without waiting.

    :meth:`Device.invoke <mcpgen.runtime.device.Device.invoke>` (and the generated
    bindings, through :attr:`Device.invoker <mcpgen.runtime.device.Device.invoker>`) run
    :meth:`call`: one compiled coroutine per call, and nothing happens before it is
    awaited. ``owner`` is the Device: its ``_closed``, ``call_timeout``,
    ``_disconnected()``, ``_send_failed(exc)`` and ``_send_cancelled(rid, reason)`` are
    read only when a call starts or ends badly.
    """

    def __init__(
        self, session: RpcSession, loop: Any, deadlines: Deadlines, owner: Any, send_now: Any
    ) -> None:
        self.session = session
        self.deadlines = deadlines
        self.owner = owner
        self._create_future = loop.create_future
        self._send_now = send_now

    async def call(self, name: str, arguments: object, kind: int, timeout: Optional[float] = None) -> object:
        """Encodes the call, registers its future and deadline, sends, waits (as Device.invoke)."""
        owner = self.owner
        if owner._closed:
            return await owner._disconnected()
        if timeout is None:
            timeout = owner.call_timeout
        t = -1.0 if timeout is None or timeout < 0 else timeout  # < 0: no deadline
        fut = self._create_future()
        session = self.session
        data = _start_call(session, self.deadlines, owner, name, arguments, fut, kind, t)
        rid = session.last_id
        try:
            self._send_now(data)
        except Exception as exc:
            session.forget(rid)
            raise owner._send_failed(exc) from exc
        try:
            return await fut
        except _CancelledError:
            if session.forget(rid) and not owner._closed:
                owner._send_cancelled(rid, "cancelled by the client")
            raise


def _start_call(
    session: RpcSession,
    deadlines: Deadlines,
    owner: Any,
    name: str,
    arguments: object,
    fut: Any,
    kind: int,
    timeout: float,
) -> bytes:
    """Encodes the call, registers its future and its deadline (typed C calls when compiled)."""
    data = session.call(name, arguments, fut, kind)
    if timeout >= 0:
        deadlines.add_call(session, session.last_id, timeout, owner, name)
    return data


def tools_call_tail(name: str, arguments: object) -> bytes:
    """The part of a ``tools/call`` request after its id (for :meth:`RpcSession.call_encoded`)."""
    return b',"method":"tools/call","params":{"name":' + _dumps(name) + b',"arguments":' + _dumps(arguments)


def deadlines_for(loop: Any) -> Deadlines:
    """The :class:`Deadlines` of ``loop`` (created on first use)."""
    d = _deadlines.get(loop)
    if d is None:
        d = Deadlines(loop)
        _deadlines[loop] = d
    return d


def _log_exception(msg: str, arg: object) -> None:
    logging.getLogger("mcpgen.runtime.codec").exception(msg, arg)


def _undecodable(exc: BaseException) -> ProtocolError:
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
    "KINDS",
    "FRAME_INVALID",
    "FRAME_REQUEST",
    "FRAME_NOTIFICATION",
    "FRAME_RESULT",
    "FRAME_ERROR",
    "FRAME_OTHER",
    "PROTOCOL_VERSION",
    "Image",
    "Frame",
    "Pending",
    "RpcSession",
    "Deadlines",
    "deadlines_for",
    "CallSite",
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
]
