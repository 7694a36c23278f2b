"""The MQTT device gateway: devices reach the backend through an MQTT broker.

Topics (``prefix`` defaults to ``mcpgen``; see docs/mqtt.md):

* ``<prefix>/<device_id>/up``    device -> backend: the device ``hello``, MCP envelopes,
  device notifications (the gateway subscribes to ``<prefix>/+/up``);
* ``<prefix>/<device_id>/down``  backend -> device: the server ``hello``, MCP envelopes,
  ``goodbye``;
* ``<prefix>/<device_id>/state`` ``online`` (retained, published by the device after it
  connects) or ``offline`` (retained, the device's Last Will, published by the broker
  when the device's connection drops or its keepalive lapses).

Messages are exactly those of the WebSocket mode (:mod:`runtime.links.websocket.gateway`): the device
sends its hello (``transport: "mqtt"``, ``features.mcp: true``, ``client_id`` and an
optional ``token``), the gateway authenticates it (the same
:class:`~mcpgen.runtime.auth.Authenticator` objects, fed a
:class:`~mcpgen.runtime.auth.Handshake` built from the hello and the topic), answers
``{"type": "hello", "transport": "mqtt", "session_id": <uuid>, "version": 3}`` and runs
the shared session setup. Everything but the carrier (hello, sessions, setup, handing
out devices with ``wait_for_device``, ``devices()``, ``connected``) is the
transport-neutral :class:`~mcpgen.runtime.links.hub.DeviceHub` that the WebSocket
:class:`~mcpgen.runtime.links.websocket.gateway.Gateway` is built on as well.

MQTT has no connection per device at the gateway, so the end of a device is its
``offline`` state: pending calls then fail with ``DeviceDisconnected`` at once. A device
that just stops answering still ends its calls with ``DeviceTimeout``. A ``goodbye``
(``{"type": "goodbye", "session_id": ...}``) on the down topic ends a device's session;
the gateway sends one when it closes a session and, without a session id, to every device
it sees ``online`` (retained) without a session, so devices that outlived a gateway
restart send a fresh hello at once.

The gateway speaks MQTT 5 to the broker (:class:`~mcpgen.runtime.links.mqtt.broker.BrokerLink`, the
client the fleet workers use too); devices may use MQTT 3.1.1 or 5, the broker
translates, and nothing of MQTT 5 is required of them. ``aiomqtt`` is imported when the
gateway starts, so ``import mcpgen.runtime`` works without it.
"""

from __future__ import annotations

import logging
import ssl
import time
import uuid
import weakref
from typing import Any, Optional, Unpack

from mcpgen.mqtt_topics import DEFAULT_PREFIX, DOWN, OFFLINE, ONLINE, STATE, UP
from mcpgen.runtime.auth import hello_handshake
from mcpgen.runtime.core import wire
from mcpgen.runtime.errors import DeviceDisconnected
from mcpgen.runtime.links.hub import DeviceHub
from mcpgen.runtime.links.mqtt.broker import BrokerLink, TopicLayout
from mcpgen.runtime.session.device import Device
from mcpgen.runtime.session.options import SessionKeywords, SessionOptions

log = logging.getLogger("mcpgen.runtime.links.mqtt.gateway")

_NUDGE_INTERVAL = 2.0  # at most one unsolicited goodbye per device in this many seconds


class MqttTransport:
    """Publishes one device session's frames to ``<prefix>/<device_id>/down``."""

    def __init__(self, gateway: MqttGateway, topic: str, session_id: str) -> None:
        self.gateway = gateway
        self.topic = topic
        self.session_id = session_id
        self.offline = False  # the device's will said offline: nothing can reach it
        self.silent = False  # superseded by the device's own new hello: no goodbye
        self.closed = False

    def send_now(self, data: bytes) -> None:
        """Publishes without waiting (calls then take the compiled path, as on WebSocket)."""
        if self.closed:
            raise DeviceDisconnected("the MQTT session is closed")
        gw = self.gateway
        gw._broker.publish_now(self.topic, data, gw.qos)

    async def send(self, data: bytes) -> None:
        self.send_now(data)

    async def close(self) -> None:
        """Ends the session; the device hears a ``goodbye`` unless it is gone or moved on."""
        if self.closed:
            return
        self.closed = True
        broker = self.gateway._broker
        if self.offline or self.silent or not broker.connected:
            return
        try:
            await broker.publish(self.topic, wire.encode_goodbye(self.session_id), self.gateway.qos, 2.0)
        except Exception as exc:  # the broker link is going away; the session ends anyway
            log.debug("goodbye to %s not sent: %s", self.topic, exc)


class MqttGateway(DeviceHub, TopicLayout):
    """Serves devices that connect to an MQTT broker (see the module docstring).

    ``host``/``port`` are the broker's; ``username``/``password``/``tls_context`` the
    gateway's own broker login; ``client_id`` its MQTT client identifier (random by
    default). Devices are authenticated by the broker (their credentials, ACLs on the
    topics) and, when ``auth`` is given, by ``auth.authenticate(Handshake)`` with the
    hello's ``token`` (or ``authorization: "Bearer ..."``) and ``client_id``. Other
    arguments as :class:`mcpgen.runtime.links.websocket.gateway.Gateway`. ``qos`` is used for the down
    publishes and the up subscription (the state topic is always QoS 1).
    """

    transport_name = "mqtt"
    log = log

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 1883,
        *,
        topic_prefix: str = DEFAULT_PREFIX,
        username: Optional[str] = None,
        password: Optional[str] = None,
        client_id: Optional[str] = None,
        options: Optional[SessionOptions] = None,
        keepalive: int = 60,
        qos: int = 1,
        connect_timeout: float = 10.0,
        tls_context: Optional[ssl.SSLContext] = None,
        **session: Unpack[SessionKeywords],
    ) -> None:
        super().__init__(options=options, **session)
        TopicLayout.__init__(self, host, port, topic_prefix, qos)
        self.client_id = client_id or f"mcpgen-gateway-{uuid.uuid4().hex[:12]}"
        self._nudged: dict[str, float] = {}
        self._transports: weakref.WeakKeyDictionary[Device, MqttTransport] = weakref.WeakKeyDictionary()
        up, state = self.device_filter(f"/{UP}"), self.device_filter(f"/{STATE}")
        self._broker = BrokerLink(
            host,
            port,
            client_id=self.client_id,
            subscriptions=[(up, qos), (state, 1)],
            routes=[(up, self._on_up_message), (state, self._on_state_message)],
            on_lost=self._broker_lost,
            username=username,
            password=password,
            tls_context=tls_context,
            keepalive=keepalive,
            connect_timeout=connect_timeout,
            logger=log,
            name="MQTT gateway",
        )

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> MqttGateway:
        """Connects to the broker and subscribes; raises ``aiomqtt.MqttError`` when it cannot."""
        await self._broker.start()
        log.info("MQTT gateway on %s (client %s)", self.url, self.client_id)
        return self

    async def close(self) -> None:
        """Ends every session (devices get a ``goodbye``), then leaves the broker."""
        await self._close_sessions("gateway closed")
        await self._finish_close("gateway closed")
        await self._broker.close()

    async def __aenter__(self) -> MqttGateway:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- broker link ----------------------------------------------------------------------

    def _broker_lost(self, reason: str) -> None:
        if self._live:
            log.warning("%s: its devices are disconnected until it is back", reason)
        for device in list(self._live.values()):
            device.connection_lost(reason)

    def _publish_quietly(self, topic: str, payload: bytes) -> None:
        try:
            self._broker.publish_now(topic, payload, self.qos)
        except Exception as exc:
            log.debug("publish to %s failed: %s", topic, exc)

    # -- incoming -------------------------------------------------------------------------

    def _on_up_message(self, message: Any) -> None:
        device_id = self.device_of(message.topic, f"/{UP}")
        if device_id is not None:
            self._on_up(device_id, message.payload)

    def _on_state_message(self, message: Any) -> None:
        device_id = self.device_of(message.topic, f"/{STATE}")
        if device_id is not None:
            self._on_state(device_id, message.payload, bool(message.retain))

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
            hello = wire.decode_hello(payload)
            if hello is not None:
                self._on_hello(device_id, hello)
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
        if state == OFFLINE:
            device = self._live.get(device_id)
            if device is not None:
                transport = self._transports.get(device)
                if transport is not None:
                    transport.offline = True
                device.connection_lost("device went offline (MQTT last will)")
            self._nudged.pop(device_id, None)
        elif state == ONLINE and retained and device_id not in self._live:
            # Connected before we subscribed: it may be waiting in a session with a
            # gateway that is gone.
            self._nudge(device_id)

    def _nudge(self, device_id: str) -> None:
        now = time.monotonic()
        if now - self._nudged.get(device_id, -_NUDGE_INTERVAL) < _NUDGE_INTERVAL:
            return
        self._nudged[device_id] = now
        log.info("device %s: no session; asking it for a new hello", device_id)
        self._publish_quietly(self.topic(device_id, DOWN), wire.encode_goodbye())

    def _on_hello(self, device_id: str, hello: dict) -> None:
        if self._hello_refusal(device_id, hello) is not None or self._closing:
            return
        self._background(self._start_session(device_id, hello))

    async def _start_session(self, device_id: str, hello: dict) -> None:
        up = self.topic(device_id, UP)
        hs = hello_handshake(device_id, hello, f"mqtt:{up}")
        if not await self._authenticate(hs):
            self.rejected += 1
            reason = "no token in its hello" if hs.token is None else "invalid token"
            log.warning("rejected device %r on %s: %s", device_id, up, reason)
            return
        if self._closing:
            return
        self._nudged.pop(device_id, None)
        transport = MqttTransport(self, self.topic(device_id, DOWN), "")
        device = self._open_session(transport, hs, hello)
        assert device.session_id is not None
        transport.session_id = device.session_id
        self._transports[device] = transport
        try:
            transport.send_now(self._server_hello(device))
        except Exception as exc:
            device.connection_lost(f"sending the server hello failed: {exc}")
            return
        self._start_setup(device)

    def _replaced(self, old: Device) -> None:
        old_transport = self._transports.get(old)
        if old_transport is not None:
            old_transport.silent = True  # the device already left that session: no goodbye
        super()._replaced(old)


__all__ = ["MqttGateway", "MqttTransport"]
