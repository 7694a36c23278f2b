"""A deadline for slow request headers, added to uvicorn's h11 protocol.

Why this layer exists: uvicorn (0.54) arms no timer while a request's headers arrive.
Its ``timeout_keep_alive`` runs only between requests and is cancelled by the first byte
of the next one, and ``h11_max_incomplete_event_size`` bounds the header *size* (16 KiB),
not the time, so a client sending one header byte per second holds a connection for
hours ("slowloris"). Neither the MCP SDK nor uvicorn has a setting for it, so this
subclass starts a clock when a connection opens (and again after each response on a
kept-alive connection) and, if the request line and headers are not complete when it
runs out, answers ``408 Request Timeout`` and closes the connection. Request *bodies*
have their own deadline in the ASGI apps (``read_body`` in ``web.py``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("mcpgen.runtime.bridge.http")

HEADER_TIMEOUT = 10.0
"""Default seconds a client has to send a request line and its headers."""

_REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def header_timeout_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a ``seconds`` deadline on request headers."""

    class HeaderTimeoutProtocol(_HeaderTimeoutH11):
        header_timeout = seconds

    return HeaderTimeoutProtocol


class _HeaderTimeoutH11(H11Protocol):
    header_timeout: float = HEADER_TIMEOUT
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # h11 leaves IDLE once it has parsed a complete request line and headers.
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request on this connection gets its own clock

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:  # bytes of a request arrived, too slowly: tell the client
            log.info("request headers not complete after %.0f s: closing the connection", self.header_timeout)
            self.transport.write(_REQUEST_TIMEOUT)
        self.transport.close()
