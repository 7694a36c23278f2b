"""Device handles: one MCP session with one device, over any transport.

A :class:`Device` owns a :class:`runtime.core.rpcsession.RpcSession` (ids, pending replies, framing)
and a transport that delivers incoming frames to :meth:`Device.feed` and reports a lost
connection with :meth:`Device.connection_lost`. Session setup (``initialize``,
``notifications/initialized``, every ``tools/list`` page, fingerprint check) is shared by
all transports: :mod:`mcpgen.runtime.session.session_setup`, which :meth:`Device.setup` runs.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Optional, Protocol, Union

from mcpgen.human import HumanValueError, human_ask, merge
from mcpgen.jsonrpc import METHOD_NOT_FOUND
from mcpgen.runtime.core import deadlines, rpcsession, wire
from mcpgen.runtime.core.stock_replies import mcp_image_items
from mcpgen.runtime.core.validate import SchemaValidator
from mcpgen.runtime.errors import (
    DeviceDisconnected,
    DeviceTimeout,
    ValidationError,
    quoted,
)
from mcpgen.runtime.session import resources, session_setup, shared
from mcpgen.runtime.session.compat import Fingerprints, Policy

# re-exported from their historical home (docs, tests and bindings import them from here)
from mcpgen.runtime.session.session_setup import CLIENT_NAME as CLIENT_NAME
from mcpgen.runtime.session.session_setup import CLIENT_VERSION as CLIENT_VERSION
from mcpgen.runtime.session.session_setup import FINGERPRINT_META_KEY as FINGERPRINT_META_KEY
from mcpgen.runtime.session.session_setup import ToolInfo as ToolInfo

log = logging.getLogger("mcpgen.runtime.session.device")

NotificationCallback = Callable[[str, dict], Any]
#: ``on_progress(progress, total, message)`` for ``notifications/progress`` of one call.
ProgressCallback = Callable[[float, Optional[float], Optional[str]], Any]
ProgressToken = Union[str, int]


def _return_kind(tool: ToolInfo) -> int:
    """How a call's result is decoded when no binding said: by the tool's output schema."""
    return wire.KIND_OBJECT if tool.output_schema is not None else wire.KIND_AUTO


class Transport(Protocol):
    """What a :class:`Device` needs from its link to the device."""

    async def send(self, data: bytes) -> None:
        """Sends one frame (already encoded; the transport adds its own delimiting)."""
        ...

    async def close(self) -> None:
        """Closes the link; must not raise when it is already closed."""
        ...


class Device:
    """A ready MCP session with one device (see docs/architecture.md, "Runtime API")."""

    # Slots: a gateway holds thousands of idle handles, and with more than 30 attributes
    # an instance dict is no longer key-shared (~1.8 KiB per device). "__dict__" keeps
    # other attributes possible (created only when one is set).
    __slots__ = (
        "device_id",
        "_call_timeout",
        "server_info",
        "protocol_version",
        "capabilities",
        "fingerprint",
        "expected_fingerprint",
        "dynamic",
        "initialize_result",
        "client_id",
        "hello",
        "_transport",
        "_session",
        "_loop",
        "_closed",
        "_close_reason",
        "_closed_event",
        "_tools",
        "_tool_map",
        "_validators",
        "_kinds",
        "_bound_kinds",
        "_callbacks",
        "_message_callbacks",
        "_close_callbacks",
        "_relist_task",
        "_relist_pending",
        "_tasks",
        "_sending",
        "_send_expired",
        "_tools_changed",
        "_progress",
        "_progress_ids",
        "_deadlines",
        "_send_now",
        "_site",
        "__dict__",
        "__weakref__",
    )

    def __init__(
        self,
        transport: Transport,
        *,
        device_id: str,
        session_id: Optional[str] = None,
        call_timeout: float = 10.0,
        loop: Optional[asyncio.AbstractEventLoop] = None,
    ) -> None:
        self.device_id = device_id
        self._call_timeout = call_timeout
        self.server_info: dict = {}
        self.protocol_version: Optional[str] = None
        self.capabilities: dict = {}
        self.fingerprint: Optional[str] = None
        self.expected_fingerprint: Optional[str] = None
        self.dynamic = True
        self.initialize_result: dict = {}
        self.client_id: Optional[str] = None  # gateway: the Client-Id header
        self.hello: Optional[dict] = None  # gateway: the device's hello message
        self._transport = transport
        self._session = rpcsession.RpcSession(session_id)
        self._loop = loop or asyncio.get_running_loop()
        self._closed = False
        self._close_reason = ""
        # Created on first wait: a gateway holds thousands of handles nobody waits on.
        self._closed_event: Optional[asyncio.Event] = None
        self._tools: list[ToolInfo] = []
        self._tool_map: dict[str, ToolInfo] = {}
        self._validators: dict[str, SchemaValidator] = {}
        self._kinds: dict[str, int] = {}
        # Created on first use (like the sets below): most gateway devices never use them.
        self._bound_kinds: Optional[dict[str, int]] = None
        self._callbacks: list[NotificationCallback] = []
        self._message_callbacks: list[Callable[[dict], Any]] = []
        self._close_callbacks: list[Callable[[Device], Any]] = []
        self._relist_task: Optional[asyncio.Task] = None
        self._relist_pending = False
        # Sets are 216 bytes even when empty: these two are created on first use.
        self._tasks: Optional[set[asyncio.Task]] = None
        self._sending: Optional[dict[int, Optional[asyncio.Task]]] = None
        self._send_expired: Optional[set[int]] = None
        self._tools_changed: Optional[asyncio.Event] = None
        self._progress: Optional[dict[str, ProgressCallback]] = None
        self._progress_ids: Optional[itertools.count[int]] = None
        self._deadlines = deadlines.deadlines_for(self._loop)
        # Transports that can send without waiting (the gateway's WebSocket links) offer
        # send_now(data): calls then skip the per-call coroutine and stalled-send handling.
        self._send_now: Optional[Callable[[bytes], None]] = getattr(transport, "send_now", None)
        # ... and then take the compiled call path (deadlines.CallSite): no Python frame per call.
        self._site: Optional[deadlines.CallSite] = (
            None
            if self._send_now is None
            else deadlines.CallSite(self._session, self._loop, self._deadlines, self, transport, call_timeout)
        )

    # -- properties ---------------------------------------------------------------------

    @property
    def session_id(self) -> Optional[str]:
        """The xiaozhi session id (``None`` for bare JSON-RPC transports)."""
        return self._session.session_id

    @property
    def session(self) -> rpcsession.RpcSession:
        """The compiled session core (ids, pending table, encoder)."""
        return self._session

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def call_timeout(self) -> float:
        """Seconds a call waits for its reply when it names no timeout."""
        return self._call_timeout

    @call_timeout.setter
    def call_timeout(self, value: float) -> None:
        self._call_timeout = value
        if self._site is not None:  # the compiled call path keeps its own copy
            self._site.timeout = deadlines.effective_timeout(value)

    @property
    def send_now(self) -> Optional[Callable[[bytes], None]]:
        """The transport's synchronous send, or ``None`` when it must await its sends
        (what a fan-out writes its frames with)."""
        return self._send_now

    @property
    def close_reason(self) -> str:
        return self._close_reason

    @property
    def tools(self) -> list[ToolInfo]:
        """Every tool the device reported, user-only ones included, in list order."""
        return list(self._tools)

    def tool(self, name: str) -> ToolInfo:
        try:
            return self._tool_map[name]
        except KeyError:
            raise KeyError(f"device {self.device_id!r} has no tool {name!r}") from None

    def llm_tools(self, flavor: str = "openai", *, include_user_only: bool = False) -> list[dict]:
        """The tools as LLM function definitions (``"openai"`` or ``"anthropic"``)."""
        from mcpgen.runtime.session import llm

        return llm.export_tools(self._tools, flavor, include_user_only=include_user_only)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        mode = "dynamic" if self.dynamic else "spec"
        return f"<Device {self.device_id!r} {state} {mode} tools={len(self._tools)}>"

    # -- calls --------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        validate: bool = True,
        progress_token: Optional[ProgressToken] = None,
        on_progress: Optional[ProgressCallback] = None,
        human: Optional[Mapping[str, Any]] = None,
    ) -> Any:
        """Calls a tool and returns its decoded value.

        With ``validate`` the arguments are checked against the schema the device
        reported (defaults filled in) and nothing is sent when they break it; a tool whose
        ``pattern`` RE2 cannot run (``self.tool(name).refused``) raises
        :class:`~mcpgen.runtime.errors.UnsupportedPattern`, a ``ValidationError``.
        ``progress_token`` / ``on_progress``: see :meth:`call_raw`.

        ``human``: the values the tool asks of the person (spec ``from_human``, announced in
        the tool's ``_meta``; ``mcpgen.human``), which the backend asked them for. Such a
        value is accepted only here: among ``arguments`` it raises ``ValidationError``
        (rule ``from_human``), so a model's output passed on as arguments cannot supply it.
        """
        info = self._tool_map.get(name)
        ask = None if info is None else human_ask(info.raw)
        if (ask is not None or human is not None) and (arguments is None or isinstance(arguments, Mapping)):
            try:
                arguments = merge({} if arguments is None else arguments, human, ask, name)
            except HumanValueError as exc:
                raise ValidationError(exc.argument, "from_human", exc.message) from None
        if validate:
            v = self._validators.get(name)
            if v is None:
                info = self._tool_map.get(name)
                if info is None:
                    raise ValidationError("", "tool", f"device {self.device_id!r} has no tool {name!r}")
                v = SchemaValidator(info.input_schema)
                self._validators[name] = v
            args = v.validate(arguments)
        elif arguments is None:
            args = {}
        else:
            args = arguments if type(arguments) is dict else dict(arguments)
        bound = self._bound_kinds
        kind = None if bound is None else bound.get(name)
        if kind is None:
            kind = self._kinds.get(name, wire.KIND_AUTO)
        if progress_token is None and on_progress is None:
            return await self.invoke(name, args, kind, timeout)
        return await self._invoke_with_progress(name, args, kind, timeout, progress_token, on_progress)

    async def call_raw(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        progress_token: Optional[ProgressToken] = None,
        on_progress: Optional[ProgressCallback] = None,
    ) -> dict:
        """Calls a tool without validation; returns the MCP result object as sent (except
        that a stock xiaozhi device's nested image item becomes MCP image content, so it
        can be passed on as it is: runtime.core.stock_replies).

        ``progress_token`` (a str or int) is sent as ``params._meta.progressToken`` so the
        device may report progress with ``notifications/progress``; ``on_progress(progress,
        total, message)`` (plain or async; ``total``/``message`` may be None) then gets
        each report for that token while the call runs. ``on_progress`` alone picks a
        fresh token. Progress notifications also reach :meth:`on_notification` callbacks.
        """
        args = {} if arguments is None else dict(arguments)
        if progress_token is None and on_progress is None:
            result = await self.invoke(name, args, wire.KIND_RAW, timeout)
        else:
            result = await self._invoke_with_progress(
                name, args, wire.KIND_RAW, timeout, progress_token, on_progress
            )
        return mcp_image_items(result)

    async def _invoke_with_progress(
        self,
        name: str,
        arguments: dict,
        kind: int,
        timeout: Optional[float],
        token: Optional[ProgressToken],
        on_progress: Optional[ProgressCallback],
    ) -> Any:
        if token is None:
            if self._progress_ids is None:
                self._progress_ids = itertools.count(1)
            token = f"mcpgen-progress-{next(self._progress_ids)}"
        elif isinstance(token, bool) or not isinstance(token, (str, int)):
            raise TypeError(f"progress_token must be a str or an int, not {type(token).__name__}")
        key = str(token)
        progress = self._progress
        if progress is None:
            progress = self._progress = {}
        if on_progress is not None and key in progress:
            raise ValueError(f"progress token {token!r} is already in use by another call")
        if self._closed:
            raise self.disconnected_error()
        params = {"name": name, "arguments": arguments, "_meta": {"progressToken": token}}
        fut = self._loop.create_future()
        data = self._session.request("tools/call", params)
        rid = self._session.last_id
        self._session.expect(rid, fut, kind)
        if on_progress is not None:
            progress[key] = on_progress
        try:
            return await self._complete(rid, fut, data, timeout, name)
        finally:
            if on_progress is not None and progress.get(key) is on_progress:
                del progress[key]

    def invoke_progress(
        self,
        name: str,
        arguments: dict,
        kind: int,
        on_progress: ProgressCallback,
        timeout: Optional[float] = None,
        *,
        progress_token: Optional[ProgressToken] = None,
    ) -> Awaitable[Any]:
        """:meth:`invoke` with progress: the bindings' entry point for ``on_progress`` of a
        tool that reports progress (spec ``progress: true``). Sends a progress token (a
        fresh one unless ``progress_token`` is given) and calls ``on_progress(progress,
        total, message)`` for each ``notifications/progress`` of this call until it ends."""
        return self._invoke_with_progress(name, arguments, kind, timeout, progress_token, on_progress)

    def invoke(
        self, name: str, arguments: dict, kind: int, timeout: Optional[float] = None
    ) -> Awaitable[Any]:
        """The bindings' entry point: sends pre-validated ``arguments`` and decodes per ``kind``.

        Returns an awaitable (``await device.invoke(...)``); nothing is sent before it is
        awaited. On transports that send without waiting (the gateway) the whole call
        runs in the compiled :meth:`deadlines.CallSite.call <mcpgen.runtime.core.deadlines.CallSite.call>`
        (a :class:`~mcpgen.runtime.core.deadlines.PendingCall`, awaitable once).
        """
        site = self._site
        if site is None:
            if self._closed:
                return self._disconnected()
            return self._invoke(name, arguments, kind, timeout)
        return site.call(name, arguments, kind, timeout)

    @property
    def invoker(self) -> Callable[[str, dict, int, Optional[float]], Awaitable[Any]]:
        """:meth:`invoke` itself, or the same call without this method's frame (the
        compiled ``CallSite`` of gateway devices, which calls as ``CallSite.call``). The
        generated bindings take it once per handle: ``invoker(name, arguments, kind,
        timeout=None)``."""
        site = self._site
        return self.invoke if site is None else site

    async def _disconnected(self) -> Any:
        raise self.disconnected_error()

    # -- what the loop's deadlines and the compiled call path use (deadlines.CallOwner) ----

    def disconnected_error(self) -> DeviceDisconnected:
        """The error a call on this closed handle raises."""
        return DeviceDisconnected(f"device {self.device_id!r} is disconnected ({self._close_reason})")

    def timeout_error(self, rid: int, t: float, what: str) -> DeviceTimeout:
        """The error of request ``rid`` (``what``) that had no reply within ``t`` seconds."""
        return DeviceTimeout(f"{what}: no reply from device {self.device_id!r} within {t:g}s (request {rid})")

    async def _invoke(self, name: str, arguments: dict, kind: int, timeout: Optional[float]) -> Any:
        if self._closed:
            raise self.disconnected_error()
        fut = self._loop.create_future()
        data = self._session.call(name, arguments, fut, kind)
        return await self._complete(self._session.last_id, fut, data, timeout, name)

    async def request(
        self, method: str, params: Optional[dict] = None, *, timeout: Optional[float] = None
    ) -> Any:
        """Any JSON-RPC request; returns the ``result`` as sent."""
        if self._closed:
            raise self.disconnected_error()
        fut = self._loop.create_future()
        data = self._session.request(method, params)
        rid = self._session.last_id
        self._session.expect(rid, fut, wire.KIND_RAW)
        return await self._complete(rid, fut, data, timeout, method)

    # -- resources (runtime.session.resources): for any device, its spec known or not --------------

    async def list_resources(self, *, timeout: Optional[float] = None) -> list[dict]:
        """Every ``resources/list`` entry of the device (all pages)."""
        return await resources.list_resources(self, timeout=timeout)

    async def list_resource_templates(self, *, timeout: Optional[float] = None) -> list[dict]:
        """Every ``resources/templates/list`` entry of the device (all pages)."""
        return await resources.list_resource_templates(self, timeout=timeout)

    async def read_resource(self, uri: str, *, timeout: Optional[float] = None) -> Union[str, bytes]:
        """The content at ``uri``: ``str`` (text) or ``bytes`` (blob)."""
        return await resources.read_resource(self, uri, timeout=timeout)

    async def ping(self, *, timeout: Optional[float] = None) -> None:
        await self.request("ping", timeout=timeout)

    async def notify(self, method: str, params: Optional[dict] = None) -> None:
        """Sends a notification to the device."""
        if self._closed:
            raise self.disconnected_error()
        await self._send(self._session.notification(method, params))

    async def _complete(
        self, rid: int, fut: asyncio.Future, data: bytes, timeout: Optional[float], what: str
    ) -> Any:
        t = deadlines.effective_timeout(self.call_timeout if timeout is None else timeout)
        if t >= 0:
            self._deadlines.add_call(self._session, rid, t, self, what)
        send_now = self._send_now
        if send_now is not None:
            try:
                send_now(data)
            except Exception as exc:
                self._session.forget(rid)
                raise self.send_error(exc) from exc
            try:
                return await fut
            except asyncio.CancelledError:
                if self._session.forget(rid) and not self._closed:
                    self.send_cancelled(rid, "cancelled by the client")
                raise
        try:
            # While the frame is being written (a stalled link can block here), the
            # timeout must still end the call: expire_request cancels the task and we turn that
            # cancellation back into the DeviceTimeout it stands for.
            sending = self._sending
            if sending is None:
                sending = self._sending = {}
            sending[rid] = asyncio.current_task()
            try:
                await self._transport.send(data)
            except asyncio.CancelledError:
                if self._send_expired is not None and rid in self._send_expired:
                    self._send_expired.discard(rid)
                    task = asyncio.current_task()
                    if task is not None:
                        task.uncancel()
                    failed = fut.exception() if fut.done() and not fut.cancelled() else None
                    raise (failed or DeviceTimeout(f"{what}: timed out while sending")) from None
                raise
            except Exception as exc:
                self._session.forget(rid)
                raise self.send_error(exc) from exc
            finally:
                del sending[rid]
            return await fut
        except asyncio.CancelledError:
            if self._session.forget(rid) and not self._closed:
                self.send_cancelled(rid, "cancelled by the client")
            raise

    def send_error(self, exc: BaseException) -> DeviceDisconnected:
        """The error a call raises when sending its frame failed with ``exc``."""
        if self._closed:
            return self.disconnected_error()
        return DeviceDisconnected(f"sending to device {self.device_id!r} failed: {exc}")

    def send_cancelled(self, rid: int, reason: str) -> None:
        """Tells the device to stop working on ``rid`` (best effort, never raises)."""
        data = self._session.cancelled(rid, reason)
        send_now = self._send_now
        if send_now is None:
            self._spawn(self._send_quietly(data))
            return
        try:
            send_now(data)
        except Exception:  # the link is going away; nothing to report to anyone
            log.debug("device %s: could not send %r", self.device_id, data[:80])

    def expire_request(self, rid: int, t: float, what: str) -> None:
        """Called by the loop's deadline sweep; a call answered meanwhile is skipped."""
        if not self._session.is_pending(rid):
            return
        exc = self.timeout_error(rid, t, what)
        if self._session.fail(rid, exc):
            sender = None if self._sending is None else self._sending.get(rid)
            if sender is not None:
                if self._send_expired is None:
                    self._send_expired = set()
                self._send_expired.add(rid)
                sender.cancel()
            elif not self._closed:
                self.send_cancelled(rid, "timeout")

    async def _send(self, data: bytes) -> None:
        try:
            await self._transport.send(data)
        except Exception as exc:
            raise DeviceDisconnected(f"sending to device {self.device_id!r} failed: {exc}") from exc

    async def _send_quietly(self, data: bytes) -> None:
        try:
            await self._transport.send(data)
        except Exception:  # the link is going away; nothing to report to anyone
            log.debug("device %s: could not send %r", self.device_id, data[:80])

    def _spawn(self, coro: Any) -> asyncio.Task:
        task = self._loop.create_task(coro)
        if self._tasks is None:
            self._tasks = set()
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- notifications ------------------------------------------------------------------

    def on_notification(self, callback: NotificationCallback) -> Callable[[], None]:
        """Subscribes ``callback(method, params)`` to every device notification.

        ``callback`` may be a plain function or a coroutine function; it runs on the
        event loop as the frame arrives (keep plain callbacks short). Returns a function
        that unsubscribes it.
        """
        return _subscribe(self._callbacks, callback)

    def on_event(self, callback: Callable[[str, dict], Any]) -> Callable[[], None]:
        """Subscribes ``callback(name, params)`` to every device event
        (``notifications/events/<name>``), untyped and unchecked: dynamic mode. Generated
        bindings offer typed, validated subscriptions (docs/runtime.md, "Events").
        Returns a function that unsubscribes it."""
        from mcpgen.runtime.session.events import subscribe_untyped

        return subscribe_untyped(self, callback)

    def on_message(self, callback: Callable[[dict], Any]) -> Callable[[], None]:
        """Subscribes to non-MCP envelopes from the device (``listen``, ``abort``, ...)."""
        return _subscribe(self._message_callbacks, callback)

    def on_close(self, callback: Callable[[Device], Any]) -> None:
        """``callback(device)`` runs once when the handle closes (any reason)."""
        self._close_callbacks.append(callback)

    def _dispatch(self, callbacks: list, *args: Any) -> None:
        for cb in list(callbacks):
            try:
                res = cb(*args)
                if inspect.isawaitable(res):
                    self._spawn(self._await_callback(res))
            except Exception:
                log.exception("device %s: callback %r failed", self.device_id, cb)

    async def _await_callback(self, aw: Any) -> None:
        try:
            await aw
        except Exception:
            log.exception("device %s: async callback failed", self.device_id)

    async def wait_tools_changed(self, timeout: Optional[float] = None) -> None:
        """Waits until the tool list is re-read after ``notifications/tools/list_changed``."""
        if self._tools_changed is None:
            self._tools_changed = asyncio.Event()
        self._tools_changed.clear()
        await asyncio.wait_for(self._tools_changed.wait(), timeout)

    # -- incoming -----------------------------------------------------------------------

    def feed(self, data: Union[bytes, str]) -> None:
        """Transports call this with every incoming frame."""
        frame = self._session.feed(data)
        if frame is not None:
            self.handle_frame(frame, data)

    def handle_frame(self, frame: wire.Frame, data: Union[bytes, str, memoryview]) -> None:
        """What :meth:`feed` does with a frame that was not a reply to a pending call
        (transports that run :meth:`rpcsession.RpcSession.feed` themselves call this)."""
        kind = frame.kind
        if kind == wire.FRAME_NOTIFICATION:
            params = frame.params if isinstance(frame.params, dict) else {}
            method = frame.method
            if method == "notifications/tools/list_changed" and not self._closed:
                self._schedule_relist()
            elif method == "notifications/progress" and self._progress:
                self._deliver_progress(params)
            self._dispatch(self._callbacks, method, params)
        elif kind == wire.FRAME_REQUEST:
            self._answer_device_request(frame)
        elif kind == wire.FRAME_OTHER:
            self._dispatch(self._message_callbacks, frame.message)
        elif kind == wire.FRAME_ERROR:
            err = wire.rpc_error(frame.error)
            log.warning(
                "device %s: error without a pending request (id %r): %s", self.device_id, frame.id, err
            )
        elif kind == wire.FRAME_INVALID:
            text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
            log.debug("device %s: ignoring non-JSON-RPC frame %r", self.device_id, text[:120])

    def _deliver_progress(self, params: dict) -> None:
        """Hands ``notifications/progress`` to the ``on_progress`` of the call with that token."""
        token = params.get("progressToken")
        if token is None or isinstance(token, (dict, list)):
            return
        cb = None if self._progress is None else self._progress.get(str(token))
        if cb is None:
            return
        progress = params.get("progress")
        total = params.get("total")
        message = params.get("message")
        if isinstance(progress, bool) or not isinstance(progress, (int, float)):
            log.debug("device %s: progress report without a number: %r", self.device_id, params)
            return
        total_f = None if isinstance(total, bool) or not isinstance(total, (int, float)) else float(total)
        text = message if isinstance(message, str) else None
        self._dispatch([cb], float(progress), total_f, text)

    def _answer_device_request(self, frame: wire.Frame) -> None:
        if frame.method == "ping":
            reply = {"jsonrpc": "2.0", "id": frame.id, "result": {}}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": frame.id,
                "error": {"code": METHOD_NOT_FOUND, "message": f"Method not found: {quoted(frame.method)}"},
            }
        data = wire.encode_envelope(self._session.session_id, reply)
        if self._send_now is not None:
            try:
                self._send_now(data)
            except Exception:
                log.debug("device %s: could not answer %r", self.device_id, frame.method)
            return
        self._spawn(self._send_quietly(data))

    def connection_lost(self, reason: str = "connection lost") -> None:
        """Transports call this once when the link drops: pending calls fail at once."""
        self._mark_closed(reason)

    def _mark_closed(self, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        if self._site is not None:
            self._site.closed = True
        self._close_reason = reason
        n = self._session.fail_all(DeviceDisconnected(f"device {self.device_id!r} disconnected: {reason}"))
        if n:
            log.info("device %s: %d pending call(s) failed: %s", self.device_id, n, reason)
        if self._relist_task is not None:
            self._relist_task.cancel()
        if self._closed_event is not None:
            self._closed_event.set()
        self._dispatch(self._close_callbacks, self)

    async def close(self, reason: str = "closed by the client") -> None:
        """Closes the handle and its transport; pending calls fail with DeviceDisconnected."""
        self._mark_closed(reason)
        try:
            await self._transport.close()
        except Exception:
            log.debug("device %s: error while closing the transport", self.device_id, exc_info=True)

    async def wait_closed(self) -> None:
        if self._closed:
            return
        if self._closed_event is None:
            self._closed_event = asyncio.Event()
        await self._closed_event.wait()

    async def __aenter__(self) -> Device:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- session setup ------------------------------------------------------------------

    def set_return_kinds(self, kinds: Mapping[str, Union[str, int]]) -> None:
        """Declares tools' return kinds (from a known spec) for :meth:`call` decoding."""
        bound = self._bound_kinds
        if bound is None:
            bound = self._bound_kinds = {}
        for name, k in kinds.items():
            bound[name] = wire.kind_code(k) if isinstance(k, str) else int(k)

    async def setup(
        self,
        *,
        fingerprint: Fingerprints = None,
        policy: Policy = "warn",
        timeout: Optional[float] = None,
        init_retry: Optional[float] = None,
        vision: Optional[Mapping[str, str]] = None,
        client_info: Optional[Mapping[str, str]] = None,
    ) -> None:
        """``initialize`` -> ``notifications/initialized`` -> all ``tools/list`` pages ->
        fingerprint check. Raises :class:`SpecMismatch` (and closes) under policy strict.

        ``init_retry`` re-sends ``initialize`` (with a new id) at that interval until the
        device answers: for serial links to devices that may still be booting.
        (:func:`mcpgen.runtime.session.session_setup.setup`.)
        """
        await session_setup.setup(
            self,
            fingerprint=fingerprint,
            policy=policy,
            timeout=timeout,
            init_retry=init_retry,
            vision=vision,
            client_info=client_info,
        )

    async def refresh_tools(self, *, timeout: Optional[float] = None) -> list[ToolInfo]:
        """Reads every ``tools/list`` page (``withUserTools: true``) and replaces the list."""
        tools = await session_setup.list_tools(self, timeout=timeout)
        self._set_tools(tools)
        return list(tools)

    def _set_tools(self, tools: list[ToolInfo]) -> None:
        # One set of tables (and of argument validators) for every handle whose device
        # reported the same tools.
        self._tools, self._tool_map, self._kinds, self._validators = shared.tool_tables(tools, _return_kind)
        if self._tools_changed is not None:
            self._tools_changed.set()

    def _schedule_relist(self) -> None:
        if self._relist_task is not None and not self._relist_task.done():
            self._relist_pending = True
            return
        self._relist_pending = False
        self._relist_task = self._spawn(self._relist())

    async def _relist(self) -> None:
        while True:
            try:
                await self.refresh_tools()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("device %s: re-listing tools failed: %s", self.device_id, exc)
                return
            if not self._relist_pending:
                return
            self._relist_pending = False


def _subscribe(callbacks: list, callback: Any) -> Callable[[], None]:
    callbacks.append(callback)

    def unsubscribe() -> None:
        try:
            callbacks.remove(callback)
        except ValueError:
            pass

    return unsubscribe


async def start_session(
    device: Device,
    *,
    fingerprint: Fingerprints,
    policy: Policy,
    timeout: Optional[float] = None,
    init_retry: Optional[float] = None,
    vision: Optional[Mapping[str, str]] = None,
) -> Device:
    """Runs :meth:`Device.setup`; on any failure closes the device and re-raises."""
    try:
        await device.setup(
            fingerprint=fingerprint, policy=policy, timeout=timeout, init_retry=init_retry, vision=vision
        )
    except BaseException as exc:
        await device.close(f"session setup failed: {exc!r}")
        raise
    return device
