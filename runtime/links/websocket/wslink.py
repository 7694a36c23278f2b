# cython: annotation_typing=False
"""The gateway's per-connection WebSocket listener: the per-frame hot path.

Compiled by Cython (pure-Python mode; declarations in ``wslink.pxd``, which cimports
picows' listener, transport and frame types so frames are read through C fields). The
same file runs unchanged as Python when the build skips compilation.

picows parses WebSocket frames in C and calls :meth:`DeviceLink.on_ws_frame` for each
one, straight from the socket's read callback: no task and no queue per frame. A text
frame of a running session goes to the compiled ``RpcSession.feed``, which matches the
reply id, decodes the result for the tool's return kind and resolves the caller's
future; only frames that are not replies (notifications, device requests, other
envelopes) reach Python code in :class:`~mcpgen.runtime.session.device.Device`.

Everything slower and rarer (the hello, session setup, keepalive, closing) is the
gateway's (``runtime/links/websocket/gateway.py``); this module only moves frames.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any, Optional, Protocol

import cython

if not cython.compiled:  # the compiled build gets these from wslink.pxd (cimport)
    from picows import WSListener

from picows import WSCloseCode, WSMsgType

# picows' protocol class (not in its top-level API): its get_buffer tells how much of the
# receive buffer is free (compact_read_buffer), and ChunkedWSProtocol bounds it.
from picows.picows import WSProtocol  # type: ignore[attr-defined]  # isort: skip

from mcpgen.runtime.core.wire import FRAME_INVALID
from mcpgen.runtime.errors import DeviceDisconnected

# .value: picows' stubs declare WSMsgType a plain Enum (it is an IntEnum: the same ints).
_TEXT = WSMsgType.TEXT.value
_BINARY = WSMsgType.BINARY.value
_CONTINUATION = WSMsgType.CONTINUATION.value
_CLOSE = WSMsgType.CLOSE.value
_PONG = WSMsgType.PONG.value
_MT_TEXT = WSMsgType.TEXT
_CC_OK = WSCloseCode.OK
_CC_TOO_BIG = WSCloseCode.MESSAGE_TOO_BIG
_CC_INVALID_TEXT = WSCloseCode.INVALID_TEXT
_F_INVALID = FRAME_INVALID

#: Initial send buffer of a connection (picows grows it for larger messages).
WRITE_BUFFER = 256
#: Receive buffer a connection is given back once its session is set up (picows grows
#: it for larger frames). Setup's ``tools/list`` reply (a few KiB) doubles picows' 2 KiB
#: starting buffer to 4 KiB, and picows never shrinks it; what an idle device sends
#: afterwards (call replies, pongs) is a few hundred bytes.
IDLE_READ_BUFFER = 1024
#: Most bytes read from one connection at a time (one read per connection and loop turn):
#: the per-device budget of a loop turn, so one flooding device cannot starve the others.
READ_CHUNK = 16384
_READ_CHUNK = READ_CHUNK  # a C int for get_buffer's comparison
#: Bytes picows keeps past the usable end of its receive buffer (for its SIMD unmasking).
_READ_SLACK = 256

# Connection states.
AWAIT_HELLO = 0  # handshake done, waiting for the device's hello
RUNNING = 1  # session frames go to RpcSession.feed
CLOSING = 2  # we sent a close frame; waiting for the device's or for close_timeout
# The same as C ints for this module's own comparisons (a module constant is a Python int).
_AWAIT_HELLO = AWAIT_HELLO
_RUNNING = RUNNING
_CLOSING = CLOSING


class ChunkedWSProtocol(WSProtocol):
    """picows' protocol, reading at most :data:`READ_CHUNK` bytes per loop turn.

    picows offers its whole free read buffer and doubles the buffer whenever a read fills
    it, so a device that floods grows its buffer to what the kernel holds (megabytes) and
    has all of it parsed in one loop turn while the other devices wait. Each offered
    buffer is cut to what is left of the turn's :data:`READ_CHUNK` bytes.

    uvloop's own stream reads once per readiness, so the cut alone bounds a turn there.
    aiofastnet (picows' default transport) keeps reading while each read fills the
    buffer, up to 256 KiB per turn (its ``MAX_READ_BYTES_PER_CYCLE_HINT``, not settable):
    once the link's ``paced`` is set, a read that completes the turn's budget pauses
    reading, and the next loop turn resumes it, unless the link paused reading itself
    (its device does not read what we send). A turn that reads less than was offered
    has drained the socket (the transport stops there), so the count starts again.

    The work is the link's (:meth:`DeviceLink.bind_reads`): the transport calls
    ``get_buffer`` and ``buffer_updated`` for every read, and the two slots below, which
    shadow picows' methods of those names, hold the link's C methods, so each read costs
    a C call. As methods of this class (a Python subclass: picows does not export its
    protocol's C layout) they cost 2,200 instructions per reply, the largest share of
    what the gateway spent above a bare picows echo once replies skipped msgspec
    (callgrind, issue 43). Slots, not an instance dict: 144 bytes per connection.
    """

    __slots__ = ("get_buffer", "buffer_updated")


# picows' own read methods, which the link's wrap (one C call each, no lookup per read).
_base_get_buffer = WSProtocol.get_buffer
_base_buffer_updated = WSProtocol.buffer_updated


def _next_turn(link: Any) -> None:
    """Resumes reading a link paused for the rest of a loop turn (see ChunkedWSProtocol)."""
    t = link.transport
    if t is None or t.is_disconnected or link.write_paused:
        return  # gone, or paused for back-pressure: resume_writing resumes it
    t.underlying_transport.resume_reading()


class LinkOwner(Protocol):
    """What a :class:`DeviceLink` reports to (the :class:`~mcpgen.runtime.links.websocket.gateway.Gateway`).

    None of these is on the per-frame path: they are the connection's rare events.
    """

    @property
    def closing(self) -> bool:
        """True once the owner is shutting down (a drained link stays paused)."""
        ...

    def link_open(self, link: DeviceLink) -> None:
        """The WebSocket handshake is done; the device's hello is due."""
        ...

    def link_hello(self, link: DeviceLink, data: bytes) -> None:
        """The first text message (the device's hello, or not)."""
        ...

    def link_stalled(self, link: DeviceLink) -> None:
        """The device stopped reading: reading from it is paused."""
        ...

    def link_drained(self, link: DeviceLink) -> None:
        """The device drained its send buffer: reading from it resumed."""
        ...

    def check_backlog(self, link: DeviceLink, more: int) -> None:
        """Before a send to a stalled device: raises (and closes it) when over the limit."""
        ...

    def link_closing(self, link: DeviceLink) -> None:
        """We sent a close frame."""
        ...

    def link_lost(self, link: DeviceLink) -> None:
        """The connection ended."""
        ...


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (RFC 6455 fails a text frame that is not)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class DeviceLink(WSListener):
    """One device's WebSocket connection; also the :class:`Device`'s transport.

    ``gateway`` (a :class:`LinkOwner`) hears of the connection's events: ``link_hello``
    for the first text message, ``link_lost`` when the connection ends, and the others.
    """

    def __init__(self, gateway: LinkOwner, handshake: Any, max_message: int) -> None:
        self.gateway = gateway
        self.handshake = handshake
        self.max_message = max_message
        self.transport: Any = None  # picows' WSTransport once connected (typed in wslink.pxd)
        # The Device and its RpcSession once the hello is accepted (typed in wslink.pxd;
        # RpcSession is cimported there, so this module cannot import it for mypy).
        self.device: Any = None
        self.session: Any = None
        self.state = _AWAIT_HELLO
        self.frames = 0
        self.frames_seen = 0
        self.deadline = 0.0
        self.ping_outstanding = False
        self.ping_sent = 0.0
        self.close_reason = ""
        self.oversize = False
        # Set while the device does not drain what we send (transport over its high
        # watermark): reading from it is paused meanwhile, so it cannot make us queue more.
        self.write_paused = False
        self.stall_deadline = 0.0
        self._parts: Optional[bytearray] = None
        self._part_type = 0
        # picows' receive buffer, found on the first compact_read_buffer (compiled only).
        self._rbuf: Any = None
        # The read bound (ChunkedWSProtocol): the protocol whose reads this link cuts,
        # the length last offered, the bytes read in this loop turn (reads that filled
        # their buffer), and whether a full turn pauses reading (aiofastnet's loop).
        self._proto: Any = None
        self._offered = 0
        self._turn = 0
        self.paced = False

    # -- picows callbacks (per frame: on_ws_frame) --------------------------------------

    def on_ws_connected(self, transport: Any) -> None:
        self.transport = transport
        if cython.compiled:
            # picows keeps the parsed upgrade request and our response (headers in
            # multidicts, ~3 KiB) for the connection's life; nothing reads them after the
            # handshake (the gateway has its own Handshake), so 10,000 idle devices do not
            # pay for them. Only C code can drop them (read-only attributes in Python).
            transport.request = None
            transport.response = None
            # picows frames every outgoing message in this buffer (1 KiB from the start;
            # it grows to the largest message sent and stays there). Requests to devices
            # are a few hundred bytes: start smaller.
            transport._write_buffer = MemoryBuffer(WRITE_BUFFER)  # type: ignore[name-defined]  # noqa: F821 - cimported (wslink.pxd)
        self.gateway.link_open(self)

    def on_ws_frame(self, transport: Any, frame: Any) -> None:
        self.frames += 1
        if transport.is_close_frame_sent:
            # Nothing more is read once we have sent a close frame (the device's answering
            # close aside). picows closes with 1009 on an oversize frame header but may
            # still hand us that frame's payload afterwards: it must not be delivered.
            if frame.msg_type == _CLOSE:
                transport.disconnect()
            return
        mt = frame.msg_type
        if mt == _TEXT and frame.fin:
            session = self.session
            if session is not None:
                # The hot path: one C-level copy of the payload, then the compiled codec.
                data = frame.get_payload_as_bytes()
                f = session.feed(data)
                if f is not None:
                    self._not_a_reply(f, data)
            elif self.state == _AWAIT_HELLO:
                self.gateway.link_hello(self, frame.get_payload_as_bytes())
            return
        self._other_frame(frame, mt)

    def _other_frame(self, frame: Any, mt: int) -> None:
        """Fragments, close, pong and binary frames (rare: not on the per-call path)."""
        if mt == _PONG:
            self.ping_outstanding = False
            return
        if mt == _CLOSE:
            if self.state != _CLOSING:
                self.close_reason = f"connection closed (code {int(frame.get_close_code())})"
                self.transport.send_close(frame.get_close_code())
            self.transport.disconnect()
            return
        if mt == _TEXT or mt == _BINARY:
            if frame.fin:
                return  # a whole binary message: audio on xiaozhi devices, not ours
            self._parts = bytearray(frame.get_payload_as_memoryview())
            self._part_type = mt
        elif mt == _CONTINUATION and self._parts is not None:
            parts = self._parts
            if len(parts) + frame.payload_size > self.max_message:
                self._parts = None
                self.refuse_oversize()
                return
            parts += frame.get_payload_as_memoryview()
            if frame.fin:
                self._parts = None
                if self._part_type == _TEXT:
                    self._message(bytes(parts))
        else:
            return
        if self._parts is not None and len(self._parts) > self.max_message:
            self._parts = None
            self.refuse_oversize()

    def _message(self, data: bytes) -> None:
        """A reassembled text message (the device fragmented it)."""
        session = self.session
        if session is not None:
            f = session.feed(data)
            if f is not None:
                self._not_a_reply(f, data)
        elif self.state == _AWAIT_HELLO:
            self.gateway.link_hello(self, data)

    # -- the read bound: each offered buffer cut to the turn's READ_CHUNK ------------------

    def bind_reads(self, proto: Any) -> None:
        """Makes this link cut ``proto``'s reads (see :class:`ChunkedWSProtocol`); before
        the transport is given ``proto`` (uvloop keeps the methods it finds then)."""
        self._proto = proto
        proto.get_buffer = self.read_buffer
        proto.buffer_updated = self.read_done

    def read_buffer(self, size_hint: int) -> Any:
        """picows' ``get_buffer``, cut to what is left of the turn's :data:`READ_CHUNK`."""
        buf = _base_get_buffer(self._proto, size_hint)
        n = cython.declare(cython.Py_ssize_t, len(buf))
        room = cython.declare(cython.Py_ssize_t, _READ_CHUNK - self._turn)
        if n > room:
            buf = buf[:room]
            n = room
        self._offered = n
        return buf

    def read_done(self, nbytes: int) -> None:
        """picows' ``buffer_updated``, then the turn's count (and its pause when full)."""
        _base_buffer_updated(self._proto, nbytes)
        got = cython.declare(cython.Py_ssize_t, nbytes)
        if got < self._offered:  # the socket had no more: the transport's loop ends
            self._turn = 0
            return
        turn = cython.declare(cython.Py_ssize_t, self._turn + got)
        if turn < _READ_CHUNK:
            self._turn = turn
            return
        self._turn = 0
        if not self.paced:
            return
        t = self.transport
        if t is None or t.is_disconnected:
            return
        t.underlying_transport.pause_reading()
        asyncio.get_running_loop().call_soon(_next_turn, self)

    # -- memory: an idle connection's receive buffer -----------------------------------

    def compact_read_buffer(self) -> bool:
        """Gives the connection's receive buffer back down to :data:`IDLE_READ_BUFFER`
        bytes when it grew past that and holds no unparsed bytes; True when it did.

        Must not run inside a picows callback of this connection (the parser points into
        the buffer): the gateway calls it from the setup task's done callback, and from
        its keepalive sweep for devices idle for a ping interval (a large message since
        grew the buffer again). After the first call it costs a few C field reads when
        there is nothing to give back. picows keeps the
        buffer in its protocol's C fields and has no API to shrink it; its
        :class:`MemoryBuffer` type is public (``picows.pxd``), so the compiled module
        swaps its memory. The buffer is found as the protocol's one ``MemoryBuffer``
        referent and the unparsed byte count read from picows' own ``get_buffer`` (its
        free tail); anything unexpected leaves the buffer alone. A fresh block, not a
        ``realloc``: shrunk in place, each 4 KiB block left a 3 KiB hole between live
        ones that glibc kept (1.4 KB per device of free heap at 3,000 devices); a freed
        whole block is reused by the next connection's. Pure Python (no C access):
        does nothing.
        """
        if not cython.compiled:
            return False
        t = self.transport
        if t is None or t.is_disconnected or self.state != _RUNNING:
            return False
        proto = t.underlying_transport.get_protocol()
        buf = self._rbuf
        if buf is None:  # (picows makes it once per connection and resizes it in place)
            found = [r for r in gc.get_referents(proto) if isinstance(r, MemoryBuffer)]  # type: ignore[name-defined]  # noqa: F821 - cimported (wslink.pxd)
            if len(found) != 1:
                return False
            buf = self._rbuf = found[0]
        if buf.capacity <= IDLE_READ_BUFFER:
            return False
        free = len(WSProtocol.get_buffer(proto, -1))
        if free != buf.size:  # unparsed bytes wait in the buffer: not now
            return False
        data = cython.cast(cython.p_char, PyMem_Malloc(IDLE_READ_BUFFER))  # type: ignore[name-defined]  # noqa: F821 - cimported
        if data == cython.NULL:
            return False
        PyMem_Free(buf.data)  # type: ignore[name-defined]  # noqa: F821 - cimported (wslink.pxd)
        buf.data = data
        buf.capacity = IDLE_READ_BUFFER
        buf.size = IDLE_READ_BUFFER - _READ_SLACK
        return True

    # -- back-pressure: a device that does not read what we send -------------------------

    def pause_writing(self) -> None:
        """The transport's send buffer went over its high watermark: the device is not
        reading. Its frames are answered (pongs, errors), so stop reading them until it
        drains; the gateway closes it if it stays stalled (``drain_timeout``)."""
        self.write_paused = True
        t = self.transport
        if t is not None and not t.is_disconnected:
            t.underlying_transport.pause_reading()
            self.gateway.link_stalled(self)

    def resume_writing(self) -> None:
        self.write_paused = False
        t = self.transport
        if t is not None and not t.is_disconnected and not self.gateway.closing:
            t.underlying_transport.resume_reading()
            self.gateway.link_drained(self)

    def _not_a_reply(self, f: Any, data: bytes) -> None:
        """A frame the codec did not consume as a reply: the Device's, unless it is not
        even UTF-8. The codec's parsers check UTF-8 as they read, so only a frame they
        refused is looked at again: RFC 6455 8.1 fails such a connection with 1007."""
        if f.kind == _F_INVALID and not is_utf8(data):
            self.refuse_invalid_text()
            return
        self.device.handle_frame(f, data)

    def refuse_invalid_text(self) -> None:
        self.close_reason = "text frame that is not UTF-8 (closed with 1007)"
        self.shutdown(_CC_INVALID_TEXT, "invalid UTF-8")

    def on_ws_disconnected(self, transport: Any) -> None:
        if not self.close_reason:
            hs = transport.close_handshake
            code = 1006
            if hs is not None:
                if hs.sent is not None and int(hs.sent.code) == 1009 or self.oversize:
                    self.oversize = True
                elif hs.recv is not None:
                    code = int(hs.recv.code)
                elif hs.sent is not None:
                    code = int(hs.sent.code)
            self.close_reason = "" if self.oversize else f"connection closed (code {code})"
        self.state = _CLOSING
        self.session = None
        self.gateway.link_lost(self)

    def refuse_oversize(self) -> None:
        """A message over ``max_message`` bytes: close with 1009, as for a single big frame."""
        self.oversize = True
        self.shutdown(_CC_TOO_BIG, "message too big")

    # -- the Device's transport ---------------------------------------------------------

    def send_now(self, data: bytes) -> None:
        """Queues one text frame (picows writes at once or buffers; it never blocks)."""
        if self.state == _CLOSING or self.transport.is_disconnected:
            raise DeviceDisconnected("the WebSocket connection is closed")
        if self.write_paused:  # the one per-send check: a flag
            self.gateway.check_backlog(self, len(data))
        self.transport.send(_MT_TEXT, data)

    async def send(self, data: bytes) -> None:
        self.send_now(data)

    async def close(self) -> None:
        self.shutdown(_CC_OK, "session closed")

    def shutdown(self, code: Any = None, reason: str = "session closed") -> None:
        """Starts the closing handshake; the gateway's sweep aborts it after close_timeout."""
        if self.state == _CLOSING:
            return
        self.state = _CLOSING
        self.session = None
        t = self.transport
        if t is None or t.is_disconnected:
            return
        t.send_close(_CC_OK if code is None else code, reason)
        self.gateway.link_closing(self)
