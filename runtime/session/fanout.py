"""Fan-out calls: one tool call on many devices, awaited as one.

``await DeskLamp.fanout(devices).light.set_power(on=False)`` (generated bindings) or
``await Fanout(devices).call("self.light.set_power", {"on": False})`` (dynamic) sends the
call to every device and returns a :class:`FanoutResults`: each device's value, or the
typed error its call ended in (:class:`~mcpgen.runtime.errors.DeviceTimeout`,
``ToolError``, ``DeviceDisconnected``...). One device's failure never fails the others,
and the awaitable itself raises only when it is cancelled.

Why this is cheaper than N calls (docs/runtime.md, "Fan-out"): the arguments are
encoded once (only the id and the session envelope differ per device,
:meth:`RpcSession.call_encoded <mcpgen.runtime.core.rpcsession.RpcSession.call_encoded>`), every
frame is written in one pass without a coroutine or a future per device, each reply
lands in its device's slot (one per device and Fanout, reused by every run) that the
decode path completes directly, and one timer per distinct timeout stands for every
device's deadline. What is left per device is close to the transport's own floor of one
send and one read (benchmarks/scale.md, "Fan-out"). Each device still behaves
as for a single call: its own timeout (``call_timeout`` unless one is given), a
``notifications/cancelled`` when it times out or the fan-out is cancelled, late replies
ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable, Iterator, Mapping
from typing import Any, Generic, Optional, TypeVar, Union

from mcpgen.runtime.core import rpcsession, wire
from mcpgen.runtime.core.deadlines import effective_timeout
from mcpgen.runtime.errors import DeviceDisconnected, McpDeviceError, SpecMismatch

log = logging.getLogger("mcpgen.runtime.session.fanout")

T = TypeVar("T")
#: ``"strict"``: a device reporting another spec fingerprint gets SpecMismatch (nothing
#: sent); ``"warn"``: it is called anyway (one log line per fan-out); ``"off"``: no check.
FANOUT_POLICIES = ("strict", "warn", "off")


class FanoutResults(Generic[T]):
    """What each device answered, keyed like the fan-out's devices (see :class:`Fanout`).

    ``results[key]`` is that device's value, or raises its error as the single call would;
    :attr:`ok` and :attr:`errors` split the outcome; :meth:`items` gives
    ``(key, value or error)`` in the fan-out's order.
    """

    __slots__ = ("keys", "_values", "_errors", "_index")

    def __init__(self, keys: tuple[Any, ...], values: list[Any], errors: dict[int, McpDeviceError]) -> None:
        self.keys = keys
        self._values = values
        self._errors = errors
        self._index: Optional[dict[Any, int]] = None

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self._lookup()

    def _lookup(self) -> dict[Any, int]:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys)}
        return self._index

    def __getitem__(self, key: Any) -> T:
        """The device's value; raises the typed error its call ended in."""
        i = self._lookup()[key]
        err = self._errors.get(i)
        if err is not None:
            raise err
        return self._values[i]

    def error(self, key: Any) -> Optional[McpDeviceError]:
        """The device's error, or None when it answered."""
        return self._errors.get(self._lookup()[key])

    def items(self) -> Iterator[tuple[Any, Union[T, McpDeviceError]]]:
        errors = self._errors
        for i, k in enumerate(self.keys):
            err = errors.get(i)
            yield k, (self._values[i] if err is None else err)

    @property
    def ok(self) -> dict[Any, T]:
        """Every device that answered, with its value."""
        errors = self._errors
        return {k: self._values[i] for i, k in enumerate(self.keys) if i not in errors}

    @property
    def errors(self) -> dict[Any, McpDeviceError]:
        """Every device whose call failed, with its typed error."""
        return {self.keys[i]: e for i, e in sorted(self._errors.items())}

    @property
    def all_ok(self) -> bool:
        return not self._errors

    def __repr__(self) -> str:
        return f"<FanoutResults {len(self.keys) - len(self._errors)} ok, {len(self._errors)} failed>"


class _Slot:
    """One device's place in a fan-out, registered in its session's pending table in place
    of a future: the decode path calls ``done()`` then ``set_result``/``set_exception``.

    A :class:`Fanout` keeps one slot per device and reuses it in each of its runs (no
    allocation per device-call); ``run`` is the run it reports to, None once settled.
    """

    __slots__ = ("run", "index", "rid")

    # The decode path asks done() before set_result(): bool() (False) answers without an
    # interpreter frame per reply. Always False is still right: a settled slot (run None)
    # ignores whatever comes after, as a done future would.
    done = bool

    def __init__(self, index: int) -> None:
        self.run: Optional[_Run] = None
        self.index = index
        self.rid = 0  # the request id of its device's call in the current run (-1: a task's)

    def cancelled(self) -> bool:
        return False

    def set_result(self, value: Any) -> None:
        run = self.run
        if run is not None:
            self.run = None
            run.values[self.index] = value
            run.left -= 1
            if run.left == 0:
                run.finish()

    def set_exception(self, exc: BaseException) -> None:
        run = self.run
        if run is not None:
            self.run = None
            run.settle_error(self.index, exc)


#: What a run needs of one device that can send at once: its result index, the Device, its
#: session's ``call_encoded``, the session, its ``send_now`` and its slot (all fixed for a
#: Device's life, so read once per Fanout instead of once per call).
_Entry = tuple[int, Any, Any, Any, Any, _Slot]


class _Run:
    """One fan-out call in flight: the aggregate every slot reports to."""

    __slots__ = ("values", "errors", "left", "future", "entries", "timers", "tasks")

    def __init__(self, n: int, future: asyncio.Future, entries: list[_Entry]) -> None:
        self.values: list[Any] = [None] * n
        self.errors: dict[int, McpDeviceError] = {}
        self.left = n
        self.future = future
        self.entries = entries
        self.timers: list[asyncio.TimerHandle] = []
        self.tasks: dict[int, tuple[_Slot, asyncio.Task]] = {}  # devices called through a task

    def settle_error(self, index: int, exc: BaseException) -> None:
        self.errors[index] = exc if isinstance(exc, McpDeviceError) else _wrapped(exc)
        self.left -= 1
        if self.left == 0:
            self.finish()

    def finish(self) -> None:
        for h in self.timers:
            h.cancel()
        if not self.future.done():
            self.future.set_result(None)


def _wrapped(exc: BaseException) -> McpDeviceError:
    err = DeviceDisconnected(f"the call failed: {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


def _device_of(item: Any) -> Any:
    """A runtime Device from a Device or a bindings object (its ``device``)."""
    if hasattr(item, "session") and hasattr(item, "invoke"):
        return item
    inner = getattr(item, "device", None)
    if inner is not None and hasattr(inner, "invoke"):
        return inner
    raise TypeError(f"fan-out needs runtime Devices or typed bindings objects, not {type(item).__name__}")


class Fanout:
    """A group of devices to call together (the module docstring says how it works).

    ``devices``: runtime Devices or typed bindings objects (results are keyed by them), a
    mapping ``key -> Device`` (results keyed by ``key``; a value that is an exception
    stands for a device that could not be reached and becomes its result), or another
    Fanout (as :meth:`MqttFleet.fanout <mcpgen.runtime.links.mqtt.fleet.MqttFleet.fanout>`
    returns). ``timeout``:
    each device's deadline in seconds (default: its own ``call_timeout``). ``fingerprint``
    with ``policy`` (:data:`FANOUT_POLICIES`): which devices are called at all.
    A Fanout can be awaited any number of times, one call each.
    """

    def __init__(
        self,
        devices: Union[Iterable[Any], Mapping[Any, Any], Fanout],
        *,
        timeout: Optional[float] = None,
        fingerprint: Optional[str] = None,
        policy: str = "warn",
    ) -> None:
        if policy not in FANOUT_POLICIES:
            raise ValueError(f"policy must be one of {FANOUT_POLICIES}, not {policy!r}")
        pairs: list[tuple[Any, Any]]
        if isinstance(devices, Fanout):  # e.g. MqttFleet.fanout's, now with a spec's check
            pairs = list(zip(devices.keys, devices._targets, strict=True))
            timeout = devices.timeout if timeout is None else timeout
        elif isinstance(devices, Mapping):
            pairs = list(devices.items())
        else:
            pairs = [(d, d) for d in devices]
        self.keys: tuple[Any, ...] = tuple(k for k, _ in pairs)
        self.timeout: Optional[float] = timeout
        #: Per device: its runtime Device, or the McpDeviceError it ends in without a call.
        self._targets: list[Any] = []
        others = 0
        for _, item in pairs:
            if isinstance(item, BaseException):
                self._targets.append(item if isinstance(item, McpDeviceError) else _wrapped(item))
                continue
            dev = _device_of(item)
            if fingerprint is not None and policy != "off" and dev.fingerprint != fingerprint:
                if policy == "strict":
                    self._targets.append(SpecMismatch(fingerprint, dev.fingerprint))
                    continue
                others += 1
            self._targets.append(dev)
        # Sorted by _prepare on the first run; _busy while a run uses the entries' slots.
        self._entries: Optional[list[_Entry]] = None
        self._tasked: list[tuple[int, Any]] = []
        self._failed: list[tuple[int, BaseException]] = []
        self._busy = False
        if others:
            log.warning(
                "fan-out: %d of %d devices report another spec fingerprint than %r",
                others,
                len(pairs),
                fingerprint,
            )

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def devices(self) -> list[Any]:
        """The runtime Devices that will be called (not those failed in advance)."""
        return [t for t in self._targets if not isinstance(t, BaseException)]

    def call(
        self, name: str, arguments: Optional[Mapping[str, Any]] = None, *, timeout: Optional[float] = None
    ) -> Awaitable[FanoutResults[Any]]:
        """Dynamic mode: ``name`` with ``arguments`` as given (not validated; the typed
        bindings validate once for all), each reply decoded as ``Device.call`` would
        without a known spec."""
        args = {} if arguments is None else dict(arguments)
        return self.invoke(name, args, wire.KIND_AUTO, timeout)

    def invoke(
        self, name: str, arguments: dict, kind: int, timeout: Optional[float] = None
    ) -> Awaitable[FanoutResults[Any]]:
        """The bindings' entry point (as ``Device.invoke``): nothing is sent before it is awaited."""
        return self._run(name, arguments, kind, self.timeout if timeout is None else timeout)

    def _prepare(self) -> None:
        """Sorts the targets once: failed in advance, sent at once (with their slots), or
        called through a task (a transport that must await its sends)."""
        self._entries = []
        self._tasked = []
        self._failed = []
        for i, dev in enumerate(self._targets):
            if isinstance(dev, BaseException):
                self._failed.append((i, dev))
            elif dev.send_now is None:
                self._tasked.append((i, dev))
            else:
                session = dev.session
                self._entries.append((i, dev, session.call_encoded, session, dev.send_now, _Slot(i)))

    async def _run(
        self, name: str, arguments: dict, kind: int, timeout: Optional[float]
    ) -> FanoutResults[Any]:
        loop = asyncio.get_running_loop()
        n = len(self._targets)
        if self._entries is None:
            self._prepare()
        entries: list[_Entry] = self._entries  # type: ignore[assignment]
        if self._busy:  # another run of this Fanout is in flight: its slots are taken
            entries = [(i, d, e, s, send, _Slot(i)) for i, d, e, s, send, _ in entries]
        run = _Run(n, loop.create_future(), entries)
        if n == 0:
            return FanoutResults(self.keys, run.values, run.errors)
        owns = not self._busy
        self._busy = True
        try:
            self._send_all(loop, run, name, arguments, kind, timeout)
            await run.future
        except BaseException:  # cancelled (or failed while sending): nothing may stay behind
            for h in run.timers:
                h.cancel()
            self._abandon(run, "cancelled by the client")
            raise
        finally:
            if owns:
                self._busy = False
        return FanoutResults(self.keys, run.values, run.errors)

    def _send_all(
        self,
        loop: asyncio.AbstractEventLoop,
        run: _Run,
        name: str,
        arguments: dict,
        kind: int,
        timeout: Optional[float],
    ) -> None:
        """Writes every device's frame (the per-device loop: keep it lean) and sets the timers."""
        for i, err in self._failed:
            run.settle_error(i, err)
        for i, dev in self._tasked:
            if dev.closed:
                run.settle_error(i, dev.disconnected_error())
            else:
                self._spawn_single(
                    loop, run, i, dev, name, arguments, kind, dev.call_timeout if timeout is None else timeout
                )
        tail = rpcsession.tools_call_tail(name, arguments)
        for i, dev, encode, session, send_now, slot in run.entries:
            if dev.closed:
                run.settle_error(i, dev.disconnected_error())
                continue
            slot.run = run
            data = encode(tail, slot, kind)
            slot.rid = session.last_id
            try:
                send_now(data)
            except Exception as exc:
                session.forget(slot.rid)
                slot.run = None
                run.settle_error(i, dev.send_error(exc))
        # One timer per distinct deadline; each expires the devices of its deadline.
        if timeout is not None:
            deadlines = {timeout: None}
        else:
            timeouts = [dev.call_timeout for _, dev, _, _, _, _ in run.entries]
            deadlines = dict.fromkeys(timeouts)
            if len(deadlines) > 1:  # devices with different call_timeouts: one group each
                groups: dict[float, list[_Entry]] = {t: [] for t in deadlines}
                for entry, t in zip(run.entries, timeouts, strict=True):
                    groups[t].append(entry)
                deadlines = groups  # type: ignore[assignment]
        for t, group in deadlines.items():
            seconds = effective_timeout(t)
            if seconds >= 0:
                run.timers.append(loop.call_later(seconds, self._expire, run, group, seconds, name))
        if run.left == 0:
            run.finish()

    def _spawn_single(
        self,
        loop: asyncio.AbstractEventLoop,
        run: _Run,
        i: int,
        dev: Any,
        name: str,
        arguments: dict,
        kind: int,
        t: Optional[float],
    ) -> None:
        """A device whose transport awaits its sends: a single call in a task, its outcome
        put in a slot of its own (the task may end after the run)."""
        slot = _Slot(i)
        slot.run = run
        slot.rid = -1
        task = loop.create_task(_single(dev, name, arguments, kind, -1.0 if t is None else t))

        def done(task: asyncio.Task) -> None:
            if task.cancelled():
                slot.set_exception(DeviceDisconnected("the call was cancelled"))
                return
            exc = task.exception()
            if exc is not None:
                slot.set_exception(exc)
            else:
                slot.set_result(task.result())

        task.add_done_callback(done)
        run.tasks[i] = (slot, task)

    def _expire(self, run: _Run, group: Optional[list[_Entry]], t: float, name: str) -> None:
        """The deadline ``t`` of ``group``'s devices (None: all of them): those still waiting
        fail as a single call would."""
        for _, dev, _, session, _, slot in run.entries if group is None else group:
            if slot.run is not run:
                continue
            rid = slot.rid
            session.forget(rid)
            slot.set_exception(dev.timeout_error(rid, t, name))
            if not dev.closed:
                dev.send_cancelled(rid, "timeout")

    def _abandon(self, run: _Run, reason: str) -> None:
        """The fan-out was cancelled: every device still working is told so (as single calls)."""
        for _, dev, _, session, _, slot in run.entries:
            if slot.run is not run:
                continue
            slot.run = None
            rid = slot.rid
            if session.forget(rid) and not dev.closed:
                dev.send_cancelled(rid, reason)
        for slot, task in run.tasks.values():
            if slot.run is run:
                slot.run = None
                task.cancel()


async def _single(dev: Any, name: str, arguments: dict, kind: int, timeout: Optional[float]) -> Any:
    return await dev.invoke(name, arguments, kind, -1.0 if timeout is None else timeout)


__all__ = ["FANOUT_POLICIES", "Fanout", "FanoutResults"]
