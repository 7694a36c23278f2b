"""One MQTT 5 connection to the broker, kept up with backoff: the MQTT client of the
:class:`~mcpgen.runtime.links.mqtt.gateway.MqttGateway` and of every
:class:`~mcpgen.runtime.links.mqtt.fleet.MqttFleet` worker.

The client is ``aiomqtt`` (on ``paho-mqtt`` 2), imported when the link starts, so
``import mcpgen.runtime`` works without it. aiomqtt does the connect, subscribe,
disconnect and tells when the connection is lost; the per-message path goes to its paho
client directly:

* incoming messages are handed to the owner's handler from paho's per-topic callback
  (``message_callback_add``), skipping aiomqtt's conversion, queue and async iterator;
* every publish is :meth:`BrokerLink.publish_now`, written through paho without waiting
  for anything (aiomqtt's ``publish`` adds an event per message and, at QoS 1, waits
  for the PUBACK); so aiomqtt's ``on_publish`` hook, for which paho builds a reason
  code and a properties object after every message it writes, is switched off.

Together these halve the CPU time a worker spends per call (docs/mqtt.md, "Figures").

On top of that, when :func:`mcpgen.runtime.links.mqtt.mqttfast.enabled` (the compiled build, unless
``MCPGEN_MQTT_FASTPATH=0``), a :class:`~mcpgen.runtime.links.mqtt.mqttfast.FastPath` takes over the
socket's reads and the QoS 0 publishes of each connection: QoS 0 PUBLISHes are read in
chunks and decoded in compiled code, and the publishes of one loop iteration leave in
one write; paho still sees, in order, every other packet. ``fast=False`` (or the
variable) keeps the plain paho path, which is also what the pure-Python build uses.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable, Sequence
from typing import Any, Optional

from mcpgen.extras import missing_extra
from mcpgen.mqtt_topics import device_topic
from mcpgen.runtime.errors import DeviceDisconnected
from mcpgen.runtime.links.mqtt import mqttfast

#: Broker reconnects back off from MIN_BACKOFF to MAX_BACKOFF seconds (devices use the same).
MIN_BACKOFF, MAX_BACKOFF = 0.2, 5.0

#: ``handler(message)`` for one incoming message; ``message`` has ``topic`` (str),
#: ``payload`` (bytes), ``retain`` and ``properties`` (MQTT 5, or None).
MessageHandler = Callable[[Any], None]


class TopicLayout:
    """The topics of one fleet, ``<prefix>/<device_id>/<leaf>`` on broker ``host:port``,
    and the QoS (0 or 1) its owner publishes with; both checked here."""

    def __init__(self, host: str, port: int, topic_prefix: str, qos: int) -> None:
        prefix = topic_prefix.strip("/")
        if not prefix or "+" in prefix or "#" in prefix:
            raise ValueError(f"bad topic prefix {topic_prefix!r} (non-empty, no '+' or '#')")
        if qos not in (0, 1):
            raise ValueError("qos must be 0 or 1")
        self.host = host
        self.port = port
        self.topic_prefix = prefix
        self.qos = qos
        self._head = prefix + "/"

    def topic(self, device_id: str, leaf: str) -> str:
        """``<prefix>/<device_id>/<leaf>`` (leaf: ``mqtt_topics.UP``, ``DOWN``, ``STATE``)."""
        return device_topic(self.topic_prefix, device_id, leaf)

    def device_filter(self, tail: str) -> str:
        """The filter matching ``tail`` (``/up``...) of every device: ``<prefix>/+<tail>``."""
        return f"{self._head}+{tail}"

    def device_of(self, topic: str, tail: str) -> Optional[str]:
        """The device id of a ``topic`` that matched :meth:`device_filter` (``+`` is one level)."""
        device_id = topic[len(self._head) : -len(tail)]
        return device_id or None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}/{self.topic_prefix}"


class _Message:
    """An aiomqtt message seen through the attributes of a paho one (the rare path)."""

    __slots__ = ("topic", "payload", "retain", "properties")

    def __init__(self, message: Any) -> None:
        self.topic: str = message.topic.value
        payload = message.payload
        self.payload = bytes(payload) if isinstance(payload, (bytes, bytearray)) else b""
        self.retain = bool(message.retain)
        self.properties = getattr(message, "properties", None)


class _RouteMatcher:
    """Whether a topic matches one route's filter, with no state per topic.

    Routes have the fleet's shape ``<head>+<tail>`` (one ``+`` level: ``mcpgen/+/up``),
    matched with two string comparisons and a search for ``/`` in the ``+`` level. Nothing
    is cached per topic: one entry per device ever seen would outlive the devices and keep
    the peak's memory from going back to the OS after they leave (docs/security.md,
    "Memory after devices leave"). Other filters (``#``, several ``+``) go to paho's
    matcher each time.
    """

    __slots__ = ("topic_filter", "handler", "head", "tail", "_min_len", "simple", "_paho_match")

    def __init__(self, topic_filter: str, handler: MessageHandler) -> None:
        self.topic_filter = topic_filter
        self.handler = handler
        head, plus, tail = topic_filter.partition("+")
        self.simple = (
            bool(plus)
            and "+" not in tail
            and "#" not in topic_filter
            and (not head or head.endswith("/"))
            and (not tail or tail[0] == "/")
        )
        self.head, self.tail = head, tail
        self._min_len = len(head) + len(tail)
        self._paho_match: Optional[Callable[[str, str], bool]] = None
        if not self.simple:
            try:
                import paho.mqtt.client as mqtt
            except ModuleNotFoundError as exc:
                raise missing_extra(exc, "MQTT topic filters") from None

            self._paho_match = mqtt.topic_matches_sub

    def matches(self, topic: str) -> bool:
        if self._paho_match is not None:
            return bool(self._paho_match(self.topic_filter, topic))
        head, tail = self.head, self.tail
        return (
            len(topic) >= self._min_len
            and topic.startswith(head)
            and topic.endswith(tail)
            and (bool(head) or not topic.startswith("$"))  # wildcards skip $SYS topics
            and topic.find("/", len(head), len(topic) - len(tail)) < 0
        )


class BrokerLink:
    """A kept-up MQTT 5 client connection (see the module docstring).

    ``subscriptions`` are ``(topic filter, QoS)`` pairs subscribed on every connect;
    ``routes`` map plain topic filters (no ``$share/`` prefix) to the handler of the
    messages they match. ``on_lost(reason)`` is called when the connection drops (the
    link then reconnects with backoff), ``on_connected()`` after every (re)connect.
    ``name`` is how log lines name the owner. ``fast`` chooses the fast path (module
    docstring; default :func:`mcpgen.runtime.links.mqtt.mqttfast.enabled`).
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str,
        subscriptions: Sequence[tuple[str, int]],
        routes: Sequence[tuple[str, MessageHandler]],
        on_lost: Callable[[str], None],
        on_connected: Optional[Callable[[], None]] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        tls_context: Optional[ssl.SSLContext] = None,
        keepalive: int = 60,
        connect_timeout: float = 10.0,
        logger: logging.Logger,
        name: str = "",
        fast: Optional[bool] = None,
    ) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.subscriptions = list(subscriptions)
        self.routes = list(routes)
        self.username = username
        self.password = password
        self.tls_context = tls_context
        self.keepalive = keepalive
        self.connect_timeout = connect_timeout
        self.log = logger
        self.name = name or client_id
        self._on_lost = on_lost
        self._on_connected = on_connected
        self.client: Any = None  # aiomqtt.Client while connected
        self.paho: Any = None  # its paho client while connected
        self.ready = asyncio.Event()  # set while connected
        self._runner: Optional[asyncio.Task] = None
        self._closing = False
        self.fast = mqttfast.enabled() if fast is None else fast
        self._fast: Optional[mqttfast.FastPath] = None  # while connected, when self.fast
        # Messages that arrive while (re)connecting, before the link is ready: retained ones
        # can come in the same read as the SUBACK, so paho hands them over while SUBSCRIBE
        # is still being awaited. They are held and handled, in order, once the link is
        # ready (after on_connected), so a handler can always publish (a gateway's goodbye).
        self._held: Optional[list[tuple[Optional[MessageHandler], Any]]] = None
        self._matchers = [_RouteMatcher(f, h) for f, h in self.routes]
        # When every route is ``<head>+<tail>`` with one head (the fleet's and the
        # gateway's), a topic's handlers follow from what comes after its ``+`` level:
        # one dict of a few tails, nothing kept per topic (see _RouteMatcher).
        heads = {m.head for m in self._matchers}
        self._head = heads.pop() if len(heads) == 1 else ""
        self._by_tail: Optional[dict[str, tuple[MessageHandler, ...]]] = None
        if self._head and all(m.simple for m in self._matchers):
            by_tail: dict[str, tuple[MessageHandler, ...]] = {}
            for m in self._matchers:
                by_tail[m.tail] = by_tail.get(m.tail, ()) + (m.handler,)
            self._by_tail = by_tail

    @property
    def connected(self) -> bool:
        return self.client is not None

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Connects and subscribes; raises ``aiomqtt.MqttError`` when the broker cannot be used."""
        if self._runner is not None:
            return
        await self._connect()
        self._runner = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """Stops reconnecting and leaves the broker (a clean DISCONNECT: no will)."""
        self._closing = True
        if self._runner is not None:
            self._runner.cancel()
            try:
                await self._runner
            except (asyncio.CancelledError, Exception):
                pass
            self._runner = None
        client, self.client, self.paho = self.client, None, None
        self.ready.clear()
        self._drop_fast(flush=True)
        if client is not None:
            await self._leave(client)

    # -- publishing -----------------------------------------------------------------------

    def publish_now(self, topic: str, payload: bytes, qos: int, properties: Any = None) -> Any:
        """Writes one PUBLISH without waiting (paho queues what the socket or the in-flight
        window cannot take yet); returns paho's message info, or None when the fast path
        took it (QoS 0: written at the end of this loop iteration). ``properties`` is a
        paho ``Properties``. Raises ``DeviceDisconnected`` when there is no broker
        connection."""
        paho = self.paho
        if paho is None:
            raise DeviceDisconnected("not connected to the MQTT broker")
        fast = self._fast
        if fast is not None:
            if qos == 0:
                fast.publish(topic, payload, None if properties is None else properties.pack())
                return None
            fast.flush()  # what was published before leaves before this
        info = paho.publish(topic, payload, qos, False, properties)
        if info.rc != 0:
            raise DeviceDisconnected(f"publishing to {topic} failed (paho error {info.rc})")
        return info

    async def publish(self, topic: str, payload: bytes, qos: int, timeout: float) -> bool:
        """Publishes and waits up to ``timeout`` until the message is out (QoS 0: written;
        QoS 1: acknowledged by the broker); whether it got there. For the rare messages
        that must be delivered before the link closes (goodbyes)."""
        paho = self.paho
        if paho is None:
            raise DeviceDisconnected("not connected to the MQTT broker")
        if self._fast is not None:
            self._fast.flush()
        info = paho.publish(topic, payload, qos, False, None)
        if info.rc != 0:
            raise DeviceDisconnected(f"publishing to {topic} failed (paho error {info.rc})")
        deadline = asyncio.get_running_loop().time() + timeout
        while not info.is_published():
            if asyncio.get_running_loop().time() >= deadline or self.paho is None:
                return False
            await asyncio.sleep(0.01)
        return True

    # -- the connection ---------------------------------------------------------------------

    async def _connect(self) -> None:
        try:
            import aiomqtt
        except ModuleNotFoundError as exc:
            raise missing_extra(exc, "the MQTT gateway and fleet") from None

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
            # Small latency-bound frames: without TCP_NODELAY Nagle's algorithm holds
            # each back until the broker's delayed ACK, ~40 ms (docs/mqtt.md, "Latency").
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            logger=logging.getLogger(self.log.name + ".client"),
        )
        # aiomqtt exposes its paho client as ``_client``. The routes go in before
        # subscribing: retained messages may arrive in the same read as the SUBACK.
        paho = client._client
        paho.on_publish = None  # nothing awaits aiomqtt's publish (module docstring)
        for topic_filter, handler in self.routes:
            paho.message_callback_add(topic_filter, self._paho_callback(handler))
        self._held = []
        await client.__aenter__()
        try:
            if self.fast:
                self._fast = mqttfast.FastPath(paho, asyncio.get_running_loop(), self._dispatch, self.log)
            await client.subscribe(self.subscriptions)
        except BaseException:
            self._held = None
            self._drop_fast(flush=False)
            await self._leave(client)
            raise
        self.client = client
        self.paho = paho
        self.ready.set()
        if self._on_connected is not None:
            self._on_connected()
        self._release_held()

    def _release_held(self) -> None:
        """Handles the messages held while connecting, in the order they arrived."""
        held, self._held = self._held, None
        for handler, message in held or ():
            if handler is None:
                self._dispatch(message)
            else:
                self._handle(handler, message)

    def _handle(self, handler: MessageHandler, message: Any) -> None:
        try:
            handler(message)
        except Exception:  # one bad message must not break paho's read loop
            self.log.exception("handling an MQTT message on %s failed", message.topic)

    def _drop_fast(self, *, flush: bool) -> None:
        fast, self._fast = self._fast, None
        if fast is not None:
            if flush:
                fast.flush()
            fast.close()

    def _dispatch(self, message: Any) -> None:
        """A message from the fast path: to every route it matches, as paho would."""
        if self._held is not None:
            self._held.append((None, message))
            return
        topic = message.topic
        by_tail = self._by_tail
        if by_tail is None:
            handlers = tuple(m.handler for m in self._matchers if m.matches(topic))
        elif topic.startswith(self._head):
            cut = topic.find("/", len(self._head))
            handlers = by_tail.get(topic[cut:] if cut >= 0 else "", ())
        else:
            handlers = ()
        for handler in handlers:
            try:
                handler(message)
            except Exception:  # one bad message must not break the read loop
                self.log.exception("handling an MQTT message on %s failed", topic)
        if not handlers:
            self.log.debug("MQTT message on %s matches no route; dropped", topic)

    def _paho_callback(self, handler: MessageHandler) -> Callable[[Any, Any, Any], None]:
        def callback(_client: Any, _userdata: Any, message: Any) -> None:
            if self._held is not None:  # still connecting: handled once the link is ready
                self._held.append((handler, message))
            else:
                self._handle(handler, message)

        return callback

    async def _run(self) -> None:
        backoff = MIN_BACKOFF
        while not self._closing:
            client = self.client
            if client is None:
                try:
                    await self._connect()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self.log.warning(
                        "%s: MQTT broker %s:%d: %s; retrying in %gs",
                        *(self.name, self.host, self.port, exc, backoff),
                    )
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
                    continue
                self.log.info("%s reconnected to the MQTT broker %s:%d", self.name, self.host, self.port)
                backoff = MIN_BACKOFF
                continue
            reason = "lost the connection to the MQTT broker"
            try:
                # Messages no route matched come here; the loop ends when the link drops.
                async for message in client.messages:
                    self._unrouted(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                reason = f"lost the connection to the MQTT broker: {exc}"
            if self._closing:
                return
            self.log.warning("%s: %s; reconnecting", self.name, reason)
            self.client = self.paho = None
            self.ready.clear()
            self._drop_fast(flush=False)
            self._on_lost(reason)
            await self._leave(client)

    def _unrouted(self, message: Any) -> None:
        import paho.mqtt.client as mqtt

        msg = _Message(message)
        for topic_filter, handler in self.routes:
            if mqtt.topic_matches_sub(topic_filter, msg.topic):
                try:
                    handler(msg)
                except Exception:
                    self.log.exception("handling an MQTT message on %s failed", msg.topic)
                return
        self.log.debug("MQTT message on %s matches no route; dropped", msg.topic)

    async def _leave(self, client: Any) -> None:
        try:
            await client.__aexit__(None, None, None)
        except Exception as exc:  # already disconnected
            self.log.debug("MQTT disconnect: %s", exc)


__all__ = ["BrokerLink", "MAX_BACKOFF", "MIN_BACKOFF", "MessageHandler", "TopicLayout"]
