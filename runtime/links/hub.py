"""Where devices arrive: what every device-facing server does, whatever the transport.

:class:`DeviceHub` is the base of the WebSocket :class:`~mcpgen.runtime.links.websocket.gateway.Gateway`
and the :class:`~mcpgen.runtime.links.mqtt.gateway.MqttGateway`, which are siblings on it. A transport
subclass moves bytes and reports three events (a device said hello, the hub may open
its session, the device's link ended); the hub owns the rest:

* the device ``hello``: recognised and checked (``features.mcp`` must be true), then
  answered with the server hello that names the new session (both encoded in
  :mod:`mcpgen.runtime.core.wire`, the one place for the xiaozhi envelope and hello);
* authentication through :func:`mcpgen.runtime.auth.authenticate` (sync or async
  authenticators; one that raises refuses);
* one live session per device id: a device that says hello again (it reconnected, or
  it restarted) replaces its old session, whose pending calls fail with
  ``DeviceDisconnected``;
* the MCP session setup with the fingerprint policy (:meth:`Device.setup
  <mcpgen.runtime.session.device.Device.setup>`);
* handing out ready devices: ``connected``, :meth:`DeviceHub.wait_for_device` (each
  device claimed once) and :meth:`DeviceHub.devices`;
* background tasks (awaited on close), and freezing the GC's view of set-up sessions
  once a process holds thousands of them.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import inspect
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any, Optional, Unpack

from mcpgen.runtime.auth import Handshake, authenticate
from mcpgen.runtime.core import wire
from mcpgen.runtime.errors import DeviceTimeout, LogThrottle, SpecMismatch, quoted
from mcpgen.runtime.session import shared
from mcpgen.runtime.session.device import Device, Transport
from mcpgen.runtime.session.options import HasSessionOptions, SessionKeywords, SessionOptions, session_options

#: gc_freeze=None (auto) freezes the GC's view of set-up sessions from this many devices
#: on, FREEZE_DELAY seconds after the last device of a burst became ready.
FREEZE_MIN_DEVICES = 2000
FREEZE_DELAY = 1.0


def hello_refusal(hello: Optional[dict]) -> Optional[str]:
    """None when ``hello`` (from :func:`wire.decode_hello`, None when the message was not
    a hello) is one the runtime serves: MCP support (``features.mcp: true``); else why not."""
    if hello is None:
        return "hello expected"
    features = hello.get("features")
    if isinstance(features, dict) and features.get("mcp") is True:
        return None
    return "MCP support (features.mcp) required"


class DeviceHub(HasSessionOptions):
    """The transport-neutral half of a gateway (see the module docstring).

    The session settings are one :class:`~mcpgen.runtime.session.options.SessionOptions`
    (``options=``, or its fields as keyword arguments), kept in :attr:`options`.

    Subclasses set :attr:`transport_name` and :attr:`log`, call :meth:`_hello_refusal`
    and :meth:`_open_session` when a device says hello, send :meth:`_server_hello`,
    start the setup with :meth:`_start_setup`, and call ``device.connection_lost`` /
    :meth:`_gone` when its link ends. ``rejected`` counts devices refused at the
    handshake or the hello (authentication, a hello that is not one).
    """

    #: The server hello's ``transport`` field (``"websocket"``, ``"mqtt"``).
    transport_name = ""
    log = logging.getLogger("mcpgen.runtime.links.hub")

    def __init__(
        self,
        *,
        options: Optional[SessionOptions] = None,
        gc_freeze: Optional[bool] = None,
        **session: Unpack[SessionKeywords],
    ) -> None:
        self.options = session_options(options, session)
        self.gc_freeze = gc_freeze
        self.rejected = 0
        self._refusal_log = LogThrottle(self.log)  # refused hellos: a peer's choice, so rate-limited
        self.connected: dict[str, Device] = {}  # device id -> ready handle
        self._live: dict[str, Device] = {}  # device id -> newest handle, ready or in setup
        self._setups: dict[Device, asyncio.Task] = {}
        self._waiters: list[tuple[Optional[str], asyncio.Future]] = []
        self._queues: list[asyncio.Queue] = []
        self._unclaimed: collections.deque[Device] = collections.deque()
        self._closing = False
        self._tasks: set[asyncio.Task] = set()
        self._frozen = 0  # ready devices when this hub last called gc.freeze() (0: not frozen)
        self._left_since_freeze = 0
        self._freeze_timer: Optional[asyncio.TimerHandle] = None

    # -- handing out devices ------------------------------------------------------------

    async def wait_for_device(
        self, device_id: Optional[str] = None, timeout: Optional[float] = 10.0
    ) -> Device:
        """A ready device handle, waiting up to ``timeout`` for one (then :class:`DeviceTimeout`).

        With ``device_id``: that device's current handle. Without: the oldest ready device
        not handed out by ``wait_for_device`` before, so repeated calls collect every
        device once (a device that reconnects counts as new).
        """
        if device_id is not None:
            d = self.connected.get(device_id)
            if d is not None and not d.closed:
                self._claim(d)
                return d
        else:
            while self._unclaimed:
                d = self._unclaimed.popleft()
                if not d.closed:
                    return d
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        entry = (device_id, fut)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise DeviceTimeout(
                f"no device{'' if device_id is None else ' ' + repr(device_id)} ready within {timeout}s"
            ) from None
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    def _claim(self, device: Device) -> None:
        try:
            self._unclaimed.remove(device)
        except ValueError:
            pass

    async def devices(self) -> AsyncIterator[Device]:
        """Every device as its session becomes ready (those already connected first),
        until the hub closes."""
        if self._closing:
            return
        q: asyncio.Queue = asyncio.Queue()
        for d in self.connected.values():
            if not d.closed:
                q.put_nowait(d)
        self._queues.append(q)
        try:
            while True:
                d = await q.get()
                if d is None:
                    return
                if not d.closed:
                    yield d
        finally:
            if q in self._queues:
                self._queues.remove(q)

    # -- hello, authentication, sessions --------------------------------------------------

    def _hello_refusal(self, device_id: str, hello: Optional[dict]) -> Optional[str]:
        """None when ``hello`` (from :func:`wire.decode_hello`) may open a session; else
        why not, logged and counted in ``rejected``."""
        reason = hello_refusal(hello)
        if reason is None:
            return None
        self.rejected += 1
        self._refusal_log.warning("device %s: %s; refused", quoted(device_id), reason)
        return reason

    async def _authenticate(self, hs: Handshake) -> bool:
        """Whether the authenticator (if any) accepts ``hs``; one that raises refuses (logged)."""
        return await authenticate(self.auth, hs, self.log)

    def _authenticate_now(self, hs: Handshake) -> Any:
        """True/False when the answer is known at once (no authenticator, or a synchronous
        one), else the awaitable that gives it."""
        if self.auth is None:
            return True
        try:
            ok = self.auth.authenticate(hs)
        except Exception:
            self.log.exception("authenticator failed for device %s", quoted(repr(hs.device_id)))
            return False
        if inspect.isawaitable(ok):
            return self._await_auth(hs, ok)
        return bool(ok)

    async def _await_auth(self, hs: Handshake, pending: Any) -> bool:
        try:
            return bool(await pending)
        except Exception:
            self.log.exception("authenticator failed for device %s", quoted(repr(hs.device_id)))
            return False

    def _open_session(self, transport: Transport, hs: Handshake, hello: dict) -> Device:
        """A new session (fresh session id) for the device of ``hs``; its previous session,
        if any, is replaced: :meth:`_replaced` closes it in the background."""
        session_id = str(uuid.uuid4())
        device_id = hs.device_id
        device = Device(transport, device_id=device_id, session_id=session_id, call_timeout=self.call_timeout)
        device.client_id = hs.client_id
        device.hello = shared.shared_json(hello)  # one copy for all devices that said the same
        old = self._live.get(device_id)
        self._live[device_id] = device
        if old is not None:
            self.log.info("device %s said hello again; closing its previous session", device_id)
            self._gone(old)
            self._live[device_id] = device
            self._replaced(old)
        device.on_close(self._gone)
        return device

    def _replaced(self, old: Device) -> None:
        """Ends a session replaced by a newer one of the same device: its pending calls
        fail now; its link closes in the background (a half-open old link must not delay
        the new session)."""
        self._background(old.close("replaced by a new session from the same device"))

    def _server_hello(self, device: Device) -> bytes:
        assert device.session_id is not None
        return wire.encode_hello(self.transport_name, device.session_id)

    def _start_setup(self, device: Device) -> asyncio.Task:
        """Runs the MCP session setup; the device is handed out when it succeeds."""
        task = asyncio.get_running_loop().create_task(self._setup(device))
        self._setups[device] = task
        task.add_done_callback(lambda _t: self._setups.pop(device, None))
        return task

    def _cancel_setup(self, device: Device) -> None:
        task = self._setups.get(device)
        if task is not None and not task.done():
            task.cancel()

    async def _setup(self, device: Device) -> None:
        try:
            await device.setup(
                fingerprint=self.fingerprint,
                policy=self.policy,
                timeout=self.setup_timeout,
                vision=self.vision,
            )
        except SpecMismatch as exc:
            self.log.warning("device %s refused: %s", device.device_id, exc)
            await device.close(f"refused: {exc}")
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not device.closed:
                self.log.warning("device %s: session setup failed: %s", device.device_id, exc)
            await device.close(f"session setup failed: {exc}")
            return
        self._ready(device)

    def _ready(self, device: Device) -> None:
        if self._live.get(device.device_id) is not device or device.closed:
            return
        self.connected[device.device_id] = device
        self.log.info(
            "device %s ready (%s, %d tools, fingerprint %s%s)",
            device.device_id,
            device.server_info.get("name", "?"),
            len(device.tools),
            device.fingerprint,
            ", dynamic" if device.dynamic else "",
        )
        claimed = False
        for entry in list(self._waiters):
            want, fut = entry
            if fut.done():
                continue
            if want == device.device_id or (want is None and not claimed):
                fut.set_result(device)
                self._waiters.remove(entry)
                claimed = True
        if not claimed:
            self._unclaimed.append(device)
        for q in self._queues:
            q.put_nowait(device)
        self._schedule_freeze()

    def _gone(self, device: Device) -> None:
        """Forgets a session that ended (idempotent; a newer session of the device stays)."""
        if self._frozen and (self.connected.get(device.device_id) is device):
            self._left_since_freeze += 1
            if self._left_since_freeze > max(100, self._frozen // 10):
                self._thaw()  # many sessions ended: let the GC reclaim them, re-freeze later
                self._schedule_freeze()
        self._claim(device)
        if self.connected.get(device.device_id) is device:
            del self.connected[device.device_id]
        if self._live.get(device.device_id) is device:
            del self._live[device.device_id]

    def _background(self, coro: Any) -> asyncio.Task:
        """Runs ``coro`` as a task the hub keeps (and awaits when it closes)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- closing --------------------------------------------------------------------------

    @property
    def closing(self) -> bool:
        """True once closing started: no new sessions are accepted."""
        return self._closing

    async def _close_sessions(self, reason: str) -> None:
        """First half of closing: no new sessions, every live one closed with ``reason``."""
        self._closing = True
        devices = list(self._live.values())
        await asyncio.gather(*(d.close(reason) for d in devices), return_exceptions=True)

    async def _finish_close(self, reason: str) -> None:
        """Last half of closing: setups and background tasks awaited, waiters failed,
        ``devices()`` iterators ended."""
        tasks = list(self._setups.values()) + list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._freeze_timer is not None:
            self._freeze_timer.cancel()
            self._freeze_timer = None
        self._thaw()
        for _, fut in self._waiters:
            if not fut.done():
                fut.set_exception(DeviceTimeout(reason))
        self._waiters.clear()
        for q in self._queues:
            q.put_nowait(None)

    # -- GC: freeze the sessions' objects once devices are set up ---------------------------

    def _want_freeze(self) -> bool:
        if self.gc_freeze is None:
            return len(self.connected) >= FREEZE_MIN_DEVICES
        return self.gc_freeze

    def _schedule_freeze(self) -> None:
        """After the last of a burst of devices is ready: one timer, moved on each arrival."""
        if not self._want_freeze():
            return
        if self._freeze_timer is not None:
            self._freeze_timer.cancel()
        self._freeze_timer = asyncio.get_running_loop().call_later(FREEZE_DELAY, self._freeze)

    def _freeze(self) -> None:
        # Measured (docs/benchmarks.md): with 10,000 devices the cyclic GC's full
        # collections, walking every session's objects again and again, cost more than
        # the calls themselves; frozen, those objects are skipped. Neutral at 1,000.
        self._freeze_timer = None
        if self._closing or not self._want_freeze():
            return
        gc.freeze()
        self._frozen = len(self.connected)
        self._left_since_freeze = 0
        self.log.info("gc.freeze() with %d devices ready", self._frozen)

    def _thaw(self) -> None:
        """Undoes our freeze so departed sessions' reference cycles can be collected."""
        if self._frozen:
            gc.unfreeze()
            self._frozen = 0
            self._left_since_freeze = 0


__all__ = ["DeviceHub", "FREEZE_DELAY", "FREEZE_MIN_DEVICES", "hello_refusal"]
