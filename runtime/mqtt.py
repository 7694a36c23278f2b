"""The MQTT device gateway: devices reach the backend through an MQTT broker.

Topics (``prefix`` defaults to ``mcpgen``; see docs/mqtt.md):

* ``<prefix>/<device_id>/up``    device -> backend: the device ``hello``, MCP envelopes,
  device notifications (the gateway subscribes to ``<prefix>/+/up``);
* ``<prefix>/<device_id>/down``  backend -> device: the server ``hello``, MCP envelopes,
  ``goodbye``;
* ``<prefix>/<device_id>/state`` ``online`` (retained, published by the device after it
  connects) or ``offline`` (retained, the device's Last Will, published by the broker
  when the device's connection drops or its keepalive lapses).

Messages are exactly those of the WebSocket mode (:mod:`runtime.gateway`): the device
sends its hello (``transport: "mqtt"``, ``features.mcp: true``, ``client_id`` and an
optional ``token``), the gateway authenticates it (the same
:class:`~runtime.auth.Authenticator` objects, fed a :class:`~runtime.auth.Handshake`
built from the hello and the topic), answers ``{"type": "hello", "transport": "mqtt",
"session_id": <uuid>, "version": 3}`` and runs the shared session setup of
:class:`runtime.device.Device`. The handing out of devices (``wait_for_device``,
``devices()``, ``connected``) is :class:`runtime.gateway.Gateway`'s own.

MQTT has no connection per device at the gateway, so the end of a device is its
``offline`` state: pending calls then fail with ``DeviceDisconnected`` at once. A device
that just stops answering still ends its calls with ``DeviceTimeout``. A ``goodbye``
(``{"type": "goodbye", "session_id": ...}``) on the down topic ends a device's session;
the gateway sends one when it closes a session and, without a session id, to every device
it sees ``online`` (retained) without a session, so devices that outlived a gateway
restart send a fresh hello at once.

The broker client is ``aiomqtt`` (on ``paho-mqtt``), imported when the gateway starts, so
``import mcpgen.runtime`` works without it.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import uuid
import weakref
from collections.abc import Mapping
from typing import Any, Optional

import orjson

from mcpgen.runtime.auth import Authenticator, Handshake, bearer_token
from mcpgen.runtime.device import Device, Policy
from mcpgen.runtime.errors import DeviceDisconnected
from mcpgen.runtime.gateway import Gateway

log = logging.getLogger("mcpgen.runtime.mqtt")

_NUDGE_INTERVAL = 2.0  # at most one unsolicited goodbye per device in this many seconds
_MIN_BACKOFF, _MAX_BACKOFF = 0.2, 5.0  # broker reconnects (the devices use the same)


class MqttTransport:
    """Publishes one device session's frames to ``<prefix>/<device_id>/down``."""

    def __init__(self, gateway: MqttGateway, topic: str, session_id: str) -> None:
        self.gateway = gateway
        self.topic = topic
        self.session_id = session_id
        self.offline = False  # the device's will said offline: nothing can reach it
        self.silent = False  # superseded by the device's own new hello: no goodbye
        self.closed = False

    async def send(self, data: bytes) -> None:
        if self.closed:
            raise DeviceDisconnected("the MQTT session is closed")
        await self.gateway._publish(self.topic, data)

    async def close(self) -> None:
        """Ends the session; the device hears a ``goodbye`` unless it is gone or moved on."""
        if self.closed:
            return
        self.closed = True
        if self.offline or self.silent or self.gateway._client is None:
            return
        goodbye = orjson.dumps({"session_id": self.session_id, "type": "goodbye"})
        try:
            await asyncio.wait_for(self.gateway._publish(self.topic, goodbye), 2.0)
        except Exception as exc:  # the broker link is going away; the session ends anyway
            log.debug("goodbye to %s not sent: %s", self.topic, exc)


class MqttGateway(Gateway):
    """Serves devices that connect to an MQTT broker (see the module docstring).

    ``host``/``port`` are the broker's; ``username``/``password`` the gateway's own broker
    credentials; ``client_id`` its MQTT client identifier (random by default). Devices
    are authenticated by the broker (their credentials, ACLs on the topics) and, when
    ``auth`` is given, by ``auth.authenticate(Handshake)`` with the hello's ``token``
    (or ``authorization: "Bearer ..."``) and ``client_id``. Other arguments as
    :class:`runtime.gateway.Gateway`. ``qos`` is used for the down publishes and the up
    subscription (the state topic is always QoS 1).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 1883,
        *,
        topic_prefix: str = "mcpgen",
        username: Optional[str] = None,
        password: Optional[str] = None,
        client_id: Optional[str] = None,
        auth: Optional[Authenticator] = None,
        fingerprint: Optional[str] = None,
        policy: Policy = "warn",
        call_timeout: float = 10.0,
        setup_timeout: Optional[float] = None,
        vision: Optional[Mapping[str, str]] = None,
        max_frame: int = 65536,
        keepalive: int = 60,
        qos: int = 1,
        connect_timeout: float = 10.0,
    ) -> None:
        super().__init__(
            host,
            port,
            auth=auth,
            fingerprint=fingerprint,
            policy=policy,
            max_frame=max_frame,
            call_timeout=call_timeout,
            setup_timeout=setup_timeout,
            vision=vision,
        )
        prefix = topic_prefix.strip("/")
        if not prefix or "+" in prefix or "#" in prefix:
            raise ValueError(f"bad topic prefix {topic_prefix!r} (non-empty, no '+' or '#')")
        if qos not in (0, 1):
            raise ValueError("qos must be 0 or 1")
        self.topic_prefix = prefix
        self.username = username
        self.password = password
        self.client_id = client_id or f"mcpgen-gateway-{uuid.uuid4().hex[:12]}"
        self.keepalive = keepalive
        self.qos = qos
        self.connect_timeout = connect_timeout
        self._client: Any = None  # aiomqtt.Client while connected to the broker
        self._runner: Optional[asyncio.Task] = None
        self._nudged: dict[str, float] = {}
        self._transports: weakref.WeakKeyDictionary[Device, MqttTransport] = weakref.WeakKeyDictionary()
        self._head = prefix + "/"

    # -- topics ---------------------------------------------------------------------------

    def topic(self, device_id: str, leaf: str) -> str:
        """``<prefix>/<device_id>/<leaf>`` (leaf: ``up``, ``down`` or ``state``)."""
        return f"{self.topic_prefix}/{device_id}/{leaf}"

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}/{self.topic_prefix}"

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> MqttGateway:
        """Connects to the broker and subscribes; raises ``aiomqtt.MqttError`` when it cannot."""
        if self._runner is not None:
            return self
        await self._connect()
        self._runner = asyncio.get_running_loop().create_task(self._run())
        log.info("MQTT gateway on %s (client %s)", self.url, self.client_id)
        return self

    async def close(self) -> None:
        """Ends every session (devices get a ``goodbye``), then leaves the broker."""
        await super().close()
        if self._runner is not None:
            self._runner.cancel()
            try:
                await self._runner
            except (asyncio.CancelledError, Exception):
                pass
            self._runner = None
        client, self._client = self._client, None
        if client is not None:
            await _leave(client)

    async def __aenter__(self) -> MqttGateway:
        return await self.start()

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
            clean_session=True,
            protocol=aiomqtt.ProtocolVersion.V311,
            timeout=self.connect_timeout,
            # Small latency-bound frames: Nagle's algorithm would hold each back until
            # the broker's delayed ACK (docs/mqtt.md, "Latency").
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            logger=logging.getLogger("mcpgen.runtime.mqtt.client"),
        )
        await client.__aenter__()
        try:
            await client.subscribe([(f"{self._head}+/up", self.qos), (f"{self._head}+/state", 1)])
        except BaseException:
            await _leave(client)
            raise
        self._client = client

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
                log.info("reconnected to the MQTT broker %s:%d", self.host, self.port)
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
            log.warning("%s; devices are disconnected until it is back", reason)
            self._client = None
            for device in list(self._live.values()):
                device.connection_lost(reason)
            await _leave(client)

    async def _publish(self, topic: str, payload: bytes) -> None:
        client = self._client
        if client is None:
            raise DeviceDisconnected("not connected to the MQTT broker")
        await client.publish(topic, payload, qos=self.qos)

    # -- incoming -------------------------------------------------------------------------

    def _on_message(self, message: Any) -> None:
        topic: str = message.topic.value
        if not topic.startswith(self._head):
            return
        device_id, sep, leaf = topic[len(self._head) :].rpartition("/")
        if not sep or not device_id or "/" in device_id:
            return
        payload = message.payload
        if not isinstance(payload, (bytes, bytearray)):
            return
        if leaf == "up":
            self._on_up(device_id, bytes(payload))
        elif leaf == "state":
            self._on_state(device_id, bytes(payload), bool(message.retain))

    def _on_up(self, device_id: str, payload: bytes) -> None:
        device = self._live.get(device_id)
        if len(payload) > self.max_frame:
            log.warning(
                "device %s: message of %d bytes exceeds max_frame=%d; session closed",
                device_id,
                len(payload),
                self.max_frame,
            )
            if device is not None:
                self._background(device.close(f"frame larger than max_frame={self.max_frame} refused"))
            return
        if device is None or b'"hello"' in payload:
            try:
                msg = orjson.loads(payload)
            except orjson.JSONDecodeError:
                msg = None
            if isinstance(msg, dict) and msg.get("type") == "hello" and "jsonrpc" not in msg:
                self._on_hello(device_id, msg)
                return
            if device is None:
                # Not in a session with us (we restarted, or the session was closed):
                # a goodbye makes the device say hello again.
                log.debug("device %s: message without a session: %r", device_id, payload[:80])
                self._nudge(device_id)
                return
        device.feed(payload)

    def _on_state(self, device_id: str, payload: bytes, retained: bool) -> None:
        state = payload.strip().lower()
        if state == b"offline":
            device = self._live.get(device_id)
            if device is not None:
                transport = self._transports.get(device)
                if transport is not None:
                    transport.offline = True
                device.connection_lost("device went offline (MQTT last will)")
            self._nudged.pop(device_id, None)
        elif state == b"online" and retained and device_id not in self._live:
            # Connected before we subscribed: it may be waiting in a session with a
            # gateway that is gone.
            self._nudge(device_id)

    def _nudge(self, device_id: str) -> None:
        now = time.monotonic()
        if now - self._nudged.get(device_id, -_NUDGE_INTERVAL) < _NUDGE_INTERVAL:
            return
        self._nudged[device_id] = now
        log.info("device %s: no session; asking it for a new hello", device_id)
        self._background(self._publish_quietly(self.topic(device_id, "down"), b'{"type":"goodbye"}'))

    async def _publish_quietly(self, topic: str, payload: bytes) -> None:
        try:
            await self._publish(topic, payload)
        except Exception as exc:
            log.debug("publish to %s failed: %s", topic, exc)

    def _on_hello(self, device_id: str, hello: dict) -> None:
        features = hello.get("features")
        if not isinstance(features, dict) or features.get("mcp") is not True:
            self.rejected += 1
            log.warning("device %s: hello without features.mcp=true; ignored", device_id)
            return
        if self._closing:
            return
        self._background(self._start_session(device_id, hello))

    async def _start_session(self, device_id: str, hello: dict) -> None:
        up = self.topic(device_id, "up")
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
            remote=f"mqtt:{up}",
        )
        if not await self._authenticate(hs, log):
            self.rejected += 1
            reason = "no token in its hello" if token is None else "invalid token"
            log.warning("rejected device %r on %s: %s", device_id, up, reason)
            return
        if self._closing:
            return
        session_id = str(uuid.uuid4())
        down = self.topic(device_id, "down")
        transport = MqttTransport(self, down, session_id)
        device = Device(transport, device_id=device_id, session_id=session_id, call_timeout=self.call_timeout)
        device.client_id = hs.client_id
        device.hello = hello
        self._transports[device] = transport
        old = self._live.get(device_id)
        self._live[device_id] = device
        self._nudged.pop(device_id, None)
        if old is not None:
            log.info("device %s said hello again; closing its previous session", device_id)
            self._gone(old)
            self._live[device_id] = device
            old_transport = self._transports.get(old)
            if old_transport is not None:
                old_transport.silent = True  # the device already left that session
            self._background(old.close("replaced by a new session from the same device"))
        device.on_close(self._gone)
        server_hello = {"type": "hello", "transport": "mqtt", "session_id": session_id, "version": 3}
        try:
            await self._publish(down, orjson.dumps(server_hello))
        except Exception as exc:
            device.connection_lost(f"sending the server hello failed: {exc}")
            return
        await self._setup(device)


async def _leave(client: Any) -> None:
    try:
        await client.__aexit__(None, None, None)
    except Exception as exc:  # already disconnected
        log.debug("MQTT disconnect: %s", exc)


__all__ = ["MqttGateway", "MqttTransport"]
