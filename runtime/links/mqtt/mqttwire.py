# cython: annotation_typing=False
"""MQTT 5 framing of QoS 0 PUBLISH packets: the hot path of :mod:`mcpgen.runtime.links.mqtt.mqttfast`.

Compiled by Cython (``runtime/links/mqtt/mqttwire.pxd`` holds the C types); also runs as plain Python.

Why this is written here and not taken from a library: every call of a fleet worker is
one PUBLISH out and one in. paho-mqtt (the client of :mod:`mcpgen.runtime.links.mqtt.broker`) does
both in Python, reads each packet with three ``recv`` calls and unpacks every MQTT 5
property into a ``Properties`` object; that was half of a worker's CPU per call
(docs/mqtt.md, "Where the worker's CPU goes"). libmosquitto, the C client, reads each
packet with the same three ``recv`` calls and writes a byte to an internal socket pair
for every publish (``packet__read`` / ``packet__queue`` in 2.0), and cannot take the
``ssl.SSLContext`` the link is configured with. So paho keeps the protocol (connect,
subscribe, keepalive, QoS 1, TLS, will, reconnect) and only the two packet shapes of
the call path are framed here: a QoS 0 PUBLISH in, with the properties a reply carries,
and a QoS 0 PUBLISH out. Anything else, or anything unusual in a PUBLISH (QoS > 0, a
topic alias, an unknown property), is left to paho.
"""

from __future__ import annotations

from typing import Optional

_PUBLISH_QOS0 = 0x30  # packet type 3, QoS 0 (flags: DUP 0x08, QoS 0x06, RETAIN 0x01)
_NO_PROPERTIES = b"\x00"


class Publish:
    """One incoming QoS 0 PUBLISH, seen through the attributes of a paho message
    (``topic``, ``payload``, ``retain``, ``qos``, ``properties.CorrelationData``).
    A C type in the compiled build (``mqttwire.pxd``): one is made per message."""

    qos = 0
    mid = 0

    def __init__(
        self,
        topic: str,
        payload: bytes,
        retain: bool,
        correlation: Optional[bytes],
        response_topic: Optional[str],
    ) -> None:
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.CorrelationData = correlation
        self.ResponseTopic = response_topic

    @property
    def properties(self) -> Publish:
        # The MQTT 5 properties a reply uses live on the message itself (no second object).
        return self


def packet_end(buf: bytes, pos: int) -> int:
    """Where the packet that starts at ``pos`` of ``buf`` ends: 0 when ``buf`` does not
    hold all of it yet, -1 when its Remaining Length is malformed (over 4 bytes)."""
    length = packet_length(buf, pos)
    if length <= 0:
        return length
    end = pos + length
    return end if end <= len(buf) else 0


def packet_length(buf: bytes, pos: int) -> int:
    """The whole length of the packet starting at ``pos`` once its fixed header is in
    ``buf`` (0: not yet; -1: malformed)."""
    n = len(buf)
    i = pos + 1
    length = 0
    shift = 0
    while True:
        if i >= n:
            return 0
        b = buf[i]
        i += 1
        length |= (b & 127) << shift
        if not b & 128:
            break
        shift += 7
        if shift > 21:
            return -1
    return i - pos + length


def _varint(buf: bytes, i: int, end: int) -> tuple[int, int]:
    """(value, next offset) of the Variable Byte Integer at ``i``; next offset -1 if bad."""
    value = 0
    shift = 0
    while i < end:
        b = buf[i]
        i += 1
        value |= (b & 127) << shift
        if not b & 128:
            return value, i
        shift += 7
        if shift > 21:
            break
    return 0, -1


def decode_publish(buf: bytes, start: int, end: int) -> Optional[Publish]:
    """The QoS 0 PUBLISH in ``buf[start:end]`` (one whole packet), or None when it is
    another packet or one this fast path leaves to paho."""
    cmd = buf[start]
    if cmd & 0xF6 != _PUBLISH_QOS0:
        return None
    i = start + 1
    while buf[i] & 128:
        i += 1
    i += 1
    if i + 2 > end:
        return None
    tlen = (buf[i] << 8) | buf[i + 1]
    i += 2
    if tlen == 0 or i + tlen > end:  # empty topic: a topic alias (never asked for)
        return None
    try:
        topic = buf[i : i + tlen].decode("utf-8")
    except UnicodeDecodeError:
        return None
    i += tlen
    plen, i = _varint(buf, i, end)
    if i < 0:
        return None
    pend = i + plen
    if pend > end:
        return None
    correlation: Optional[bytes] = None
    response_topic: Optional[str] = None
    while i < pend:
        pid = buf[i]
        i += 1
        if pid == 0x09 or pid == 0x08 or pid == 0x03:  # Correlation Data, Response Topic, Content Type
            if i + 2 > pend:
                return None
            n = (buf[i] << 8) | buf[i + 1]
            i += 2
            if i + n > pend:
                return None
            if pid == 0x09:
                correlation = buf[i : i + n]
            elif pid == 0x08:
                try:
                    response_topic = buf[i : i + n].decode("utf-8")
                except UnicodeDecodeError:
                    return None
            i += n
        elif pid == 0x01:  # Payload Format Indicator
            i += 1
        elif pid == 0x02:  # Message Expiry Interval
            i += 4
        elif pid == 0x26:  # User Property: two strings
            for _ in range(2):
                if i + 2 > pend:
                    return None
                i += 2 + ((buf[i] << 8) | buf[i + 1])
        elif pid == 0x0B:  # Subscription Identifier
            _, i = _varint(buf, i, pend)
            if i < 0:
                return None
        else:  # a topic alias, or a property a PUBLISH may not carry: paho decides
            return None
    if i != pend:
        return None
    # Filled in place: in the compiled build that skips a Python-level __init__ call.
    msg = Publish.__new__(Publish)
    msg.topic = topic
    msg.payload = buf[pend:end]
    msg.retain = bool(cmd & 1)
    msg.CorrelationData = correlation
    msg.ResponseTopic = response_topic
    return msg


def publish_packet(topic: str, payload: bytes, properties: Optional[bytes]) -> bytes:
    """A QoS 0 PUBLISH (retain off) of ``payload`` to ``topic``; ``properties`` is the
    packed property block with its length prefix (paho's ``Properties.pack()``), or None."""
    t = topic.encode("utf-8")
    tlen = len(t)
    if tlen > 65535:
        raise ValueError(f"MQTT topic of {tlen} bytes (at most 65535)")
    props = _NO_PROPERTIES if properties is None else properties
    remaining = 2 + tlen + len(props) + len(payload)
    if remaining > 268435455:
        raise ValueError(f"MQTT message of {remaining} bytes (at most 268435455)")
    head = bytearray(8)
    head[0] = _PUBLISH_QOS0
    k = 1
    while True:
        b = remaining & 127
        remaining >>= 7
        if remaining:
            head[k] = b | 128
            k += 1
        else:
            head[k] = b
            k += 1
            break
    head[k] = tlen >> 8
    head[k + 1] = tlen & 255
    return b"".join((head[: k + 2], t, props, payload))


__all__ = ["Publish", "decode_publish", "packet_end", "packet_length", "publish_packet"]
