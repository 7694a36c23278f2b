"""The console's state: the devices, calls made from the page, and the live update feed.

:class:`Console` works with anything shaped like ``runtime.bridge.DeviceLike`` (every
runtime transport's ``Device``). It validates a call's arguments with the runtime's own
validator (:class:`mcpgen.runtime.core.validate.SchemaValidator`, the rules the generated
bindings apply) before anything is sent, so an invalid call never reaches a device,
whatever the page did. Every change is published to subscribers (the page's live
stream) as a small JSON message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from typing import Any, Optional

import orjson

from mcpgen.runtime.errors import McpDeviceError, RpcError, ValidationError
from mcpgen.runtime.session.events import event_name

from .metrics import FleetMetrics, outcome_of
from .registry import MAX_STORED_RESULT, CallRecord, DeviceEntry, now_ms

log = logging.getLogger("mcpgen.runtime.console")

#: Disconnected devices kept on the page (oldest forgotten first).
MAX_GONE = 200
#: Events kept for the fleet-wide live feed.
FEED = 200
#: Messages a slow page may fall behind before its stream is restarted with a fresh state.
SUBSCRIBER_BACKLOG = 1000


class ConsoleError(Exception):
    """A request the console refuses: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_json(exc: BaseException) -> dict[str, Any]:
    """A typed runtime error as the page shows it: its class name and fields."""
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, ValidationError):
        out.update(argument=exc.argument, rule=exc.rule, message=str(exc))
    elif isinstance(exc, RpcError):
        out.update(code=exc.code, message=exc.message, data=exc.data)
    return out


class Console:
    """Devices shown by a web console (see the module docstring).

    ``user_tools``: also show (and allow calls to) tools the spec marks user-only.
    ``call_timeout``: seconds a call from the page may take. ``metrics``: where calls,
    sessions and events are counted (a new :class:`FleetMetrics` by default).
    """

    def __init__(
        self,
        *,
        user_tools: bool = False,
        call_timeout: float = 30.0,
        metrics: Optional[FleetMetrics] = None,
        device_ids: Optional[set[str]] = None,
    ) -> None:
        self.user_tools = user_tools
        self.call_timeout = call_timeout
        self.metrics = metrics if metrics is not None else FleetMetrics()
        self.device_ids = device_ids
        self.entries: OrderedDict[str, DeviceEntry] = OrderedDict()
        self.feed: deque[dict[str, Any]] = deque(maxlen=FEED)
        self._subscribers: set[asyncio.Queue[Optional[dict[str, Any]]]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    # -- devices --------------------------------------------------------------------------

    def add_device(self, device: Any, transport: str) -> None:
        """Shows a ready device that came through ``transport`` (``stdio``, ``serial``,
        ``websocket``, ``mqtt``, or any name); a known id gets its new session."""
        device_id = str(device.device_id)
        if self.device_ids is not None and device_id not in self.device_ids:
            log.info("device %s is not served (--device)", device_id)
            return
        self.metrics.track(device, transport)
        entry = self.entries.get(device_id)
        if entry is None:
            entry = DeviceEntry(device, transport)
            self.entries[device_id] = entry
        else:
            entry.replace(device, transport)
            self.entries.move_to_end(device_id)
            for uri in sorted(entry.subscriptions):  # the new session starts without them
                self._spawn(self._resubscribe(device, uri))
        device.on_notification(lambda method, params: self._notification(device, method, params))
        on_close = getattr(device, "on_close", None)
        if callable(on_close):  # runtime.Device: at once; others at the next poll of watch()
            on_close(self._closed_handle)
        log.info("console: device %s (%s) connected", device_id, transport)
        self.publish({"type": "device", "device": entry.summary()})

    def _closed_handle(self, device: Any) -> None:
        entry = self.entries.get(str(device.device_id))
        if entry is None or entry.device is not device or entry.disconnected_at is not None:
            return
        entry.disconnected_at = now_ms()
        log.info("console: device %s disconnected", entry.device_id)
        self.publish({"type": "device", "device": entry.summary()})
        gone = [e for e in self.entries.values() if e.disconnected_at is not None]
        for old in gone[: max(0, len(gone) - MAX_GONE)]:
            del self.entries[old.device_id]
            self.publish({"type": "removed", "id": old.device_id})

    async def watch(self, interval: float = 1.0) -> None:
        """Notices closed handles that have no ``on_close`` (runs until cancelled)."""
        while True:
            for entry in list(self.entries.values()):
                if entry.disconnected_at is None and entry.device.closed:
                    self._closed_handle(entry.device)
            await asyncio.sleep(interval)

    def _notification(self, device: Any, method: str, params: Any) -> None:
        entry = self.entries.get(str(device.device_id))
        if entry is None or entry.device is not device:
            return
        if method == "notifications/tools/list_changed":
            self._spawn(self._tools_changed(entry, device))
            return
        if method == "notifications/resources/updated":
            uri = params.get("uri") if isinstance(params, dict) else None
            if isinstance(uri, str):
                self.publish({"type": "resource", "id": entry.device_id, "uri": uri, "time": now_ms()})
            return
        name = event_name(method)
        if name is None:
            return
        event = {"device": entry.device_id, "event": name, "arguments": params, "time": now_ms()}
        entry.events.append(event)
        self.feed.append(event)
        self.publish({"type": "event", "event": event})

    async def _tools_changed(self, entry: DeviceEntry, device: Any) -> None:
        wait = getattr(device, "wait_tools_changed", None)
        if callable(wait):
            with contextlib.suppress(Exception):
                await wait(timeout=10.0)
        if entry.device is device:
            self.publish({"type": "tools", "id": entry.device_id, "device": entry.summary()})

    async def _resubscribe(self, device: Any, uri: str) -> None:
        try:
            await device.request("resources/subscribe", {"uri": uri}, timeout=self.call_timeout)
        except Exception as exc:  # the new firmware may not have it any more: shown as not watched
            log.warning("console: renewing the subscription to %s failed: %s", uri, exc)
            entry = self.entries.get(str(device.device_id))
            if entry is not None and entry.device is device:
                entry.subscriptions.discard(uri)

    def entry(self, device_id: str) -> DeviceEntry:
        entry = self.entries.get(device_id)
        if entry is None:
            raise ConsoleError(404, f"no device {device_id!r} (it may have been forgotten; reload)")
        return entry

    # -- what the page reads ----------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {
            "devices": [e.summary() for e in self.entries.values()],
            "feed": list(self.feed),
            "userTools": self.user_tools,
            "serverTime": now_ms(),
        }

    def detail(self, device_id: str) -> dict[str, Any]:
        return self.entry(device_id).detail(self.user_tools)

    # -- calls ----------------------------------------------------------------------------

    def _checked(self, device_id: str, tool_name: str, arguments: Any) -> tuple[DeviceEntry, dict[str, Any]]:
        """The entry and the arguments to send (defaults filled in); :class:`ConsoleError`
        for an unknown device or tool, :class:`ValidationError` for bad arguments."""
        entry = self.entry(device_id)
        tool = entry.tool(tool_name)
        if tool is None:
            raise ConsoleError(404, f"device {device_id!r} has no tool {tool_name!r}")
        if tool.user_only and not self.user_tools:
            raise ConsoleError(
                403, f"{tool_name} is a user-only tool; start the console with --user-tools to call it"
            )
        return entry, entry.validator(tool).validate(arguments)

    def check(self, device_id: str, tool_name: str, arguments: Any) -> dict[str, Any]:
        """Validates without calling: ``{"ok": true, "arguments": ...}`` or the error."""
        try:
            _entry, args = self._checked(device_id, tool_name, arguments)
        except ValidationError as exc:
            return {"ok": False, "error": error_json(exc)}
        return {"ok": True, "arguments": args}

    async def call(self, device_id: str, tool_name: str, arguments: Any) -> CallRecord:
        """Validates, calls and records one tool call; the record says how it ended."""
        try:
            entry, args = self._checked(device_id, tool_name, arguments)
        except ValidationError as exc:
            entry = self.entry(device_id)
            record = CallRecord(tool_name, arguments, "invalid", None, error=error_json(exc))
            self._finish(entry, record)
            return record
        if not entry.connected:
            raise ConsoleError(409, f"device {device_id!r} is disconnected")
        device = entry.device
        start = time.perf_counter()
        result: Optional[dict[str, Any]] = None
        failure: Optional[BaseException] = None
        progress: dict[str, Any] = {}
        if getattr(entry.tool(tool_name), "reports_progress", False) is True:
            progress["on_progress"] = self._progress_publisher(device_id, tool_name)
        try:
            result = await device.call_raw(tool_name, args, timeout=self.call_timeout, **progress)
        except McpDeviceError as exc:
            failure = exc
        except (TimeoutError, ConnectionError, OSError) as exc:
            failure = exc
        ms = (time.perf_counter() - start) * 1000.0
        if failure is not None:
            record = CallRecord(tool_name, args, outcome_of(failure), ms, error=error_json(failure))
        else:
            is_error = isinstance(result, dict) and result.get("isError") is True
            record = CallRecord(tool_name, args, "tool_error" if is_error else "ok", ms, result=result)
        self._finish(entry, record)
        return record

    def _progress_publisher(self, device_id: str, tool_name: str) -> Any:
        """``on_progress`` of one call: each report goes out on the live stream, where the
        page that made the call draws it as a bar under the tool's form (docs/console.md)."""

        def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
            self.publish(
                {
                    "type": "progress",
                    "id": device_id,
                    "tool": tool_name,
                    "progress": progress,
                    "total": total,
                    "message": message,
                }
            )

        return on_progress

    def _finish(self, entry: DeviceEntry, record: CallRecord) -> None:
        self.metrics.record_call(record.tool, record.outcome, None if record.ms is None else record.ms / 1000)
        stored = record
        if record.result is not None and len(orjson.dumps(record.result)) > MAX_STORED_RESULT:
            note = {"type": "text", "text": f"(result larger than {MAX_STORED_RESULT} bytes: not kept)"}
            stored = CallRecord(
                record.tool,
                record.arguments,
                record.outcome,
                record.ms,
                result={"content": [note], "isError": False},
                id=record.id,
                time=record.time,
            )
        entry.record(stored)
        self.publish(
            {"type": "call", "id": entry.device_id, "call": stored.to_json(), "device": entry.summary()}
        )

    # -- the live feed ----------------------------------------------------------------------

    def publish(self, message: dict[str, Any]) -> None:
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:  # a page that stopped reading: it starts over
                self._subscribers.discard(queue)
                _end(queue)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[Optional[dict[str, Any]]]]:
        """A queue of every published message from now on; ``None`` ends it (the console
        closed, or the subscriber fell more than :data:`SUBSCRIBER_BACKLOG` behind)."""
        queue: asyncio.Queue[Optional[dict[str, Any]]] = asyncio.Queue(SUBSCRIBER_BACKLOG)
        if self._closed:
            queue.put_nowait(None)
        else:
            self._subscribers.add(queue)
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Ends every live stream (devices are their owners' to close)."""
        self._closed = True
        for queue in list(self._subscribers):
            _end(queue)
        self._subscribers.clear()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _end(queue: asyncio.Queue[Optional[dict[str, Any]]]) -> None:
    """Puts the end marker, dropping the oldest message when the queue is full."""
    if queue.full():
        queue.get_nowait()
    queue.put_nowait(None)


__all__ = ["Console", "ConsoleError", "error_json"]
