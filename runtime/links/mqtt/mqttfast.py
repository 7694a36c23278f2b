"""The fast path of :class:`~mcpgen.runtime.links.mqtt.broker.BrokerLink`: its socket's reads and its
QoS 0 publishes, beside paho-mqtt.

paho keeps the MQTT protocol (CONNECT, SUBSCRIBE, keepalive, QoS 1, TLS, DISCONNECT,
errors); this module changes only how bytes get to and from its socket, because that is
where a worker's CPU per call went (docs/mqtt.md, "Where the worker's CPU goes"):

* **Reads.** paho reads each packet with three ``recv`` calls (command byte, length,
  rest) and decodes it in Python. Here the socket is read in chunks of up to 64 KiB, and
  each whole packet is taken apart by :mod:`mcpgen.runtime.links.mqtt.mqttwire` (compiled): a QoS 0
  PUBLISH goes straight to the link's handler; any other packet, and any PUBLISH the
  decoder leaves alone, is handed to paho through its ``_sock_recv``, in order, so paho
  sees exactly the packets it has to act on. End of stream and socket errors are handed
  to paho the same way, so losing the broker is paho's (and aiomqtt's) business as before.
* **Writes.** The QoS 0 publishes of one event-loop iteration are framed by
  ``mqttwire`` and written with one ``send`` at the end of it (paho writes each packet
  on its own, after registering and unregistering a writer with the loop). When paho has
  something queued, or under TLS, the batch goes through paho's own queue instead, so
  packets leave in the order they were made.

:func:`enabled` tells whether the link uses it: when ``mqttwire`` is compiled and neither
``MCPGEN_PURE_PYTHON=1`` nor ``MCPGEN_MQTT_FASTPATH=0`` is set.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any, Optional

from mcpgen.runtime._purepy import is_compiled
from mcpgen.runtime.links.mqtt import mqttwire  # loadable from source: mcpgen.runtime's prefer_source

_CHUNK = 65536  # a read of many replies (about 200 bytes each); the buffer stays resident
_WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


# The paho-mqtt 2.x methods the fast path replaces or calls (it also reads the client's
# _sock, _out_packet and keepalive clocks). A paho without them gets the plain path rather
# than a fast path that fails on every connection.
_PAHO_METHODS = ("_sock_recv", "_packet_queue", "loop_read")


def paho_fits() -> bool:
    """Whether the installed paho-mqtt has what the fast path hooks into."""
    try:
        from paho.mqtt.client import Client
    except ImportError:
        return False
    return all(callable(getattr(Client, name, None)) for name in _PAHO_METHODS)


def enabled() -> bool:
    """Whether new links take the fast path (module docstring)."""
    return is_compiled(mqttwire) and os.environ.get("MCPGEN_MQTT_FASTPATH", "1") != "0" and paho_fits()


class FastPath:
    """Reads and QoS 0 writes of one connected paho client (module docstring).

    ``dispatch(message)`` gets every QoS 0 PUBLISH the fast path decodes (a
    :class:`mcpgen.runtime.links.mqtt.mqttwire.Publish`). Made after the client connected; the link
    makes a new one for every connection.
    """

    def __init__(
        self,
        paho: Any,
        loop: asyncio.AbstractEventLoop,
        dispatch: Callable[[Any], None],
        logger: logging.Logger,
    ) -> None:
        sock = paho.socket()
        if sock is None:
            raise ConnectionError("the MQTT client has no socket")
        self.paho = paho
        self.sock = sock
        self.loop = loop
        self.log = logger
        self.tls = isinstance(sock, ssl.SSLSocket)
        self.messages_in = 0  # PUBLISHes decoded here (the rest went to paho)
        self.reads = 0  # recv calls that did not block
        self.messages_out = 0  # QoS 0 publishes framed here
        self.batches_out = 0  # writes of batched publishes
        self._dispatch = dispatch
        self._buf = b""  # the start of a packet not yet read whole
        self._parts: list[bytes] = []  # chunks of one large packet, joined once it is whole
        self._parts_len = 0
        self._need = 0  # that packet's whole length
        self._feed = bytearray()  # whole packets for paho, read by its _sock_recv
        self._eof = False
        self._error: Optional[OSError] = None
        # One buffer for every read, copied out at the size read: sock.recv(n) makes an
        # n-byte object and shrinks it each time (with n = 256 KiB that was an mmap, an
        # mremap and a munmap per read, seen with strace).
        self._rbuf = bytearray(_CHUNK)
        self._rview = memoryview(self._rbuf)
        self._out: list[bytes] = []
        self._flush_handle: Optional[asyncio.Handle] = None
        # paho reads only what this object hands it; the loop calls this object when the
        # socket is readable (replacing aiomqtt's reader on the same descriptor).
        paho._sock_recv = self._paho_recv
        self._fd = sock.fileno()
        loop.add_reader(self._fd, self._on_readable)

    # -- reading ---------------------------------------------------------------------------

    def _paho_recv(self, bufsize: int) -> bytes:
        feed = self._feed
        if feed:
            chunk = bytes(feed[:bufsize])
            del feed[:bufsize]
            return chunk
        if self._error is not None:
            raise self._error
        if self._eof:
            return b""
        raise BlockingIOError

    def _on_readable(self) -> None:
        try:
            self._read()
        except Exception:  # a bug here must not leave the link half alive
            self.log.exception("MQTT fast path failed; dropping the connection")
            self._give_up()

    def _give_up(self) -> None:
        """Hands the socket back to paho's own reads and ends the connection: paho then
        reads the end of the stream and the link reconnects (with a new fast path)."""
        self.paho.__dict__.pop("_sock_recv", None)
        paho = self.paho

        def paho_reads() -> None:
            try:
                paho.loop_read()
            except Exception:
                self.log.exception("MQTT read failed")

        try:
            self.loop.add_reader(self._fd, paho_reads)
            self.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, ValueError):
            pass

    def _read(self) -> None:
        sock = self.sock
        try:
            n = sock.recv_into(self._rbuf)
        except _WOULD_BLOCK:
            return
        except OSError as exc:
            self._error = exc
            self._to_paho()
            return
        self.reads += 1
        data = bytes(self._rview[:n])
        if self.tls:
            while data and sock.pending():  # decrypted bytes the socket no longer signals
                try:
                    more = sock.recv(_CHUNK)
                except OSError:  # (would-block included)
                    break  # an error shows again at the next read
                if not more:
                    break
                data += more
        if not data:
            self._eof = True
            self._to_paho()
            return
        self._take(data)

    def _take(self, data: bytes) -> None:
        if self._need:
            # The rest of a large packet: collect chunks and join once, not per chunk.
            self._parts.append(data)
            self._parts_len += len(data)
            if self._parts_len < self._need:
                return
            data = b"".join(self._parts)
            self._parts.clear()
            self._parts_len = self._need = 0
        elif self._buf:
            data = self._buf + data
        self._buf = b""
        paho = self.paho
        dispatch = self._dispatch
        decode = mqttwire.decode_publish
        packet_end = mqttwire.packet_end
        pos, n = 0, len(data)
        fed = 0
        while pos < n:
            end = packet_end(data, pos)
            if end == 0:  # not whole yet
                need = mqttwire.packet_length(data, pos)
                rest = data[pos:]
                if need > _CHUNK:
                    self._parts.append(rest)
                    self._parts_len = len(rest)
                    self._need = need
                else:
                    self._buf = rest
                break
            if end < 0:  # a malformed length: paho reads it and drops the connection
                self._feed += data[pos:]
                self._to_paho()
                return
            message = decode(data, pos, end)
            if message is None:
                self._feed += data[pos:end]
                self._to_paho()
            else:
                fed += 1
                dispatch(message)
            if paho._sock is None:  # the connection ended while handling a packet
                return
            pos = end
        self.messages_in += fed
        # paho's keepalive counts time since bytes last came in.
        paho._last_bytes_received = time.monotonic()

    def _to_paho(self) -> None:
        """Lets paho read everything in ``_feed`` (or the end of the stream, or the error)."""
        paho = self.paho
        for _ in range(10000):
            if paho._sock is None:
                return
            before = len(self._feed)
            if not before and not self._eof and self._error is None:
                return
            rc = paho.loop_read()
            if rc or self._eof or self._error is not None or len(self._feed) == before:
                return

    # -- writing ---------------------------------------------------------------------------

    def publish(self, topic: str, payload: bytes, properties: Optional[bytes]) -> None:
        """Queues a QoS 0 PUBLISH for the write at the end of this loop iteration."""
        self._out.append(mqttwire.publish_packet(topic, payload, properties))
        self.messages_out += 1
        if self._flush_handle is None:
            self._flush_handle = self.loop.call_soon(self.flush)

    def flush(self) -> None:
        """Writes the queued publishes now (before anything goes through paho's queue)."""
        handle, self._flush_handle = self._flush_handle, None
        if handle is not None:
            handle.cancel()
        out = self._out
        if not out:
            return
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
        paho = self.paho
        if paho._sock is None:
            return  # lost: the link fails pending calls through on_lost
        sent = 0
        if not self.tls and not paho._out_packet:
            try:
                sent = self.sock.send(data)
            except _WOULD_BLOCK:
                sent = 0
            except OSError:
                sent = 0  # paho's write meets the same error and drops the connection
        if sent < len(data):
            # paho writes the rest when the socket takes it (command 0: no publish callbacks).
            paho._packet_queue(0, data[sent:] if sent else data, 0, 0)
        self.batches_out += 1
        paho._last_msg_out = time.monotonic()

    def close(self) -> None:
        """Drops what was not written (the connection is gone or going)."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self._out.clear()


__all__ = ["FastPath", "enabled"]
