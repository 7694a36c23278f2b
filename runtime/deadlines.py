# cython: annotation_typing=False
"""Event-loop glue: call deadlines and the compiled ``tools/call`` path.

Compiled by Cython (pure-Python mode; declarations in ``deadlines.pxd``, which cimports
:class:`~mcpgen.runtime.rpcsession.RpcSession` so the sweep reads the pending table's
slots as C structs). One :class:`Deadlines` per event loop expires the calls of every
session on it; a :class:`CallSite` is one device's call path over a transport that
sends without waiting. Both talk to the handle a call belongs to (the
:class:`~mcpgen.runtime.device.Device`) through :class:`CallOwner`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, Optional, Protocol

import cython

if not cython.compiled:  # the compiled build cimports these (deadlines.pxd)
    from mcpgen.runtime.rpcsession import RpcSession

_INF = float("inf")


class CallOwner(Protocol):
    """What a call's deadline and its compiled path need from the handle it belongs to.

    Read only when a call starts (``closed``, ``call_timeout``) or ends badly (the
    methods); :class:`~mcpgen.runtime.device.Device` implements it.
    """

    @property
    def closed(self) -> bool: ...

    @property
    def call_timeout(self) -> Optional[float]: ...

    def disconnected_error(self) -> BaseException:
        """The error a call on the closed handle raises."""
        ...

    def send_error(self, exc: BaseException) -> BaseException:
        """The error a call raises when sending its frame failed with ``exc``."""
        ...

    def send_cancelled(self, request_id: int, reason: str) -> None:
        """Tells the device to stop working on ``request_id`` (best effort, never raises)."""
        ...

    def expire_request(self, request_id: Any, timeout: float, what: Any) -> None:
        """The deadline of ``request_id`` passed (``timeout`` seconds; ``what`` names the call)."""
        ...


class Deadlines:
    """Call deadlines for every session on one event loop: a coarse periodic sweep.

    One timer per loop instead of one ``call_later`` per call. A call made through
    :meth:`CallSite.call` keeps its deadline in its own pending-table slot (:meth:`add_call`):
    nothing is allocated per call; the session joins this loop's list once, and the
    sweep (every ``resolution`` seconds while sessions or entries exist) scans the
    listed sessions' slots only when the earliest deadline it knows of is due, so
    answered calls cost nothing here. :meth:`add` is the general form (any owner and
    request id): a small entry in the bucket of the sweep tick that follows its
    deadline. Both hand due calls to ``owner.expire_request(request_id, timeout, what)``,
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
        self, timeout: float, owner: CallOwner, request_id: object, what: object, pending: Any = None
    ) -> None:
        """Arranges ``owner.expire_request(request_id, timeout, what)`` at ``timeout`` seconds from now.

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
        self, session: RpcSession, request_id: int, timeout: float, owner: CallOwner, what: object
    ) -> None:
        """The deadline of a call :meth:`RpcSession.call` just registered (no allocation)."""
        p = None
        if request_id > 0:  # ids of ours (next_id only grows) fit the ring
            p = session.ring_slot(request_id)
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
        if not session.on_sweep:
            session.on_sweep = True
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
            for y in s.ring():
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
                        entry[0].expire_request(entry[1], entry[2], entry[3])
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
            if s.ring_idle():
                s.on_sweep = False
                continue
            keep.append(s)
            for y in s.ring():
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
                entry[0].expire_request(entry[1], entry[2], entry[3])
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
            if s.ring_idle():
                s.on_sweep = False
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
            s.on_sweep = False
        self._sessions = []
        self._next_due = _INF


_deadlines: Any = weakref.WeakKeyDictionary()
_CancelledError = asyncio.CancelledError


class CallSite:
    """One device's compiled ``tools/call`` path over a transport that sends without waiting.

    :meth:`Device.invoke <mcpgen.runtime.device.Device.invoke>` (and the generated
    bindings, through :attr:`Device.invoker <mcpgen.runtime.device.Device.invoker>`) run
    :meth:`call`: one compiled coroutine per call, and nothing happens before it is
    awaited. ``owner`` is the Device (a :class:`CallOwner`), read only when a call starts
    or ends badly.
    """

    def __init__(
        self, session: RpcSession, loop: Any, deadlines: Deadlines, owner: CallOwner, send_now: Any
    ) -> None:
        self.session = session
        self.deadlines = deadlines
        self.owner = owner
        self._create_future = loop.create_future
        self._send_now = send_now

    async def call(self, name: str, arguments: object, kind: int, timeout: Optional[float] = None) -> object:
        """Encodes the call, registers its future and deadline, sends, waits (as Device.invoke)."""
        owner = self.owner
        if owner.closed:
            raise owner.disconnected_error()
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
            raise owner.send_error(exc) from exc
        try:
            return await fut
        except _CancelledError:
            if session.forget(rid) and not owner.closed:
                owner.send_cancelled(rid, "cancelled by the client")
            raise


def _start_call(
    session: RpcSession,
    deadlines: Deadlines,
    owner: CallOwner,
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


def deadlines_for(loop: Any) -> Deadlines:
    """The :class:`Deadlines` of ``loop`` (created on first use)."""
    d = _deadlines.get(loop)
    if d is None:
        d = Deadlines(loop)
        _deadlines[loop] = d
    return d


def _log_exception(msg: str, arg: object) -> None:
    logging.getLogger("mcpgen.runtime.deadlines").exception(msg, arg)


__all__ = ["CallOwner", "Deadlines", "CallSite", "deadlines_for"]
