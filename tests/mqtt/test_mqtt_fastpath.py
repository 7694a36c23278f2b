"""BrokerLink's fast path (runtime/links/mqtt/mqttfast.py, runtime/links/mqtt/mqttwire.py):
QoS 0 PUBLISH framing checked against paho's own property codec, the hand-over of every
other packet to paho in order, batched writes, and the same messages through a real
Mosquitto as the paho path."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from pathlib import Path
from typing import Any

import pytest
from mqtt_testlib import HOST, Broker

from mcpgen.runtime.links.mqtt import mqttfast, mqttwire
from mcpgen.runtime.links.mqtt.broker import BrokerLink

log = logging.getLogger("test.fastpath")


def _props(**values: Any) -> Any:
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    props = Properties(PacketTypes.PUBLISH)
    for name, value in values.items():
        setattr(props, name, value)
    return props


def _raw_publish(
    topic: bytes, payload: bytes, props: bytes, *, flags: int = 0, packet_id: bytes = b""
) -> bytes:
    """A PUBLISH assembled by hand (for shapes the encoder under test never makes)."""
    body = len(topic).to_bytes(2, "big") + topic + packet_id + props + payload
    n, length = len(body), bytearray()
    while True:
        b, n = n & 127, n >> 7
        length.append(b | (128 if n else 0))
        if not n:
            break
    return bytes([0x30 | flags]) + bytes(length) + body


def test_publish_round_trip_with_every_publish_property() -> None:
    props = _props(
        ResponseTopic="mcpgen/lamp/reply/w1",
        CorrelationData=b"\x00\x01token",
        PayloadFormatIndicator=1,
        MessageExpiryInterval=30,
        ContentType="application/json",
        UserProperty=[("a", "1"), ("bb", "22")],
    )
    payload = b'{"jsonrpc":"2.0","id":7,"result":{}}'
    packet = mqttwire.publish_packet("mcpgen/lamp/reply/w1", payload, props.pack())
    assert mqttwire.packet_end(packet, 0) == len(packet)
    msg = mqttwire.decode_publish(packet, 0, len(packet))
    assert msg is not None
    assert (msg.topic, msg.payload, msg.retain, msg.qos) == ("mcpgen/lamp/reply/w1", payload, False, 0)
    assert msg.properties.CorrelationData == b"\x00\x01token"
    assert msg.properties.ResponseTopic == "mcpgen/lamp/reply/w1"
    # The property block is paho's byte for byte, so paho reads back what we wrote.
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    back = Properties(PacketTypes.PUBLISH)
    i = 1
    while packet[i] & 128:  # the Remaining Length's bytes
        i += 1
    back.unpack(packet[i + 1 + 2 + len("mcpgen/lamp/reply/w1") :])
    assert back.CorrelationData == b"\x00\x01token" and back.UserProperty == [("a", "1"), ("bb", "22")]


def test_large_payload_lengths_and_retain() -> None:
    for size in (0, 1, 100, 16_000, 2_100_000):
        payload = bytes(random.Random(size).randbytes(size))
        packet = mqttwire.publish_packet("t/x", payload, None)
        assert mqttwire.packet_length(packet[:5], 0) == len(packet)
        assert mqttwire.packet_end(packet, 0) == len(packet)
        assert mqttwire.packet_end(packet[:-1], 0) == 0  # not whole yet
        msg = mqttwire.decode_publish(packet, 0, len(packet))
        assert msg is not None and msg.payload == payload and msg.properties.CorrelationData is None
    retained = _raw_publish(b"a/state", b"online", b"\x00", flags=0x01)
    msg = mqttwire.decode_publish(retained, 0, len(retained))
    assert msg is not None and msg.retain is True


def test_packets_the_fast_path_leaves_to_paho() -> None:
    qos1 = _raw_publish(b"a/b", b"x", b"\x00", flags=0x02, packet_id=b"\x00\x05")
    alias_only = _raw_publish(b"", b"x", b"\x03\x23\x00\x01")  # empty topic + Topic Alias
    alias_set = _raw_publish(b"a/b", b"x", b"\x03\x23\x00\x01")
    foreign = _raw_publish(b"a/b", b"x", b"\x05\x11\x00\x00\x00\x01")  # Session Expiry: not in a PUBLISH
    short = _raw_publish(b"a/b", b"x", b"\x05\x09\x00\x09ab")  # Correlation Data longer than its block
    bad_utf8 = _raw_publish(b"a/\xff", b"x", b"\x00")
    pingresp = b"\xd0\x00"
    for packet in (qos1, alias_only, alias_set, foreign, short, bad_utf8, pingresp):
        assert mqttwire.packet_end(packet, 0) == len(packet)
        assert mqttwire.decode_publish(packet, 0, len(packet)) is None, packet
    assert mqttwire.packet_end(b"\x30\xff\xff\xff\xff\x01", 0) == -1  # 5-byte Remaining Length


def test_selection_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPGEN_MQTT_FASTPATH", raising=False)
    from mcpgen import runtime

    assert mqttfast.enabled() == runtime.COMPILED
    monkeypatch.setenv("MCPGEN_MQTT_FASTPATH", "0")
    assert not mqttfast.enabled()
    link = BrokerLink("127.0.0.1", 1, client_id="x", subscriptions=[], routes=[], on_lost=print, logger=log)
    assert link.fast is False


def test_a_paho_without_the_hooked_methods_gets_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import paho.mqtt.client as mqtt

    monkeypatch.delenv("MCPGEN_MQTT_FASTPATH", raising=False)
    assert mqttfast.paho_fits()
    monkeypatch.delattr(mqtt.Client, "_packet_queue")
    assert not mqttfast.paho_fits()
    assert not mqttfast.enabled()
    link = BrokerLink("127.0.0.1", 1, client_id="x", subscriptions=[], routes=[], on_lost=print, logger=log)
    assert link.fast is False


@pytest.mark.asyncio
async def test_fast_path_over_a_socket_hands_other_packets_to_paho_in_order() -> None:
    import paho.mqtt.client as mqtt

    order: list[tuple[str, str]] = []
    paho = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    paho.on_message = lambda _c, _u, m: order.append(("paho", m.topic))
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    fd = ours.fileno()
    paho._sock = ours
    loop = asyncio.get_running_loop()
    fast = mqttfast.FastPath(paho, loop, lambda m: order.append(("fast", m.topic)), log)
    try:
        stream = [  # QoS 1 messages are paho's (it answers them with a PUBACK)
            mqttwire.publish_packet("t/1", b"a" * 10, None),
            _raw_publish(b"t/2", b"b", b"\x00", flags=0x02, packet_id=b"\x00\x01"),
            mqttwire.publish_packet("t/3", b"c" * 300_000, _props(CorrelationData=b"k").pack()),
            _raw_publish(b"t/4", b"d", b"\x00", flags=0x02, packet_id=b"\x00\x02"),
            mqttwire.publish_packet("t/5", b"e", None),
        ]
        data = b"".join(stream)
        rng = random.Random(5)
        pos = 0
        while pos < len(data):  # arbitrary cuts, across headers and payloads
            step = rng.choice((1, 2, 3, 7, 100, 70_000))
            peer.sendall(data[pos : pos + step])
            pos += step
            await asyncio.sleep(0)
        for _ in range(200):
            if len(order) == 5:
                break
            await asyncio.sleep(0.01)
        assert order == [("fast", "t/1"), ("paho", "t/2"), ("fast", "t/3"), ("paho", "t/4"), ("fast", "t/5")]
        assert fast.messages_in == 3

        # Publishes of one loop iteration leave in one write, in order.
        fast.publish("d/1", b"x", None)
        fast.publish("d/2", b"y", _props(CorrelationData=b"z").pack())
        await asyncio.sleep(0.05)
        got = peer.recv(4096)
        packets, pos = [], 0
        while pos < len(got):
            end = mqttwire.packet_end(got, pos)
            assert end > 0
            packets.append(got[pos:end])
            pos = end
        assert [p[0] for p in packets] == [0x40, 0x40, 0x30, 0x30]  # paho's PUBACKs, then ours
        m1 = mqttwire.decode_publish(packets[2], 0, len(packets[2]))
        m2 = mqttwire.decode_publish(packets[3], 0, len(packets[3]))
        assert m1 is not None and m2 is not None
        assert (m1.topic, m1.payload, m2.topic, m2.properties.CorrelationData) == ("d/1", b"x", "d/2", b"z")
        assert fast.batches_out == 1

        # The end of the stream is paho's to handle: it drops its socket.
        lost: list[Any] = []
        paho.on_disconnect = lambda *a: lost.append(a)
        peer.close()
        for _ in range(200):
            if paho._sock is None:
                break
            await asyncio.sleep(0.01)
        assert paho._sock is None and lost
    finally:
        fast.close()
        loop.remove_reader(fd)  # (aiomqtt's socket-close hook does this in a link)
        ours.close()


async def _collect_with(link_fast: bool, port: int, box: list[tuple[Any, ...]]) -> BrokerLink:
    def handler(m: Any) -> None:
        props = m.properties
        box.append((m.topic, bytes(m.payload), bool(m.retain), getattr(props, "CorrelationData", None)))

    link = BrokerLink(
        HOST,
        port,
        client_id=f"fp-{int(link_fast)}",
        subscriptions=[("fp/#", 1)],
        routes=[("fp/+/x", handler), ("fp/#", handler)],  # both match: both run, as with paho
        on_lost=lambda _r: None,
        logger=log,
        fast=link_fast,
    )
    await link.start()
    return link


@pytest.mark.asyncio
async def test_same_messages_as_the_paho_path_through_mosquitto(tmp_path: Path) -> None:
    import aiomqtt

    broker = Broker(tmp_path).start()
    fast_box: list[tuple[Any, ...]] = []
    paho_box: list[tuple[Any, ...]] = []
    try:
        fast_link = await _collect_with(True, broker.port, fast_box)
        paho_link = await _collect_with(False, broker.port, paho_box)
        assert fast_link._fast is not None and paho_link._fast is None
        async with aiomqtt.Client(HOST, broker.port, protocol=aiomqtt.ProtocolVersion.V5) as pub:
            await pub.publish("fp/a/state", b"online", qos=1, retain=True)
            for i in range(50):
                props = _props(CorrelationData=i.to_bytes(2, "big"), UserProperty=[("n", str(i))])
                await pub.publish(f"fp/d{i % 3}/x", b"%d" % i, qos=i % 2, properties=props)
            await pub.publish("fp/big/x", b"B" * 200_000, qos=0)
        # Published by the link itself, batched, looped back by the broker.
        for i in range(20):
            fast_link.publish_now(f"fp/self{i}/x", b"s%d" % i, 0, _props(CorrelationData=b"c%d" % i))
        await asyncio.sleep(0.3)
        for _ in range(100):
            if len(fast_box) == len(paho_box) == 2 * 71 + 1:
                break
            await asyncio.sleep(0.05)
        assert len(fast_box) == 2 * 71 + 1  # every message once per matching route (+ the retained state)
        assert sorted(fast_box, key=repr) == sorted(paho_box, key=repr)
        assert fast_link._fast is not None and fast_link._fast.messages_in > 0
        await fast_link.close()
        await paho_link.close()
    finally:
        broker.stop()


@pytest.mark.asyncio
async def test_a_failure_in_the_fast_path_ends_the_connection(caplog: pytest.LogCaptureFixture) -> None:
    import paho.mqtt.client as mqtt

    paho = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    fd = ours.fileno()
    paho._sock = ours
    loop = asyncio.get_running_loop()

    def broken(_m: Any) -> None:
        raise RuntimeError("boom")

    fast = mqttfast.FastPath(paho, loop, broken, log)
    try:
        peer.sendall(mqttwire.publish_packet("t/1", b"x", None))
        for _ in range(200):  # paho's own reads take over, see the end of the stream, drop the socket
            if paho._sock is None:
                break
            await asyncio.sleep(0.01)
        assert paho._sock is None
        assert "MQTT fast path failed; dropping the connection" in caplog.text
    finally:
        fast.close()
        loop.remove_reader(fd)
        ours.close()
        peer.close()
