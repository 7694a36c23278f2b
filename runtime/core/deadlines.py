# cython: annotation_typing=False
"""Event-loop glue: call deadlines and the compiled ``tools/call`` path.

Compiled by Cython (pure-Python mode; declarations in ``deadlines.pxd``, which cimports
:class:`~mcpgen.runtime.core.rpcsession.RpcSession` so the sweep reads the pending table's
slots as C structs). One :class:`Deadlines` per event loop expires the calls of every
session on it; a :class:`CallSite` is one device's call path over a transport that
sends without waiting. Both talk to the handle a call belongs to (the
:class:`~mcpgen.runtime.session.device.Device`) through :class:`CallOwner`.
"""

from __future__ import annotations

import asyncio
import collections.abc
import logging
import weakref
from typing import Any, Optional, Protocol

import cython

if not cython.compiled:  # the compiled build cimports these (deadlines.pxd)
    from mcpgen.runtime.core.rpcsession import RpcSession

    def _install_send(cls: type, step: Any, done: Any) -> None:
        """The compiled build points ``cls``'s ``am_send`` slot at ``step`` (deadlines.pxd)."""


_INF = float("inf")


def effective_timeout(timeout: Optional[float]) -> float:
    """The seconds a call waits for its reply, or -1.0 for no deadline: the one rule.

    ``None`` or below 0: no deadline (-1.0); 0 and above as given (0 too: the call
    expires at the next sweep). A :class:`CallSite`'s default, a call's own timeout, a
    Device's ``call_timeout`` and a fan-out's deadline all go through here; the call
    paths then test ``timeout >= 0``.
    """
    if timeout is None or timeout < 0:
        return -1.0
    return timeout


class Expiring(Protocol):
    """What a deadline hands a due call to."""

    def expire_request(self, request_id: Any, timeout: float, what: Any) -> None:
        """The deadline of ``request_id`` passed (``timeout`` seconds; ``what`` names the call)."""
        ...


class CallOwner(Expiring, Protocol):
    """What a :class:`CallSite` needs from the handle its calls belong to, when a call ends
    badly; :class:`~mcpgen.runtime.session.device.Device` implements it (and keeps the site's
    :attr:`CallSite.closed` and :attr:`CallSite.timeout` current)."""

    def disconnected_error(self) -> BaseException:
        """The error a call on the closed handle raises."""
        ...

    def send_error(self, exc: BaseException) -> BaseException:
        """The error a call raises when sending its frame failed with ``exc``."""
        ...

    def send_cancelled(self, request_id: int, reason: str) -> None:
        """Tells the device to stop working on ``request_id`` (best effort, never raises)."""
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
        #: ``loop.create_future``, one bound method for every CallSite on the loop.
        self.create_future = loop.create_future
        self.resolution = resolution
        self._buckets: dict = {}
        self._last = 0
        self._handle: Any = None
        self._sessions: list = []
        self._next_due = _INF

    def add(
        self, timeout: float, owner: Expiring, request_id: object, what: object, pending: Any = None
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
        self, session: RpcSession, request_id: int, timeout: float, owner: Expiring, what: object
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
        (issue 18); :class:`mcpgen.runtime.links.memtrim.Trimmer` prunes before it trims.
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
# The C future's methods, called directly on futures of exactly that type (the loop's):
# no method lookup per call.
_Future = asyncio.Future
_future_done = asyncio.Future.done
_future_result = asyncio.Future.result


class CallSite:
    """One device's compiled ``tools/call`` path over a transport that sends without waiting.

    :meth:`Device.invoke <mcpgen.runtime.session.device.Device.invoke>` (and the generated
    bindings, through :attr:`Device.invoker <mcpgen.runtime.session.device.Device.invoker>`) run
    :meth:`call`. ``transport`` is the connection's object with a ``send_now(data)``
    method. ``owner`` is the Device (a :class:`CallOwner`), read only when a call ends
    badly: what every call needs from it, whether it is closed and its default timeout,
    are copies kept here (:attr:`closed`, :attr:`timeout`), which the Device updates,
    and a call's deadline names this site, which hands it on. Measured with a thousand
    devices (docs/benchmarks.md): objects a call touches only to read one field are out
    of the CPU cache by then, so each costs a cache miss; that is also why the send goes
    through ``transport.send_now`` (the type's method, shared by every device) and not
    through a bound method object kept per device.
    """

    def __init__(
        self,
        session: RpcSession,
        loop: Any,
        deadlines: Deadlines,
        owner: CallOwner,
        transport: Any,
        timeout: Optional[float] = None,
    ) -> None:
        self.session = session
        self.deadlines = deadlines
        self.owner = owner
        self._create_future = deadlines.create_future
        self._transport = transport
        #: True once the owner is closed: calls fail with ``owner.disconnected_error()``.
        self.closed = False
        #: Seconds a call waits when it names no timeout (< 0: no deadline).
        self.timeout = effective_timeout(timeout)

    def expire_request(self, request_id: Any, timeout: float, what: Any) -> None:
        """A call's deadline passed (its deadline names this site): the owner fails it."""
        self.owner.expire_request(request_id, timeout, what)

    def __call__(
        self, name: str, arguments: object, kind: int, timeout: Optional[float] = None
    ) -> PendingCall:
        """:meth:`call` (what ``Device.invoker`` hands the bindings: the site itself, not a
        bound method, which would be one more object per device to miss in the cache)."""
        return _new_call(self, name, arguments, kind, timeout)

    def call(self, name: str, arguments: object, kind: int, timeout: Optional[float] = None) -> PendingCall:
        """The call as an awaitable (:class:`PendingCall`): awaiting it encodes the call,
        registers its future and deadline, sends, and waits (as ``Device.invoke``)."""
        return _new_call(self, name, arguments, kind, timeout)


def _new_call(
    site: CallSite, name: str, arguments: object, kind: int, timeout: Optional[float]
) -> PendingCall:
    c = PendingCall.__new__(PendingCall)
    c.site = site
    c.name = name
    c.arguments = arguments
    c.kind = kind
    c.state = _NEW
    c.rid = 0
    c.fut = None
    if timeout is None:  # the site's default
        c.timeout = site.timeout
    else:
        c.timeout = effective_timeout(timeout)
    return c


# What a PendingCall is doing (PendingCall.state).
_NEW = 0  # not awaited yet: nothing sent
_WAITING = 1  # sent; waiting on its future
_DONE = 2  # returned, raised, or closed


class PendingCall:
    """One ``tools/call`` made through :meth:`CallSite.call`: an awaitable that is its own
    iterator, so awaiting it costs one object where an ``async def`` costs four.

    Hand-written because a coroutine was the largest cost of a call that is ours and not
    the transport's: a compiled ``async def`` is a coroutine object, its closure, the
    wrapper Python's ``await`` asks it for, and the future's own iterator, all alive (and
    scanned by the cyclic GC) while the call is in flight; with a thousand calls in
    flight they are also out of the CPU cache by the time the reply comes. This object
    yields the future itself, as ``asyncio.Future.__await__`` does, and its compiled
    build answers the interpreter's ``send`` slot directly (``am_send``: no
    ``StopIteration`` per result).

    Nothing happens before it is awaited (as with a coroutine). It is registered as a
    :class:`collections.abc.Coroutine`, so ``asyncio.create_task`` takes it; it can be
    awaited once. Cancelling the task that awaits it tells the device to stop (as a
    cancelled ``Device.invoke`` does).
    """

    # Set by CallSite.call (C fields in the compiled build: deadlines.pxd).
    site: CallSite
    name: str
    arguments: object
    kind: int
    timeout: float
    state: int
    rid: int
    fut: Any

    def __await__(self) -> PendingCall:
        return self

    def __iter__(self) -> PendingCall:
        return self

    def __next__(self) -> object:
        value = _pending_step(self)
        if self.state == _DONE:
            raise StopIteration(value)
        return value

    def send(self, value: object) -> object:
        """``coroutine.send``: the value is ignored (the call waits on its own future)."""
        return self.__next__()

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> object:
        """``coroutine.throw``: raises the exception here, as at the ``await`` of a coroutine
        (a ``CancelledError`` forgets the call and tells the device to stop)."""
        exc = typ if val is None else val
        if isinstance(exc, type):
            exc = exc()
        if self.state == _WAITING:
            self.state = _DONE
            if isinstance(exc, _CancelledError):
                _cancel_call(self)
        if tb is not None:
            raise exc.with_traceback(tb)
        raise exc

    def close(self) -> None:
        """``coroutine.close``: the call is no longer awaited (its reply, if any, is dropped)."""
        self.state = _DONE

    def __repr__(self) -> str:
        state = ("new", "waiting", "done")[self.state]
        return f"<PendingCall {self.name!r} {state}>"


def _pending_step(call: PendingCall) -> object:
    """One step of an awaited call: the future to wait on, or (state ``_DONE``) its result."""
    state = call.state
    if state == _NEW:
        site = call.site
        if site.closed:
            call.state = _DONE
            raise site.owner.disconnected_error()
        fut = site._create_future()
        session = site.session
        deadlines = site.deadlines
        data = _start_call(session, deadlines, site, call.name, call.arguments, fut, call.kind, call.timeout)
        rid = session.last_id
        call.rid = rid
        call.fut = fut
        call.arguments = None
        call.state = _WAITING
        try:
            site._transport.send_now(data)
        except Exception as exc:
            session.forget(rid)
            call.state = _DONE
            raise site.owner.send_error(exc) from exc
        fut._asyncio_future_blocking = True  # what a future's own iterator sets: the Task waits on it
        return fut
    if state == _WAITING:
        fut = call.fut
        exact = type(fut) is _Future
        if not (_future_done(fut) if exact else fut.done()):  # stepped by hand before the reply
            fut._asyncio_future_blocking = True
            return fut
        call.state = _DONE
        try:
            return _future_result(fut) if exact else fut.result()
        except _CancelledError:
            _cancel_call(call)
            raise
    raise RuntimeError("cannot reuse an already awaited call")


def _pending_done(call: PendingCall) -> bool:
    return call.state == _DONE


def _cancel_call(call: PendingCall) -> None:
    """The caller gave up: the reply is no longer wanted, and the device is told."""
    site = call.site
    if site.session.forget(call.rid) and not site.closed:
        site.owner.send_cancelled(call.rid, "cancelled by the client")


collections.abc.Coroutine.register(PendingCall)
if cython.compiled:
    _install_send(PendingCall, _pending_step, _pending_done)


def _start_call(
    session: RpcSession,
    deadlines: Deadlines,
    owner: Expiring,
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
    logging.getLogger("mcpgen.runtime.core.deadlines").exception(msg, arg)


__all__ = [
    "CallOwner",
    "Expiring",
    "Deadlines",
    "CallSite",
    "PendingCall",
    "deadlines_for",
    "effective_timeout",
]
