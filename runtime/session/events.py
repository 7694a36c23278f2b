"""Device-initiated events: ``notifications/events/<name>`` from a device, typed or not.

A spec's ``events:`` section declares each event's parameters; the device sends one as
the JSON-RPC notification ``{"method": "notifications/events/<name>", "params": {...}}``.

* Generated bindings hold an :class:`EventHub` built with one decoder per spec event
  (params dict -> typed payload, raising ``ValidationError`` like argument checks do).
  Their ``device.events.<name>()`` returns an :class:`EventStream` (``async for``) and
  ``device.on_<name>(callback)`` subscribes a callback.
* An event that breaks the spec (a missing or extra parameter, a wrong type, a value out
  of range) is logged at WARNING and dropped; ``EventHub.rejected`` counts them. It never
  reaches a stream as an error: one bad frame from a device must not end a consumer's
  ``async for`` loop, and the cause belongs in the logs where the device's owner looks.
* An event the bindings do not know (a newer device) is logged at DEBUG and dropped by
  the hub; :meth:`runtime.Device.on_event` (dynamic mode) passes every event through
  untyped as ``callback(name, params)``.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Generic, Optional, TypeVar

from mcpgen.protocol import EVENT_METHOD_PREFIX
from mcpgen.runtime.errors import ValidationError

log = logging.getLogger("mcpgen.runtime.session.events")

#: Events a stream keeps for a slow consumer; beyond that the oldest are dropped (logged).
DEFAULT_STREAM_BUFFER = 256

T = TypeVar("T")
EventCallback = Callable[[str, dict], Any]


def event_name(method: str) -> Optional[str]:
    """``"button_pressed"`` for ``"notifications/events/button_pressed"``, else None."""
    if method.startswith(EVENT_METHOD_PREFIX) and len(method) > len(EVENT_METHOD_PREFIX):
        return method[len(EVENT_METHOD_PREFIX) :]
    return None


class EventStream(Generic[T]):
    """Typed events of one kind, in arrival order: ``async for e in stream``.

    Subscribed from creation until :meth:`close` (or ``async with``), or until the device
    closes, which ends the iteration. Holds at most ``buffer`` undelivered events.
    """

    def __init__(
        self, name: str, unsubscribe: Callable[[], None], buffer: int = DEFAULT_STREAM_BUFFER
    ) -> None:
        self.name = name
        self.dropped = 0
        self._queue: collections.deque[T] = collections.deque()
        self._buffer = max(1, buffer)
        self._waiter: Optional[asyncio.Future[None]] = None
        self._closed = False
        self._unsubscribe = unsubscribe

    def _put(self, event: T) -> None:
        if self._closed:
            return
        if len(self._queue) >= self._buffer:
            self._queue.popleft()
            self.dropped += 1
            log.warning("event stream %s: consumer too slow, dropped the oldest event", self.name)
        self._queue.append(event)
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def close(self) -> None:
        """Unsubscribes; a pending ``async for`` ends after the events already queued."""
        if not self._closed:
            self._closed = True
            self._unsubscribe()
            self._wake()

    def __aiter__(self) -> AsyncIterator[T]:
        return self

    async def __anext__(self) -> T:
        while not self._queue:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()

    async def next(self, timeout: Optional[float] = None) -> T:
        """The next event (``asyncio.TimeoutError`` after ``timeout`` seconds)."""
        return await asyncio.wait_for(self.__anext__(), timeout)

    async def __aenter__(self) -> EventStream[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """Routes one device's event notifications to typed subscribers (used by generated
    bindings; see the module docstring for what happens to invalid and unknown events)."""

    def __init__(self, device: Any, decoders: Mapping[str, Callable[[dict], Any]]) -> None:
        self._device = device
        self._decoders = dict(decoders)
        self._callbacks: dict[str, list[Callable[[Any], Any]]] = {n: [] for n in self._decoders}
        self._streams: dict[str, list[EventStream[Any]]] = {n: [] for n in self._decoders}
        self.rejected = 0
        subscribe = getattr(device, "on_notification", None)
        if subscribe is None:  # a stand-in without notifications: the subscriptions stay silent
            log.debug("%r has no on_notification: its events cannot be delivered", device)
        else:
            subscribe(self._on_notification)
        on_close = getattr(device, "on_close", None)
        if on_close is not None:
            on_close(lambda _d: self._end_streams())

    def _on_notification(self, method: str, params: dict) -> None:
        name = event_name(method)
        if name is None:
            return
        decode = self._decoders.get(name)
        if decode is None:
            log.debug("device %s: event %r is not in the spec; ignored", _device_id(self._device), name)
            return
        try:
            event = decode(params)
        except ValidationError as exc:
            self.rejected += 1
            log.warning(
                "device %s: dropped event %s that breaks the spec: %s", _device_id(self._device), name, exc
            )
            return
        for stream in list(self._streams[name]):
            stream._put(event)
        for cb in list(self._callbacks[name]):
            try:
                res = cb(event)
                if inspect.isawaitable(res):
                    asyncio.ensure_future(_await_quietly(res))
            except Exception:
                log.exception("device %s: event callback %r failed", _device_id(self._device), cb)

    def _end_streams(self) -> None:
        for streams in self._streams.values():
            for s in list(streams):
                s.close()

    def subscribe(self, name: str, callback: Callable[[Any], Any]) -> Callable[[], None]:
        """``callback(event)`` (plain or async) for every valid ``name`` event; returns the
        function that unsubscribes it."""
        callbacks = self._callbacks[name]
        callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in callbacks:
                callbacks.remove(callback)

        return unsubscribe

    def stream(self, name: str, buffer: int = DEFAULT_STREAM_BUFFER) -> EventStream[Any]:
        """A new subscribed :class:`EventStream` of ``name`` events."""
        streams = self._streams[name]

        def unsubscribe() -> None:
            if stream in streams:
                streams.remove(stream)

        stream: EventStream[Any] = EventStream(name, unsubscribe, buffer)
        if getattr(self._device, "closed", False):
            stream.close()
        else:
            streams.append(stream)
        return stream


def subscribe_untyped(device: Any, callback: EventCallback) -> Callable[[], None]:
    """``callback(name, params)`` for every event notification of ``device`` (dynamic mode:
    nothing is checked). Returns the function that unsubscribes it."""

    def on_notification(method: str, params: dict) -> Any:
        name = event_name(method)
        if name is not None:
            return callback(name, params)
        return None

    unsubscribe: Callable[[], None] = device.on_notification(on_notification)
    return unsubscribe


def check_params(event: str, params: Any, names: frozenset[str]) -> dict:
    """The params object of an event, checked to hold every one of the spec's parameter names.

    A parameter the spec does not name is ignored: a device on a newer version of the spec
    may add one (a compatible change, toolspec/README.md "Evolving a spec"), and the
    bindings decode the ones they know, as they ignore an event they do not know.
    """
    if not isinstance(params, dict):
        got = type(params).__name__
        raise ValidationError("", "type", f"event {event}: params must be an object, got {got}")
    if params.keys() != names:
        missing = sorted(names - params.keys())
        if missing:
            name = missing[0]
            raise ValidationError(name, "required", f"missing from event {event}")
    return params


async def _await_quietly(aw: Any) -> None:
    try:
        await aw
    except Exception:
        log.exception("async event callback failed")


def _device_id(device: Any) -> str:
    return str(getattr(device, "device_id", "?"))


__all__ = [
    "DEFAULT_STREAM_BUFFER",
    "EVENT_METHOD_PREFIX",
    "EventCallback",
    "EventHub",
    "EventStream",
    "check_params",
    "event_name",
    "subscribe_untyped",
]
