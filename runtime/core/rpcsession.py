# cython: annotation_typing=False
"""Per-connection RPC state: request ids, the pending-reply table, the request encoder.

Compiled by Cython (pure-Python mode; declarations in ``rpcsession.pxd``, which cimports
the wire format's decoders from ``wire.pxd``: C calls between the two modules). An
:class:`RpcSession` turns calls into frames (:mod:`mcpgen.runtime.core.wire` framing) and
incoming frames into resolved futures: a reply to a pending request is decoded straight
into the waiting future without building any intermediate object.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any, Optional, Union

import cython
import orjson

from mcpgen import __version__ as _MCPGEN_VERSION
from mcpgen.runtime.core.stock_replies import salvage_reply_id as _salvage_reply_id
from mcpgen.runtime.core.stock_replies import unparsable_reply_error as _unparsable_reply_error
from mcpgen.runtime.core.wire import (
    FRAME_INVALID,
    KIND_BOOLEAN,
    KIND_INTEGER,
    KIND_NONE,
    KIND_NUMBER,
    KIND_STRING,
    PROTOCOL_VERSION,
    FastReplyError,
    fast_envelope_decode,
    fast_reply_decode,
)
from mcpgen.runtime.errors import McpDeviceError, ProtocolError

if not cython.compiled:  # the compiled build cimports these (rpcsession.pxd): C calls
    from mcpgen.runtime.core.wire import (
        Frame,
        classify,
        decode_result,
        new_frame,
        rpc_error,
        rpc_error_fields,
        text_scalar,
        undecodable,
    )

_loads = orjson.loads
_dumps = orjson.dumps
_JSONDecodeError = orjson.JSONDecodeError
_fast_decode = fast_reply_decode  # None without msgspec
_FastError = FastReplyError

# Each field of the fast path's Structs holds its own value here, so a C view that read
# a field at the wrong place would read a wrong value (rpcsession.pxd).
_LAYOUT_SAMPLE = (
    b'{"type":"T","payload":{"id":4,"method":"M","result":{"content":[{"text":"X"}],"isError":true},'
    b'"error":{"code":5,"message":"E","data":6}}}'
)


def _sized(obj: object, fields: int) -> bool:
    """Whether ``obj`` is an object header plus ``fields`` pointers, nothing else."""
    t = type(obj)
    size = object.__basicsize__ + fields * _WORD
    return t.__basicsize__ == size and not (t.__itemsize__ or t.__dictoffset__ or t.__weakrefoffset__)


def _views_match() -> bool:
    """Whether the compiled build's C views of the fast path's Structs read what msgspec
    decoded (uncompiled they are attribute reads, and this is true)."""
    e = _fast_env_decode(_LAYOUT_SAMPLE)
    if not _sized(e, 2):  # each size is checked before anything is read through its view
        return False
    m = e.payload
    if not (_sized(m, 4) and _sized(m.result, 2) and _sized(m.error, 3)):
        return False
    item = m.result.content[0]
    return (
        _sized(item, 1)
        and (e.type, m.id, m.method, m.result.isError, item.text) == ("T", 4, "M", True, "X")
        and (m.error.code, m.error.message, m.error.data) == (5, "E", 6)
        and type(_fast_decode(b"{}")) is type(m)
    )


_WORD = struct.calcsize("P")
_fast_env_decode = fast_envelope_decode
if _fast_decode is not None and not _views_match():
    _fast_decode = None  # every reply takes the general path, which reads dicts
#: Whether replies take the msgspec fast path (msgspec installed and its layout checked).
FAST_REPLIES = _fast_decode is not None

# Resolving the caller's future: for the C-implemented asyncio.Future (what every event
# loop's create_future returns) the unbound methods are called directly, which skips the
# per-call attribute lookup; a future that is already done (its caller was cancelled
# between the reply's arrival and forget()) raises InvalidStateError, which is ignored.
_Future = asyncio.Future
_future_set_result = asyncio.Future.set_result
_future_set_exception = asyncio.Future.set_exception
_InvalidStateError = asyncio.InvalidStateError

# "absent" for dict.get, where JSON null is a value
_MISSING = object()
_ID_FLOAT_MAX = 1e18  # a float id beyond this is not one of ours (ids are < 2**63)
_COMPILED = cython.compiled

# C-level copies used by the compiled hot path (declared in rpcsession.pxd).
_K_NONE = KIND_NONE
_K_BOOLEAN = KIND_BOOLEAN
_K_INTEGER = KIND_INTEGER
_K_NUMBER = KIND_NUMBER
_K_STRING = KIND_STRING
_F_INVALID = FRAME_INVALID

_EMPTY = b""
_CALL_CLOSE_BARE = b"}}"
_CALL_CLOSE_ENV = b"}}}"
# A tools/call result of one text item as the device core writes it, around the text
# (RpcSession._feed_exact); the session's _call_close follows (its envelope's brace).
_TEXT_RESULT = b',"result":{"content":[{"type":"text","text":"'
_TEXT_END = b'"}],"isError":false'


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
    for calls with a deadline, what the loop's :class:`~mcpgen.runtime.core.deadlines.Deadlines`
    sweep needs to expire it (``due``, ``timeout``, ``owner``, ``what``): a call allocates
    no table entry and no timer entry of its own.
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
if not cython.compiled:  # the compiled build calls these C functions (declared in rpcsession.pxd)
    memmem: Any = None
    memcpy: Any = None
    memcmp: Any = None
    memchr: Any = None
    PyBytes_FromStringAndSize: Any = None
    PyBytes_AS_STRING: Any = None


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


def _request_bytes(open_: bytes, rid: int, head: bytes, body: bytes, close: bytes) -> bytes:
    """``open_ + str(rid) + head + body + close``: a request's frame.

    The compiled build writes it into one new bytes object, the id's digits in place:
    ``f"{rid}".encode()`` and ``b"".join`` of a tuple cost as much as the rest of the
    encoding (issue 32). ``rid`` is one of ours: > 0.
    """
    if not cython.compiled:
        return b"".join((open_, f"{rid}".encode(), head, body, close))
    digits = cython.declare(cython.char[24])
    nd = 0
    v = rid
    while True:
        nd += 1
        digits[24 - nd] = 48 + v % 10
        v //= 10
        if v == 0:
            break
    n1 = len(open_)
    n2 = len(head)
    n3 = len(body)
    n4 = len(close)
    out = PyBytes_FromStringAndSize(cython.NULL, n1 + nd + n2 + n3 + n4)
    p = PyBytes_AS_STRING(out)
    memcpy(p, cython.cast(cython.p_const_char, open_), n1)
    p += n1
    memcpy(p, cython.address(digits[24 - nd]), nd)
    p += nd
    memcpy(p, cython.cast(cython.p_const_char, head), n2)
    p += n2
    memcpy(p, cython.cast(cython.p_const_char, body), n3)
    p += n3
    memcpy(p, cython.cast(cython.p_const_char, close), n4)
    return out


class RpcSession(Pending):
    """Per-session request ids, pending-reply table and frame encoder.

    Ids start at 1 and only grow: an id is never reused within a session. With a
    ``session_id`` frames are xiaozhi envelopes, without one bare JSON-RPC. The table
    of pending requests reuses its slots: a call in flight allocates nothing there.

    The session is itself a :class:`Pending`: the ring's only slot until two calls in
    flight collide (the common case is one call per device). With a thousand devices
    a call's session is out of the CPU cache when its next call starts and when its
    reply comes: a slot of its own was one more object to miss, twice per call.
    """

    def __init__(self, session_id: Optional[str] = None) -> None:
        Pending.__init__(self, None, 0)
        # The pending table: a ring of reusable slots indexed by ``id & _mask`` (ids only
        # grow, so calls in flight rarely collide), plus an overflow dict (created on
        # first use) for colliding ids, ids that are not ours and non-integer ids.
        # While the ring has one slot (_mask 0) that slot is the session itself and
        # _slots is None; the first collision makes a list of separate slots.
        self._slots: Any = None  # list of Pending once _mask > 0
        self._mask = 0
        self._live = 0
        # Pending calls of a kind the msgspec fast path decodes (none..string): with none
        # (e.g. only object or tools/list calls in flight) a reply that is no error goes
        # straight to the general path instead of being parsed twice.
        self._fast_live = 0
        self._extra: Optional[dict] = None
        # The last tool called and its encoded head: a repeated call skips the _HEADS lookup.
        self._head_name: Optional[str] = None
        self._head = _EMPTY
        self.on_sweep = False  # on the loop's Deadlines sweep list (runtime.core.deadlines)
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
        if name is self._head_name:  # the same tool again (the bindings pass one str object)
            head = self._head
        else:
            shared = _HEADS.get(name)
            if shared is None:
                head = b',"method":"tools/call","params":{"name":' + _dumps(name) + b',"arguments":'
                if len(_HEADS) < _HEADS_MAX:
                    _HEADS[name] = head
            else:
                head = shared
            self._head_name = name
            self._head = head
        rid = self._take_id()
        return _request_bytes(self._req_open, rid, head, _dumps(arguments), self._call_close)

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

    # The pending table's one mapping from a request id to its entry: _ring_kept says which
    # ids the ring keeps, ring_slot where in the ring, _ring_held whether that slot holds
    # the id's call now; every other id is a key of the overflow dict (_extra).

    def _ring_kept(self, request_id: object) -> bool:
        """Whether ``request_id`` is one the ring keeps (an int in 1.._RID_MAX)."""
        # Literal bound (_RID_MAX): the compiled build compares the int object with C constants.
        return type(request_id) is int and request_id > 0 and request_id <= 4611686018427387904

    def ring_slot(self, request_id: int) -> Pending:
        """The ring slot ``request_id`` (> 0) maps to: its call's, when ``slot.rid == request_id``.

        Also read by the loop's deadline sweep (runtime.core.deadlines).
        """
        if self._mask == 0:
            return self
        return self._slots[request_id & self._mask]

    def _ring_held(self, request_id: object) -> Optional[Pending]:
        """The ring slot holding ``request_id``'s call, or None (not ring-kept, or not there)."""
        if self._ring_kept(request_id):
            rid = request_id
            p = self.ring_slot(rid)  # type: ignore[arg-type]  # an int: _ring_kept
            if p.rid == rid:
                return p
        return None

    def _grow(self) -> None:
        """Doubles the ring; live slots keep their objects (distinct before, distinct after),
        except the session's own, whose call moves to a slot of its own."""
        old = self.ring()
        n = len(old) * 2
        mask = n - 1
        slots: list = [None] * n
        for x in old:
            p = x
            if p.rid != 0:
                if p is self:
                    p = self._own_slot_moved()
                slots[p.rid & mask] = p
        for i in range(n):
            if slots[i] is None:
                slots[i] = _free_slot()
        self._slots = slots
        self._mask = mask

    def _own_slot_moved(self) -> Pending:
        """A separate slot holding the session's own slot's call (which is then free)."""
        q = _free_slot()
        q.future = self.future
        q.kind = self.kind
        q.rid = self.rid
        q.due = self.due
        q.timeout = self.timeout
        q.owner = self.owner
        q.what = self.what
        self.future = None
        self.rid = 0
        self.due = -1.0
        self.owner = None
        self.what = None
        return q

    def _put(self, request_id: object, future: Any, kind: int) -> Pending:
        """Registers ``future`` for ``request_id`` in a free ring slot or the overflow dict."""
        if self._ring_kept(request_id):
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
        p = self.ring_slot(rid)
        if p.rid != 0 and p.rid != rid:
            n = self._mask + 1
            if n < _RING_MAX and n < _RING_SPARE * (self._live + 1):
                self._grow()
                p = self.ring_slot(rid)
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
        p = self._ring_held(request_id)
        if p is not None:
            return p
        if self._extra:
            return self._extra.get(request_id)
        return None

    def _take(self, request_id: object) -> Optional[Pending]:
        """Removes ``request_id``; returns its entry (a ring slot: read it before the next put)."""
        p = self._ring_held(request_id)
        if p is not None:
            self._release(p)
            return p
        if self._extra:
            return self._extra_pop(request_id)
        return None

    def _release(self, p: Pending) -> None:
        """Frees a ring slot (the future stays readable until the slot's next use).

        The deadline's ``owner`` and ``what`` stay too (the sweep reads them only while
        ``rid`` is set; the next call with a deadline replaces them): releasing the owner
        here wrote to an object (the device's CallSite) that the reply otherwise never
        touches, a cache miss per reply with many devices.
        """
        p.rid = 0
        p.due = -1.0
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
        data = _request_bytes(self._req_open, rid, tail, b"", self._call_close)
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
        for x in self.ring():
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
        for x in self.ring():
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

    # -- what the loop's deadline sweep reads (runtime.core.deadlines) --------------------------

    def ring(self) -> list:
        """The ring's slots, to scan for due calls (the overflow dict is not in it)."""
        if self._mask == 0:
            return [self]
        return self._slots

    def ring_idle(self) -> bool:
        """True when no call in flight holds a ring slot."""
        return self._live == 0

    @property
    def ring_slots(self) -> int:
        """Slots in the pending table's ring (it grows only while calls in flight collide)."""
        return self._mask + 1

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
        if _COMPILED and self._fast_live > 0 and type(data) is bytes and self._feed_exact(data):
            return None
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
            return new_frame(_F_INVALID)
        if type(obj) is not dict:
            return new_frame(_F_INVALID, None, None, None, None, None, None, None, obj)
        msg = obj
        etype = msg.get("type")
        if etype is None:
            payload = msg
        elif etype == "mcp":
            inner = msg.get("payload")
            if type(inner) is not dict:
                return new_frame(_F_INVALID, "mcp", msg.get("session_id"), None, None, None, None, None, msg)
            payload = inner
        else:
            return classify(msg)
        rid = payload.get("id")
        if rid is None or "method" in payload:
            return classify(msg)
        trid = type(rid)
        if trid is not int and trid is not str and trid is not float:
            # JSON-RPC ids are numbers or strings. A list or an object is unhashable and
            # true would match request 1 (True == 1): such a reply answers nothing of ours.
            return new_frame(_F_INVALID, etype, msg.get("session_id"), rid, None, None, None, None, msg)
        p = self._take(rid)
        if p is None:
            p = self._pop_coerced(rid)
            if p is None:
                self.stale += 1
                if "error" in payload:
                    return classify(msg)
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
                _reject(fut, undecodable(exc))
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
        unescaped error message): that call fails at once (runtime.core.stock_replies)."""
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
            if self.session_id is None:
                m = _fast_decode(data)
            else:  # an envelope session: its device wraps replies (else: the general path)
                env = _fast_env_decode(data)
                if env.type != "mcp":
                    return False
                m = env.payload
        except _FastError:
            return False
        except (TypeError, ValueError):  # invalid UTF-8 inside a string, lone surrogates...
            return False
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
            _reject(self._drop(p, rid), rpc_error_fields(err.code, err.message, err.data))
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
        item = content[0]
        text = item.text
        if type(text) is not str:
            return False
        value = text_scalar(text, kind)
        if value is None:
            return False
        _resolve(self._drop(p, rid), value)
        return True

    def _feed_exact(self, data: bytes) -> bool:
        """A call's reply laid out byte for byte as the device core writes it (``_req_open``,
        the id, :data:`_TEXT_RESULT`, the text, :data:`_TEXT_END`, the closing braces):
        True when handled, False to take the msgspec and general paths.

        Hand-written, not a JSON parser: it only recognises the one layout of which this
        project's device core is the writer (and stock xiaozhi firmware writes the same),
        and leaves every other byte sequence, whitespace or key order to msgspec. Decoding
        that reply with msgspec's Structs was 4,300 of the 5,500 instructions the gateway
        spent per call above a bare picows echo (callgrind, issue 43). A text with a
        backslash or a control character is left to msgspec (escapes, invalid JSON).
        Compiled only: interpreted, the byte scanning costs more than msgspec's C decode.
        """
        if not cython.compiled:  # interpreted, msgspec's C decoder is the faster one
            return False
        open_ = self._req_open
        close = self._call_close
        n = len(data)
        i = len(open_)
        if n < i + 1 + len(_TEXT_RESULT) + len(_TEXT_END) + len(close):
            return False
        buf = cython.cast(cython.p_const_char, data)
        if memcmp(buf, cython.cast(cython.p_const_char, open_), i) != 0:
            return False
        # The id: 1 to 18 digits, no leading zero (ours are > 0 and < 2**62).
        rid = 0
        j = i
        while j < n and j - i < 18 and 48 <= buf[j] <= 57:
            rid = rid * 10 + (buf[j] - 48)
            j += 1
        if j == i or buf[i] == 48:  # a 19th digit fails the match below
            return False
        if n - j < len(_TEXT_RESULT):
            return False
        if memcmp(buf + j, cython.cast(cython.p_const_char, _TEXT_RESULT), len(_TEXT_RESULT)) != 0:
            return False
        t0 = j + len(_TEXT_RESULT)
        hit = cython.cast(cython.p_const_char, memchr(buf + t0, 34, n - t0))  # the closing quote
        if hit == cython.NULL:
            return False
        q = hit - buf
        k = t0
        while k < q:  # an escape or a control character: msgspec decides
            if buf[k] == 92 or 0 <= buf[k] < 32:
                return False
            k += 1
        if n - q != len(_TEXT_END) + len(close):
            return False
        if memcmp(buf + q, cython.cast(cython.p_const_char, _TEXT_END), len(_TEXT_END)) != 0:
            return False
        if memcmp(buf + q + len(_TEXT_END), cython.cast(cython.p_const_char, close), len(close)) != 0:
            return False
        p = self.ring_slot(rid)
        if p.rid != rid:
            found = self._find(rid)  # the overflow dict (ids that collided in the ring)
            if found is None:
                return False
            p = found
        kind = p.kind
        value: object
        if kind == _K_BOOLEAN and q - t0 == 4 and data.startswith(b"true", t0):
            value = True  # the common reply: no str made for the text
        elif kind == _K_BOOLEAN and q - t0 == 5 and data.startswith(b"false", t0):
            value = False
        elif kind == _K_BOOLEAN or kind == _K_STRING or kind == _K_INTEGER or kind == _K_NUMBER:
            try:
                s = data[t0:q].decode("utf-8")
            except UnicodeDecodeError:
                return False
            value = text_scalar(s, kind)
        else:
            return False
        if value is None:
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


def tools_call_tail(name: str, arguments: object) -> bytes:
    """The part of a ``tools/call`` request after its id (for :meth:`RpcSession.call_encoded`)."""
    return b',"method":"tools/call","params":{"name":' + _dumps(name) + b',"arguments":' + _dumps(arguments)
