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

The broker client is ``aiomqtt`` (paho-mqtt 2, MQTT 5), imported when the fleet starts.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import socket
import ssl
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Optional, Union

import orjson

from mcpgen.runtime.auth import Authenticator, Handshake, authenticate, bearer_token
from mcpgen.runtime.device import Device, Policy
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout

log = logging.getLogger("mcpgen.runtime.fleet")

_MIN_BACKOFF, _MAX_BACKOFF = 0.2, 5.0  # broker reconnects (devices use the same)

NotificationCallback = Callable[[str, str, dict], Union[None, Awaitable[None]]]
PresenceCallback = Callable[[str, bool], Union[None, Awaitable[None]]]


def _topic_level(value: str, what: str) -> str:
    if not value or any(c in value for c in "/+#"):
        raise ValueError(f"{what} {value!r} must be one non-empty MQTT topic level (no '/', '+' or '#')")
    return value


class FleetTransport:
    """Publishes one handle's requests to the device's down topic with Response Topic
    and Correlation Data set (the properties object is built once and reused)."""

    def __init__(self, fleet: MqttFleet, device_id: str, token: bytes) -> None:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.fleet = fleet
        self.device_id = device_id
        self.token = token
        self.topic = fleet.topic(device_id, "down")
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = fleet.reply_topic(device_id)
        props.CorrelationData = token
        # paho serialises a PUBLISH's properties on every send, walking all ~40 property
        # names; these never change, so they are packed once.
        packed = props.pack()
        object.__setattr__(props, "pack", lambda: packed)
        self.properties = props

    async def send(self, data: bytes) -> None:
        await self.fleet._publish(self.topic, data, self.properties)

    async def close(self) -> None:
        self.fleet._forget(self.token)


class MqttFleet:
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
        topic_prefix: str = "mcpgen",
        group: str = "mcpgen-workers",
        worker_id: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        tls_context: Optional[ssl.SSLContext] = None,
        auth: Optional[Authenticator] = None,
        fingerprint: Optional[str] = None,
        policy: Policy = "warn",
        call_timeout: float = 10.0,
        setup_timeout: Optional[float] = None,
        vision: Optional[Mapping[str, str]] = None,
        keepalive: int = 60,
        qos: int = 0,
        connect_timeout: float = 10.0,
        max_frame: int = 65536,
    ) -> None:
        prefix = topic_prefix.strip("/")
        if not prefix or "+" in prefix or "#" in prefix:
            raise ValueError(f"bad topic prefix {topic_prefix!r} (non-empty, no '+' or '#')")
        if qos not in (0, 1):
            raise ValueError("qos must be 0 or 1")
        self.host = host
        self.port = port
        self.topic_prefix = prefix
        self.group = _topic_level(group, "group")
        self.worker_id = _topic_level(worker_id or uuid.uuid4().hex[:12], "worker_id")
        self.client_id = f"mcpgen-worker-{self.worker_id}"
        self.username = username
        self.password = password
        self.tls_context = tls_context
        self.auth = auth
        self.fingerprint = fingerprint
        self.policy: Policy = policy
        self.call_timeout = call_timeout
        self.setup_timeout = setup_timeout
        self.vision = vision
        self.keepalive = keepalive
        self.qos = qos
        self.connect_timeout = connect_timeout
        self.max_frame = max_frame
        self.hellos = 0  # device hellos this worker answered
        self.rejected = 0  # device hellos refused by ``auth``
        self.stray_replies = 0  # replies for no live handle of this worker (dropped)
        self._head = prefix + "/"
        self._reply_tail = f"/reply/{self.worker_id}"
        self._client: Any = None
        self._paho: Any = None
        self._connected = asyncio.Event()
        self._runner: Optional[asyncio.Task] = None
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

    # -- topics ---------------------------------------------------------------------------

    def topic(self, device_id: str, leaf: str) -> str:
        """``<prefix>/<device_id>/<leaf>`` (``up``, ``down``, ``state``)."""
        return f"{self.topic_prefix}/{device_id}/{leaf}"

    def reply_topic(self, device_id: str) -> str:
        """Where devices answer this worker: ``<prefix>/<device_id>/reply/<worker_id>``."""
        return f"{self.topic_prefix}/{device_id}/reply/{self.worker_id}"

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}/{self.topic_prefix}"

    @property
    def connected(self) -> bool:
        """Whether the worker is attached to the broker right now."""
        return self._client is not None

    def online(self) -> list[str]:
        """Device ids whose retained state is ``online``."""
        return sorted(d for d, up in self._presence.items() if up)

    def is_online(self, device_id: str) -> Optional[bool]:
        """True/False from the device's retained state; None when none was seen."""
        return self._presence.get(device_id)

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> MqttFleet:
        """Connects and subscribes; raises ``aiomqtt.MqttError`` when the broker cannot be used."""
        if self._runner is not None:
            return self
        await self._connect()
        self._runner = asyncio.get_running_loop().create_task(self._run())
        log.info("fleet worker %s on %s (group %s)", self.worker_id, self.url, self.group)
        return self

    async def close(self) -> None:
        """Closes every handle (pending calls fail with DeviceDisconnected) and leaves."""
        self._closing = True
        for task in list(self._opening.values()):
            task.cancel()
        for device in list(self._handles.values()):
            await device.close("the fleet worker is closing")
        if self._runner is not None:
            self._runner.cancel()
            try:
                await self._runner
            except (asyncio.CancelledError, Exception):
                pass
            self._runner = None
        client, self._client, self._paho = self._client, None, None
        self._connected.clear()
        if client is not None:
            await _leave(client)
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
            if not self._connected.is_set():
                if left <= 0:
                    raise DeviceDisconnected(f"not connected to the MQTT broker {self.host}:{self.port}")
                try:
                    await asyncio.wait_for(self._connected.wait(), left)
                except asyncio.TimeoutError:
                    continue
            if self._presence.get(device_id):
                return
            if left <= 0:
                state = self.topic(device_id, "state")
                if self._presence.get(device_id) is False:
                    raise DeviceDisconnected(f"device {device_id!r} is offline ({state} says so)")
                raise DeviceTimeout(f"device {device_id!r}: no presence on {state} within {timeout:g}s")
            event = self._online.setdefault(device_id, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), min(left, 1.0))
            except asyncio.TimeoutError:
                pass

    def _closed(self, device: Device, token: bytes) -> None:
        self._by_token.pop(token, None)
        if self._handles.get(device.device_id) is device:
            del self._handles[device.device_id]

    def _forget(self, token: bytes) -> None:
        self._by_token.pop(token, None)

    # -- broker link ----------------------------------------------------------------------

    async def _connect(self) -> None:
        import aiomqtt

        client = aiomqtt.Client(
            self.host,
            self.port,
            username=self.username,
            password=self.password,
            identifier=self.client_id,
            keepalive=self.keepalive,
            protocol=aiomqtt.ProtocolVersion.V5,
            clean_start=True,
            tls_context=self.tls_context,
            timeout=self.connect_timeout,
            # Requests and replies are small and latency-bound: without TCP_NODELAY
            # Nagle's algorithm holds each back until the broker's delayed ACK (~40 ms).
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            logger=logging.getLogger("mcpgen.runtime.fleet.client"),
        )
        await client.__aenter__()
        try:
            await client.subscribe(
                [
                    (f"$share/{self.group}/{self._head}+/up", 1),
                    (f"{self._head}+/state", 1),
                    (f"{self._head}+{self._reply_tail}", 1),
                ]
            )
        except BaseException:
            await _leave(client)
            raise
        # The hot path goes to paho directly (aiomqtt's own client object, which it
        # exposes as ``_client``): replies are handled in paho's per-topic callback
        # instead of aiomqtt's queue and iterator, and QoS 0 requests are written
        # without aiomqtt's per-publish completion event. This halves the worker's CPU
        # time per call; the rest of the link (connect, subscribe, reconnect) stays
        # aiomqtt's.
        paho = getattr(client, "_client", None)
        if paho is not None and hasattr(paho, "message_callback_add"):
            paho.message_callback_add(f"{self._head}+{self._reply_tail}", self._on_paho_reply)
        self._paho = paho
        self._client = client
        self._connected.set()

    async def _run(self) -> None:
        backoff = _MIN_BACKOFF
        while not self._closing:
            client = self._client
            if client is None:
                try:
                    await self._connect()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    log.warning("MQTT broker %s:%d: %s; retrying in %gs", self.host, self.port, exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, _MAX_BACKOFF)
                    continue
                log.info(
                    "worker %s reconnected to the MQTT broker %s:%d", self.worker_id, self.host, self.port
                )
                backoff = _MIN_BACKOFF
                continue
            reason = "lost the connection to the MQTT broker"
            try:
                async for message in client.messages:
                    try:
                        self._on_message(message)
                    except Exception:
                        log.exception("handling an MQTT message on %s failed", message.topic)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                reason = f"lost the connection to the MQTT broker: {exc}"
            if self._closing:
                return
            log.warning("worker %s: %s; reconnecting", self.worker_id, reason)
            self._client = self._paho = None
            self._connected.clear()
            self._presence.clear()  # the retained states come again after reconnecting
            self._lose_handles(reason)
            await _leave(client)

    def _lose_handles(self, reason: str) -> None:
        # A method of its own: a loop variable in _run's frame would keep the last
        # closed handle (and its session) alive until the next broker loss.
        for device in list(self._handles.values()) + list(self._by_token.values()):
            device.connection_lost(reason)

    async def _publish(self, topic: str, payload: bytes, properties: Any = None) -> None:
        client = self._client
        if client is None:
            raise DeviceDisconnected("not connected to the MQTT broker")
        paho = self._paho
        if self.qos == 0 and paho is not None:
            info = paho.publish(topic, payload, 0, False, properties)
            if info.rc != 0:
                raise DeviceDisconnected(f"publishing to {topic} failed (paho error {info.rc})")
            return
        await client.publish(topic, payload, qos=self.qos, properties=properties)

    def _on_paho_reply(self, _client: Any, _userdata: Any, message: Any) -> None:
        try:
            topic: str = message.topic
            rest = topic[len(self._head) : -len(self._reply_tail)]
            self._on_reply(rest, message.payload, getattr(message, "properties", None))
        except Exception:
            log.exception("handling a reply on %s failed", message.topic)

    # -- incoming -------------------------------------------------------------------------

    def _on_message(self, message: Any) -> None:
        topic: str = message.topic.value
        if not topic.startswith(self._head):
            return
        payload = message.payload
        if not isinstance(payload, (bytes, bytearray)):
            return
        rest = topic[len(self._head) :]
        if rest.endswith(self._reply_tail):
            self._on_reply(rest[: -len(self._reply_tail)], bytes(payload), message.properties)
            return
        device_id, sep, leaf = rest.rpartition("/")
        if not sep or not device_id or "/" in device_id:
            return
        if leaf == "up":
            self._on_up(device_id, bytes(payload))
        elif leaf == "state":
            self._on_state(device_id, bytes(payload))

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
        if state == b"online":
            was = self._presence.get(device_id)
            self._presence[device_id] = True
            event = self._online.pop(device_id, None)
            if event is not None:
                event.set()
            if was is not True:
                self._fire(self._presence_cbs, device_id, True)
        elif state == b"offline":
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
        try:
            msg = orjson.loads(payload)
        except orjson.JSONDecodeError:
            log.debug("device %s: non-JSON message on its up topic dropped", device_id)
            return
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        if kind == "hello" and "jsonrpc" not in msg:
            self._spawn(self._answer_hello(device_id, msg))
            return
        if kind == "mcp":
            msg = msg.get("payload")
            if not isinstance(msg, dict):
                return
        method = msg.get("method")
        if isinstance(method, str) and "id" not in msg:
            params = msg.get("params")
            self._fire(self._notification_cbs, device_id, method, params if isinstance(params, dict) else {})
        else:
            # Replies on the up topic answer requests sent without a Response Topic,
            # which fleet workers never send (an MqttGateway on the same prefix does).
            log.debug("device %s: up message for no fleet request dropped", device_id)

    async def _answer_hello(self, device_id: str, hello: dict) -> None:
        features = hello.get("features")
        if not isinstance(features, dict) or features.get("mcp") is not True:
            self.rejected += 1
            log.warning("device %s: hello without features.mcp=true; ignored", device_id)
            return
        token = hello.get("token")
        if not isinstance(token, str):
            auth_field = hello.get("authorization")
            token = bearer_token(auth_field) if isinstance(auth_field, str) else None
        version = hello.get("version")
        client_id = hello.get("client_id")
        hs = Handshake(
            device_id=device_id,
            client_id=client_id if isinstance(client_id, str) else None,
            token=token,
            protocol_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
            remote=f"mqtt:{self.topic(device_id, 'up')}",
        )
        if not await self._authenticate(hs):
            self.rejected += 1
            log.warning(
                "rejected device %r: %s",
                device_id,
                "no token in its hello" if token is None else "invalid token",
            )
            return
        server_hello = {"type": "hello", "transport": "mqtt", "session_id": str(uuid.uuid4()), "version": 3}
        try:
            await self._publish(self.topic(device_id, "down"), orjson.dumps(server_hello))
        except Exception as exc:
            log.info("device %s: server hello not sent: %s", device_id, exc)
            return
        self.hellos += 1

    async def _authenticate(self, hs: Handshake) -> bool:
        return await authenticate(self.auth, hs, log)

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


async def _leave(client: Any) -> None:
    try:
        await client.__aexit__(None, None, None)
    except Exception as exc:  # already disconnected
        log.debug("MQTT disconnect: %s", exc)


__all__ = ["FleetTransport", "MqttFleet"]
