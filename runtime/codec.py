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

import orjson

from mcpgen.runtime.errors import McpDeviceError, ProtocolError, RpcError, ToolError
from mcpgen.runtime.stock_replies import salvage_reply_id as _salvage_reply_id
from mcpgen.runtime.stock_replies import stock_image as _stock_image
from mcpgen.runtime.stock_replies import unparsable_reply_error as _unparsable_reply_error

_loads = orjson.loads
_dumps = orjson.dumps
_JSONDecodeError = orjson.JSONDecodeError

# The reply fast path (see Session._feed_reply): msgspec decodes a tools/call reply
# straight into small typed Structs, which measured ~1.0x orjson.loads for the whole
# parse + id match + decode + future against ~1.9x for orjson's dicts plus our lookups
# (benchmarks/gw_decode.py). Anything it does not model goes the general orjson way.
try:
    import msgspec as _msgspec
except ImportError:  # optional: the general path handles everything alone
    _msgspec = None

if _msgspec is not None:
    _Content = _msgspec.defstruct("_Content", [("type", Any, None), ("text", Any, None)])
    _Result = _msgspec.defstruct(
        "_Result", [("content", Optional[list[_Content]], None), ("isError", Any, None)]
    )
    _Inner = _msgspec.defstruct(
        "_Inner",
        [("id", Any, None), ("method", Any, None), ("result", Optional[_Result], None), ("error", Any, None)],
    )
    _Outer = _msgspec.defstruct(
        "_Outer",
        [
            ("type", Any, None),
            ("payload", Optional[_Inner], None),
            ("id", Any, None),
            ("method", Any, None),
            ("result", Optional[_Result], None),
            ("error", Any, None),
        ],
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

# Frame classes returned by decode_frame / Session.feed.
FRAME_INVALID = 0  # not JSON, not an object, or not JSON-RPC
FRAME_REQUEST = 1  # has id and method (a device-initiated request)
FRAME_NOTIFICATION = 2  # method without id
FRAME_RESULT = 3  # id and result
FRAME_ERROR = 4  # error (with id, or id null)
FRAME_OTHER = 5  # an envelope whose type is not "mcp" (hello, listen, ...)

PROTOCOL_VERSION = "2024-11-05"

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
    """A request waiting for its reply: the future to resolve and how to decode."""

    def __init__(self, future: Any, kind: int) -> None:
        self.future = future
        self.kind = kind


class Session:
    """Per-session request ids, pending-reply table and frame encoder.

    Ids start at 1 and only grow: an id is never reused within a session. With a
    ``session_id`` frames are xiaozhi envelopes, without one bare JSON-RPC.
    """

    def __init__(self, session_id: Optional[str] = None) -> None:
        self.pending: dict[Any, Pending] = {}
        self.next_id = 1
        self.last_id = 0
        self.stale = 0
        self._heads: dict[str, bytes] = {}
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
        self._call_close = b"}}" + self._env_close

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
        head = self._heads.get(name)
        if head is None:
            head = b',"method":"tools/call","params":{"name":' + _dumps(name) + b',"arguments":'
            self._heads[name] = head
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
        client_version: str = "0.1.0",
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

    def expect(self, request_id: int, future: Any, kind: int) -> None:
        """Registers ``future`` to receive the decoded reply to ``request_id``."""
        p = Pending.__new__(Pending)
        p.future = future
        p.kind = kind
        self.pending[request_id] = p

    def call(self, name: str, arguments: object, future: Any, kind: int) -> bytes:
        """:meth:`tools_call` + :meth:`expect` in one step."""
        data = self.tools_call(name, arguments)
        p = Pending.__new__(Pending)
        p.future = future
        p.kind = kind
        self.pending[self.last_id] = p
        return data

    def forget(self, request_id: int) -> bool:
        """Drops a pending request (its reply, if it comes, is ignored)."""
        return self.pending.pop(request_id, None) is not None

    def fail(self, request_id: int, exc: BaseException) -> bool:
        """Ends one pending request with ``exc``; False when it was no longer pending."""
        p = self.pending.pop(request_id, None)
        if p is None:
            return False
        _reject(p.future, exc)
        return True

    def fail_all(self, exc: BaseException) -> int:
        """Ends every pending request with ``exc``; returns how many there were."""
        items = list(self.pending.values())
        self.pending.clear()
        for p in items:
            _reject(p.future, exc)
        return len(items)

    @property
    def pending_count(self) -> int:
        return len(self.pending)

    # -- decoding -----------------------------------------------------------------------

    def feed(self, data: Union[bytes, bytearray, memoryview, str]) -> Optional[Frame]:
        """Decodes one incoming frame.

        A reply to a pending request resolves that request's future (value or typed
        error) and returns ``None``; so does a late reply to a forgotten request
        (counted in ``stale``). Everything else is returned as a :class:`Frame`.
        """
        if _fast_decode is not None and self._feed_reply(data):
            return None
        try:
            obj = _loads(data)
        except _JSONDecodeError:
            if self.pending and self._fail_unparsable(data):
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
        p = self.pending.pop(rid, None)
        if p is None:
            p = self._pop_coerced(rid)
            if p is None:
                self.stale += 1
                if "error" in payload:
                    return _classify(msg)
                return None
        # A future that is already done (its caller was cancelled and has not called
        # forget() yet) is skipped by _resolve/_reject.
        result = payload.get("result", _MISSING)
        if result is not _MISSING:
            try:
                value = decode_result(result, p.kind)
            except McpDeviceError as exc:  # ToolError / ProtocolError reach the caller
                _reject(p.future, exc)
                return None
            except Exception as exc:  # a decoding bug must still end the call with a typed error
                _reject(p.future, _undecodable(exc))
                return None
            _resolve(p.future, value)
            return None
        err = payload.get("error", _MISSING)
        if err is not _MISSING:
            _reject(p.future, rpc_error(err))
        else:
            _reject(p.future, ProtocolError("reply has neither result nor error"))
        return None

    def _fail_unparsable(self, data: object) -> bool:
        """A frame that is not JSON but shows the id of a pending call (a stock device's
        unescaped error message): that call fails at once (runtime.stock_replies)."""
        rid = _salvage_reply_id(data)
        if rid is None:
            return False
        p = self.pending.pop(rid, None)
        if p is None:
            return False
        _reject(p.future, _unparsable_reply_error(data, rid))
        return True

    def _feed_reply(self, data: object) -> bool:
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
        p = self.pending.get(rid)
        if p is None:
            return False
        res = m.result
        if res is None:
            err = m.error
            if err is None:
                return False
            del self.pending[rid]
            _reject(p.future, rpc_error(err))
            return True
        kind = p.kind
        if kind == _K_NONE:
            if res.isError is True:
                return False
            del self.pending[rid]
            _resolve(p.future, None)
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
        del self.pending[rid]
        _resolve(p.future, value)
        return True

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
        return self.pending.pop(key, None)


class Deadlines:
    """Call deadlines for every session on one event loop: a coarse periodic sweep.

    One timer per loop instead of one ``call_later`` per call: each call appends a small
    entry to the bucket of the sweep tick that follows its deadline, and a sweep every
    ``resolution`` seconds (only while entries exist) hands the due ones to
    ``owner._expire(request_id, timeout, what)``. Entries of calls that were answered
    stay in their bucket until its tick and cost one failed pending-table lookup there:
    cheaper than creating and cancelling a timer handle per call. A deadline fires
    within ``resolution`` after it is due.
    """

    def __init__(self, loop: Any, resolution: float = 0.05) -> None:
        self._loop = loop
        self._time = loop.time
        self.resolution = resolution
        self._buckets: dict = {}
        self._last = 0
        self._handle: Any = None

    def add(
        self, timeout: float, owner: Any, request_id: object, what: object, pending: Optional[dict] = None
    ) -> None:
        """Arranges ``owner._expire(request_id, timeout, what)`` at ``timeout`` seconds from now.

        With ``pending`` (a session's pending table) the sweep skips the call by itself
        when ``request_id`` is no longer in it (answered, cancelled or failed).
        """
        res = self.resolution
        tick = int((self._time() + timeout) / res) + 1
        bucket = self._buckets.get(tick)
        if bucket is None:
            bucket = []
            self._buckets[tick] = bucket
        bucket.append((owner, request_id, timeout, what, pending))
        if self._handle is None:
            self._last = int(self._time() / res)
            self._handle = self._loop.call_later(res, self._sweep)

    @property
    def scheduled(self) -> int:
        """Entries waiting for their tick (answered calls included)."""
        n = 0
        for b in self._buckets.values():
            n += len(b)
        return n

    def _sweep(self) -> None:
        self._handle = None
        now = int(self._time() / self.resolution)
        tick = self._last + 1
        buckets = self._buckets
        while tick <= now:
            due = buckets.pop(tick, None)
            if due is not None:
                for entry in due:
                    table = entry[4]
                    if table is not None and entry[1] not in table:
                        continue  # answered in time: the common case, no Python call
                    try:
                        entry[0]._expire(entry[1], entry[2], entry[3])
                    except Exception:  # one owner's bug must not stop the others' deadlines
                        _log_exception("deadline handler of %r failed", entry[0])
            tick += 1
        self._last = now
        if buckets and not self._loop.is_closed():
            self._handle = self._loop.call_later(self.resolution, self._sweep)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._buckets.clear()


_deadlines: Any = weakref.WeakKeyDictionary()
_CancelledError = asyncio.CancelledError


async def invoke(
    session: Session,
    loop: Any,
    deadlines: Deadlines,
    owner: Any,
    send_now: Any,
    name: str,
    arguments: object,
    kind: int,
    timeout: float,
) -> object:
    """One ``tools/call`` over a transport that sends without waiting (compiled coroutine).

    What :meth:`Device.invoke <mcpgen.runtime.device.Device.invoke>` runs per call on the
    gateway: encode with a fresh id, register the future and its deadline (``timeout``
    < 0: none), send, wait. ``owner`` (the Device) turns a failed send into its
    ``DeviceDisconnected`` (``_send_failed``) and tells the device about a cancelled call
    (``_send_cancelled``).
    """
    fut = loop.create_future()
    data = session.call(name, arguments, fut, kind)
    rid = session.last_id
    if timeout >= 0:
        deadlines.add(timeout, owner, rid, name, session.pending)
    try:
        send_now(data)
    except Exception as exc:
        session.forget(rid)
        raise owner._send_failed(exc) from exc
    try:
        return await fut
    except _CancelledError:
        if session.forget(rid) and not owner._closed:
            owner._send_cancelled(rid, "cancelled by the client")
        raise


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


def encode_notification(method: str, params: object = None, session_id: Optional[str] = None) -> bytes:
    """A one-off notification frame (enveloped when ``session_id`` is given)."""
    msg: dict = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    if session_id is None:
        return _dumps(msg)
    return _dumps({"session_id": session_id, "type": "mcp", "payload": msg})


def encode_envelope(message: dict) -> bytes:
    """Any non-MCP envelope (e.g. the server ``hello``)."""
    return _dumps(message)


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
    "Session",
    "Deadlines",
    "deadlines_for",
    "invoke",
    "decode_frame",
    "decode_result",
    "rpc_error",
    "kind_code",
    "encode_notification",
    "encode_envelope",
    "loads",
    "dumps",
]
