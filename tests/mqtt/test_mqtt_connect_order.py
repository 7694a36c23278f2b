"""Issue 31, item 13: a gateway (re)started while a device is online must ask that device
for a new hello at once, even when the broker sends the device's retained ``online`` state
in the same read as the SUBACK (the handler then runs before SUBSCRIBE has returned).

A real broker rarely packs the two together, so this test talks to a minimal MQTT 5
broker written here that always does: it answers CONNECT, answers SUBSCRIBE with the
SUBACK and a retained PUBLISH in one write, and records what the client publishes.
"""

from __future__ import annotations

import asyncio
import struct

import pytest

from mcpgen.runtime import MqttGateway
from mcpgen.runtime.core import codec

PREFIX = "mcpgen"
DEVICE = "lamp-1"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _packet(first: int, body: bytes) -> bytes:
    return bytes([first]) + _varint(len(body)) + body


def _utf8(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("!H", len(raw)) + raw


async def _read_packet(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first = (await reader.readexactly(1))[0]
    length, shift = 0, 0
    while True:
        byte = (await reader.readexactly(1))[0]
        length += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return first, await reader.readexactly(length)


def _skip_varint(body: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = body[pos]
        pos += 1
        value += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


class PackingBroker:
    """Answers SUBSCRIBE with the SUBACK and the retained state in ONE write."""

    def __init__(self) -> None:
        self.published: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                first, body = await _read_packet(reader)
                kind = first >> 4
                if kind == 1:  # CONNECT -> CONNACK (v5: flags, reason, no properties)
                    writer.write(_packet(0x20, b"\x00\x00\x00"))
                elif kind == 8:  # SUBSCRIBE -> SUBACK + the retained state, one write
                    pid = body[:2]
                    props_len, pos = _skip_varint(body, 2)
                    pos += props_len
                    granted = bytearray()
                    while pos < len(body):
                        (n,) = struct.unpack_from("!H", body, pos)
                        pos += 2 + n
                        granted.append(body[pos] & 0x03)
                        pos += 1
                    suback = _packet(0x90, pid + b"\x00" + bytes(granted))
                    # PUBLISH, QoS 1, retain: topic, packet id, no properties, payload.
                    topic = _utf8(f"{PREFIX}/{DEVICE}/state")
                    state = _packet(0x33, topic + b"\x00\x01" + b"\x00" + b"online")
                    writer.write(suback + state)
                elif kind == 3:  # PUBLISH from the client
                    qos = (first >> 1) & 0x03
                    (n,) = struct.unpack_from("!H", body, 0)
                    topic = body[2 : 2 + n].decode()
                    pos = 2 + n
                    if qos:
                        pid = body[pos : pos + 2]
                        pos += 2
                        writer.write(_packet(0x40, pid))  # PUBACK
                    props_len, pos = _skip_varint(body, pos)
                    await self.published.put((topic, body[pos + props_len :]))
                elif kind == 12:  # PINGREQ
                    writer.write(_packet(0xD0, b""))
                elif kind == 14:  # DISCONNECT
                    break
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.mark.parametrize("fast", [True, False], ids=["fast_path", "paho_reads"])
async def test_retained_online_state_with_the_suback_gets_a_goodbye(fast: bool) -> None:
    broker = PackingBroker()
    await broker.start()
    gateway = MqttGateway("127.0.0.1", broker.port, topic_prefix=PREFIX, client_id="gw-test")
    gateway._broker.fast = fast  # the read path the SUBACK and the state arrive on
    try:
        await gateway.start()
        # The device, online before the gateway subscribed, is asked for a new hello.
        topic, payload = await asyncio.wait_for(broker.published.get(), 5.0)
        assert topic == f"{PREFIX}/{DEVICE}/down"
        assert payload == codec.encode_goodbye()
    finally:
        await gateway.close()
        await broker.close()
