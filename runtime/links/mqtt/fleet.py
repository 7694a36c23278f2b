"""Backend workers that share one device fleet through an MQTT 5 broker.

Any number of worker processes (on one machine or many) create an :class:`MqttFleet`
on the same broker, topic prefix and ``group``. Then:

* **Any worker calls any device.** ``await fleet.device("kitchen-lamp")`` returns a
  :class:`mcpgen.runtime.Device` (usable with the generated typed bindings as a gateway's
  handle). Its requests are bare JSON-RPC published to ``<prefix>/<id>/down`` with the
  MQTT 5 *Response Topic* ``<prefix>/<id>/reply/<worker_id>`` and *Correlation Data*
  naming the handle; the device publishes the reply there with the same Correlation
  Data. The reply topic lives under the device's own subtree so one broker ACL
  (``pattern write <prefix>/%u/#``) covers it.
* **Device-originated traffic is spread over the workers.** Every worker subscribes to
  ``$share/<group>/<prefix>/+/up``: the broker hands each device ``hello`` and
  notification to one worker of the group. That worker answers the hello with a server
  hello (after the optional ``auth`` check) and gives notifications to its
  :meth:`MqttFleet.on_notification` callbacks.
* **Presence** comes from the retained ``<prefix>/<id>/state`` (``online`` from the
  device, ``offline`` as its Last Will), which every worker follows (not shared: each
  needs all of it). ``offline`` fails that device's pending calls at once with
  ``DeviceDisconnected``.
* **Sessions are per worker.** Each worker runs its own ``initialize`` ->
  ``tools/list`` (the shared :meth:`Device.setup`) the first time it uses a device, over
  the response-topic path. Nothing about a session has to be shared or kept consistent
  between workers, a worker that dies takes nothing with it, and the device's MCP
  server answers any number of initializes (see docs/mqtt.md, "Sessions").

The broker connection is :class:`~mcpgen.runtime.links.mqtt.broker.BrokerLink` (aiomqtt on paho-mqtt 2,
MQTT 5, the client of the MQTT gateway too), whose aiomqtt is imported when the fleet starts.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import ssl
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Optional, Union, Unpack

from mcpgen.extras import missing_extra
from mcpgen.mqtt_topics import (
    DEFAULT_PREFIX,
    DEFAULT_WORKER_GROUP,
    DOWN,
    OFFLINE,
    ONLINE,
    STATE,
    UP,
    is_topic_level,
    reply_leaf,
)
from mcpgen.runtime.auth import authenticate, hello_handshake
from mcpgen.runtime.core import wire
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout
from mcpgen.runtime.links import memtrim
from mcpgen.runtime.links.hub import hello_refusal
from mcpgen.runtime.links.mqtt.broker import BrokerLink, TopicLayout
from mcpgen.runtime.session.device import Device
from mcpgen.runtime.session.fanout import Fanout
from mcpgen.runtime.session.options import HasSessionOptions, SessionKeywords, SessionOptions, session_options

log = logging.getLogger("mcpgen.runtime.links.mqtt.fleet")

NotificationCallback = Callable[[str, str, dict], Union[None, Awaitable[None]]]
PresenceCallback = Callable[[str, bool], Union[None, Awaitable[None]]]


def _topic_level(value: str, what: str) -> str:
    if not is_topic_level(value):
        raise ValueError(f"{what} {value!r} must be one non-empty MQTT topic level (no '/', '+' or '#')")
    return value


class FleetTransport:
    """Publishes one handle's requests to the device's down topic with Response Topic
    and Correlation Data set (the properties object is built once and reused)."""

    def __init__(self, fleet: MqttFleet, device_id: str, token: bytes) -> None:
        try:
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties
        except ModuleNotFoundError as exc:
            raise missing_extra(exc, "the MQTT fleet") from None

        self.fleet = fleet
        self.device_id = device_id
        self.token = token
        self.topic = fleet.topic(device_id, DOWN)
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = fleet.reply_topic(device_id)
        props.CorrelationData = token
        # paho serialises a PUBLISH's properties on every send, walking all ~40 property
        # names; these never change, so they are packed once.
        packed = props.pack()
        object.__setattr__(props, "pack", lambda: packed)
        self.properties = props

    def send_now(self, data: bytes) -> None:
        """Publishes without waiting (calls then take the compiled path, as on WebSocket)."""
        fleet = self.fleet
        fleet._broker.publish_now(self.topic, data, fleet.qos, self.properties)

    async def send(self, data: bytes) -> None:
        self.send_now(data)

    async def close(self) -> None:
        self.fleet._forget(self.token)


class MqttFleet(TopicLayout, HasSessionOptions):
    """One worker of a fleet that shares devices through an MQTT 5 broker (module docstring).

    ``group`` names the shared subscription (workers of one backend use the same group);
    ``worker_id`` (one topic level, random by default) names this worker's reply topics
    and MQTT client id, and must be unique among running workers. ``username`` /
    ``password`` / ``tls_context`` are the worker's broker login. ``auth`` checks the
    ``token`` of device hellos as :class:`mcpgen.runtime.MqttGateway` does.
    ``fingerprint``/``policy``/``vision`` are passed to each handle's setup. ``max_frame``
    bounds a device message in bytes (a larger hello or notification is dropped, a larger
    reply closes the handle it answers). ``qos`` is
    used for requests (and so for the replies; default 0: a request lost with a broker
    connection fails through presence or its timeout anyway, and QoS 1 costs a PUBACK per
    message in both directions).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 1883,
        *,
        topic_prefix: str = DEFAULT_PREFIX,
        group: str = DEFAULT_WORKER_GROUP,
        worker_id: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        tls_context: Optional[ssl.SSLContext] = None,
        options: Optional[SessionOptions] = None,
        keepalive: int = 60,
        qos: int = 0,
        connect_timeout: float = 10.0,
        **session: Unpack[SessionKeywords],
    ) -> None:
        super().__init__(host, port, topic_prefix, qos)
        self.group = _topic_level(group, "group")
        self.worker_id = _topic_level(worker_id or uuid.uuid4().hex[:12], "worker_id")
        self.client_id = f"mcpgen-worker-{self.worker_id}"
        self.options = session_options(options, session)
        self.hellos = 0  # device hellos this worker answered
        self.rejected = 0  # device hellos refused by ``auth``
        self.stray_replies = 0  # replies for no live handle of this worker (dropped)
        self._reply_leaf = reply_leaf(self.worker_id)
        self._reply_tail = f"/{self._reply_leaf}"
        self._closing = False
        self._presence: dict[str, bool] = {}
        self._online: dict[str, asyncio.Event] = {}
        self._handles: dict[str, Device] = {}
        self._opening: dict[str, asyncio.Task] = {}
        self._by_token: dict[bytes, Device] = {}
        self._tokens = itertools.count(1)
        self._epoch = uuid.uuid4().bytes[:4]  # tokens of an earlier run of this worker never match
        self._notification_cbs: list[NotificationCallback] = []
        self._presence_cbs: list[PresenceCallback] = []
        self._tasks: set[asyncio.Task] = set()
        self._trimmer = memtrim.Trimmer(release=memtrim.release_sessions)
        up, state = self.device_filter(f"/{UP}"), self.device_filter(f"/{STATE}")
        replies = self.device_filter(self._reply_tail)
        self._broker = BrokerLink(
            host,
            port,
            client_id=self.client_id,
            subscriptions=[(f"$share/{self.group}/{up}", 1), (state, 1), (replies, 1)],
            routes=[
                (replies, self._on_reply_message),
                (up, self._on_up_message),
                (state, self._on_state_message),
            ],
            on_lost=self._broker_lost,
            username=username,
            password=password,
            tls_context=tls_context,
            keepalive=keepalive,
            connect_timeout=connect_timeout,
            logger=log,
            name=f"worker {self.worker_id}",
        )

    # -- topics ---------------------------------------------------------------------------

    def reply_topic(self, device_id: str) -> str:
        """Where devices answer this worker: ``<prefix>/<device_id>/reply/<worker_id>``."""
        return self.topic(device_id, self._reply_leaf)

    @property
    def connected(self) -> bool:
        """Whether the worker is attached to the broker right now."""
        return self._broker.connected

    def online(self) -> list[str]:
        """Device ids whose retained state is ``online``."""
        return sorted(d for d, up in self._presence.items() if up)

    def is_online(self, device_id: str) -> Optional[bool]:
        """True/False from the device's retained state; None when none was seen."""
        return self._presence.get(device_id)

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> MqttFleet:
        """Connects and subscribes; raises ``aiomqtt.MqttError`` when the broker cannot be used."""
        await self._broker.start()
        log.info("fleet worker %s on %s (group %s)", self.worker_id, self.url, self.group)
        return self

    async def close(self) -> None:
        """Closes every handle (pending calls fail with DeviceDisconnected) and leaves."""
        self._closing = True
        for task in list(self._opening.values()):
            task.cancel()
        for device in list(self._handles.values()):
            await device.close("the fleet worker is closing")
        await self._broker.close()
        self._trimmer.cancel()
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> MqttFleet:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the API --------------------------------------------------------------------------

    async def device(self, device_id: str, *, timeout: Optional[float] = None) -> Device:
        """A ready handle on ``device_id`` (its MCP session with this worker).

        Waits up to ``timeout`` (default: ``call_timeout``) for the device to be
        online, then runs ``initialize`` -> ``tools/list`` once per worker; later calls
        return the same handle while it is open. Raises ``DeviceDisconnected`` when the
        device stays offline (its Last Will) or the broker is unreachable,
        ``DeviceTimeout`` when no presence was seen at all, and the setup's errors
        (``SpecMismatch`` under policy strict, ``DeviceTimeout``).
        """
        _topic_level(device_id, "device_id")
        handle = self._handles.get(device_id)
        if handle is not None and not handle.closed:
            return handle
        if self._closing:
            raise DeviceDisconnected("the fleet worker is closed")
        task = self._opening.get(device_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._open(device_id, timeout))
            self._opening[device_id] = task
            task.add_done_callback(
                lambda t: self._opening.pop(device_id, None) if self._opening.get(device_id) is t else None
            )
        return await asyncio.shield(task)

    async def fanout(self, device_ids: Iterable[str], *, timeout: Optional[float] = None) -> Fanout:
        """A :class:`~mcpgen.runtime.session.fanout.Fanout` over ``device_ids`` (results keyed by id;
        typed: ``DeskLamp.fanout(await fleet.fanout(ids))``). Their handles are opened at
        once as :meth:`device` does; a device that cannot be opened gets that error as its
        result. ``timeout``: each device's call deadline (default ``call_timeout``)."""
        ids = list(device_ids)
        opened = await asyncio.gather(*(self.device(i) for i in ids), return_exceptions=True)
        return Fanout(dict(zip(ids, opened, strict=True)), timeout=timeout)

    def on_notification(self, callback: NotificationCallback) -> Callable[[], None]:
        """``callback(device_id, method, params)`` for device notifications this worker
        receives (each one reaches one worker of the group). Returns an unsubscribe."""
        return _subscribe(self._notification_cbs, callback)

    def on_presence(self, callback: PresenceCallback) -> Callable[[], None]:
        """``callback(device_id, online)`` on every state change this worker sees."""
        return _subscribe(self._presence_cbs, callback)

    # -- handles --------------------------------------------------------------------------

    async def _open(self, device_id: str, timeout: Optional[float]) -> Device:
        t = self.call_timeout if timeout is None else timeout
        await self._wait_online(device_id, t)
        token = self._epoch + next(self._tokens).to_bytes(8, "big")
        transport = FleetTransport(self, device_id, token)
        device = Device(transport, device_id=device_id, call_timeout=self.call_timeout)
        self._by_token[token] = device
        device.on_close(lambda d: self._closed(d, token))
        try:
            await device.setup(
                fingerprint=self.fingerprint,
                policy=self.policy,
                timeout=self.setup_timeout if self.setup_timeout is not None else t,
                vision=self.vision,
            )
        except BaseException:
            await device.close("session setup failed")
            raise
        if device.closed:  # went offline or lost the broker during the setup
            raise DeviceDisconnected(f"device {device_id!r} disconnected during setup: {device.close_reason}")
        self._handles[device_id] = device
        self._trimmer.departed(len(self._by_token))  # (an arrival: the trimmer's peak)
        return device

    async def _wait_online(self, device_id: str, timeout: float) -> None:
        try:
            await self._wait_online_loop(device_id, timeout)
        finally:
            # One waiter per id at a time (device() shares one _open task per id): its
            # Event goes with it, or every id ever asked for (a departed device, a typo)
            # would keep one.
            self._online.pop(device_id, None)

    async def _wait_online_loop(self, device_id: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if not self._broker.ready.is_set():
                if left <= 0:
                    raise DeviceDisconnected(f"not connected to the MQTT broker {self.host}:{self.port}")
                try:
                    await asyncio.wait_for(self._broker.ready.wait(), left)
                except TimeoutError:
                    continue
            if self._presence.get(device_id):
                return
            if left <= 0:
                state = self.topic(device_id, STATE)
                if self._presence.get(device_id) is False:
                    raise DeviceDisconnected(f"device {device_id!r} is offline ({state} says so)")
                raise DeviceTimeout(f"device {device_id!r}: no presence on {state} within {timeout:g}s")
            event = self._online.setdefault(device_id, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), min(left, 1.0))
            except TimeoutError:
                pass

    def _closed(self, device: Device, token: bytes) -> None:
        self._by_token.pop(token, None)
        self._trimmer.departed(len(self._by_token))  # memory back to the OS after mass departures
        if self._handles.get(device.device_id) is device:
            del self._handles[device.device_id]

    def _forget(self, token: bytes) -> None:
        self._by_token.pop(token, None)

    # -- broker link ----------------------------------------------------------------------

    def _broker_lost(self, reason: str) -> None:
        self._presence.clear()  # the retained states come again after reconnecting
        for device in list(self._handles.values()) + list(self._by_token.values()):
            device.connection_lost(reason)

    # -- incoming -------------------------------------------------------------------------

    def _on_reply_message(self, message: Any) -> None:
        device_id = self.device_of(message.topic, self._reply_tail)
        if device_id is not None:
            self._on_reply(device_id, message.payload, message.properties)

    def _on_up_message(self, message: Any) -> None:
        device_id = self.device_of(message.topic, f"/{UP}")
        if device_id is not None:
            self._on_up(device_id, message.payload)

    def _on_state_message(self, message: Any) -> None:
        device_id = self.device_of(message.topic, f"/{STATE}")
        if device_id is not None:
            self._on_state(device_id, message.payload)

    def _on_reply(self, device_id: str, payload: bytes, properties: Any) -> None:
        token = getattr(properties, "CorrelationData", None) if properties is not None else None
        device = self._by_token.get(bytes(token)) if token else None
        # The topic names the device (only it may publish there under the ACL): a reply
        # must come from the device the handle talks to.
        if device is None or device.device_id != device_id:
            self.stray_replies += 1
            log.debug("reply from %s for no live handle of worker %s; dropped", device_id, self.worker_id)
            return
        if len(payload) > self.max_frame:
            # As the gateway closes a connection that sends a frame over max_frame, the
            # handle is closed: its calls fail at once, the next device() starts over.
            reason = f"a reply of {len(payload)} bytes exceeds max_frame={self.max_frame}"
            log.warning("device %s: %s; closing worker %s's handle", device_id, reason, self.worker_id)
            device.connection_lost(reason)
            return
        device.feed(payload)

    def _on_state(self, device_id: str, payload: bytes) -> None:
        state = payload.strip().lower()
        if state == ONLINE:
            was = self._presence.get(device_id)
            self._presence[device_id] = True
            event = self._online.pop(device_id, None)
            if event is not None:
                event.set()
            if was is not True:
                self._fire(self._presence_cbs, device_id, True)
        elif state == OFFLINE:
            was = self._presence.get(device_id)
            self._presence[device_id] = False
            for device in [d for d in self._by_token.values() if d.device_id == device_id]:
                device.connection_lost("device went offline (MQTT last will)")
            if was is not False:
                self._fire(self._presence_cbs, device_id, False)
        elif not state:
            # The retained state was cleared (an empty retained message: the device was
            # decommissioned): forget the device, or the table only ever grows.
            was = self._presence.pop(device_id, None)
            for device in [d for d in self._by_token.values() if d.device_id == device_id]:
                device.connection_lost("device's retained state was cleared (it left the fleet)")
            if was:
                self._fire(self._presence_cbs, device_id, False)

    def _on_up(self, device_id: str, payload: bytes) -> None:
        if len(payload) > self.max_frame:
            log.warning(
                "device %s: message of %d bytes exceeds max_frame=%d; dropped",
                device_id,
                len(payload),
                self.max_frame,
            )
            return
        frame = wire.decode_frame(payload)
        hello = wire.hello_of(frame)
        if hello is not None:
            self._spawn(self._answer_hello(device_id, hello))
        elif frame.kind == wire.FRAME_NOTIFICATION:
            params = frame.params if isinstance(frame.params, dict) else {}
            self._fire(self._notification_cbs, device_id, frame.method, params)
        elif frame.kind == wire.FRAME_INVALID:
            log.debug("device %s: message on its up topic that is not JSON-RPC dropped", device_id)
        else:
            # Replies on the up topic answer requests sent without a Response Topic,
            # which fleet workers never send (an MqttGateway on the same prefix does).
            log.debug("device %s: up message for no fleet request dropped", device_id)

    async def _answer_hello(self, device_id: str, hello: dict) -> None:
        refusal = hello_refusal(hello)
        if refusal is not None:
            self.rejected += 1
            log.warning("device %s: %s; refused", device_id, refusal)
            return
        hs = hello_handshake(device_id, hello, f"mqtt:{self.topic(device_id, 'up')}")
        if not await authenticate(self.auth, hs, log):
            self.rejected += 1
            reason = "no token in its hello" if hs.token is None else "invalid token"
            log.warning("rejected device %r: %s", device_id, reason)
            return
        # No session is kept here: each worker opens its own over the response-topic path.
        hello_reply = wire.encode_hello("mqtt", str(uuid.uuid4()))
        try:
            self._broker.publish_now(self.topic(device_id, DOWN), hello_reply, self.qos)
        except Exception as exc:
            log.info("device %s: server hello not sent: %s", device_id, exc)
            return
        self.hellos += 1

    # -- callbacks --------------------------------------------------------------------------

    def _fire(self, callbacks: list, *args: Any) -> None:
        for cb in list(callbacks):
            try:
                result = cb(*args)
                if inspect.isawaitable(result):
                    self._spawn(_await_quietly(result))
            except Exception:
                log.exception("fleet callback %r failed", cb)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _subscribe(callbacks: list, callback: Any) -> Callable[[], None]:
    callbacks.append(callback)

    def unsubscribe() -> None:
        if callback in callbacks:
            callbacks.remove(callback)

    return unsubscribe


async def _await_quietly(aw: Awaitable[Any]) -> None:
    try:
        await aw
    except Exception:
        log.exception("fleet callback failed")


__all__ = ["FleetTransport", "MqttFleet"]
