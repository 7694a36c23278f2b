"""The device gateway: a WebSocket server that xiaozhi-style devices connect to.

Per connection: check the handshake headers (``Device-Id`` required, ``Protocol-Version``
an integer when present, then the pluggable authenticator; rejected devices get HTTP 401
and a log line, nothing else), wait for the device ``hello``, then hand the session to
the transport-neutral :class:`~mcpgen.runtime.links.hub.DeviceHub` this class is built on (the
hello check and the server hello ``{"type": "hello", "transport": "websocket",
"session_id": <uuid>, "version": 3}``, session replacement, setup, handing out ready
:class:`~mcpgen.runtime.session.device.Device` handles); the MCP session then runs over
``{"session_id", "type": "mcp", "payload"}`` envelopes.

The WebSocket server is picows (frames parsed in C). A connection has no task of its
own: picows calls the compiled :class:`~runtime.links.websocket.wslink.DeviceLink` for every frame, and
replies go from there through the compiled codec to the caller's future. The gateway
itself keeps one periodic sweep for everything time-based (slow handshakes, missing
hellos, keepalive pings, closing handshakes) and one task per connection only while its
MCP session is being set up. A device that misbehaves (bad JSON, oversize frames, no
hello, a failed setup) only ends its own connection. A device that connects again gets
a fresh session; its old handle is closed and the old handle's pending calls fail with
``DeviceDisconnected``.

With ``reuse_port=True`` several processes may listen on the same port (``SO_REUSEPORT``):
the kernel spreads new connections across them, and each process owns the devices that
connected to it (see :mod:`mcpgen.runtime.links.workers`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import http
import ipaddress
import logging
import time
import types
import urllib.parse
from collections.abc import Mapping
from typing import Any, Optional, Unpack

from picows import WSAutoPingStrategy, WSCloseCode

from mcpgen.runtime.auth import Handshake, bearer_token
from mcpgen.runtime.core import wire
from mcpgen.runtime.errors import QUOTE_LIMIT, DeviceDisconnected, LogThrottle, clip, quoted
from mcpgen.runtime.links import fdlimit, memtrim
from mcpgen.runtime.links.hub import DeviceHub
from mcpgen.runtime.links.websocket import wslink
from mcpgen.runtime.links.websocket.wslink import DeviceLink
from mcpgen.runtime.session.device import Device
from mcpgen.runtime.session.options import SessionKeywords, SessionOptions

log = logging.getLogger("mcpgen.runtime.links.websocket.gateway")

_NO_HEADERS: Mapping[str, str] = types.MappingProxyType({})
#: Largest HTTP upgrade request accepted (request line and headers).
MAX_REQUEST = 16384
#: How often the gateway's sweep looks at handshakes, hellos and closing connections.
SWEEP_INTERVAL = 0.1
#: Initial receive buffer of a connection (picows grows it for larger frames): small, so
#: that 10,000 idle devices stay cheap.
READ_BUFFER = 2048
#: Most bytes read from one connection at a time (wslink.READ_CHUNK, re-exported here).
READ_CHUNK = wslink.READ_CHUNK
#: Send-buffer watermarks of a connection: over the high one the device is not reading
#: what we send, and we stop reading from it until it drains below the low one.
WRITE_HIGH = 65536
WRITE_LOW = 16384
#: What ``Gateway(socket_transport=...)`` accepts: the loop's own (the default) or aiofastnet.
SOCKET_TRANSPORTS = ("loop", "aiofastnet")
#: Least time between two log lines about refused connections (the rest are counted).
REFUSAL_LOG_INTERVAL = 5.0


class Gateway(DeviceHub):
    """Accepts device connections and yields ready device handles (see docs/architecture.md)."""

    transport_name = "websocket"
    log = log

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        options: Optional[SessionOptions] = None,
        hello_timeout: float = 10.0,
        ping_interval: Optional[float] = 20.0,
        close_timeout: float = 2.0,
        path: Optional[str] = None,
        handshake_timeout: float = 10.0,
        reuse_port: bool = False,
        backlog: int = 1024,
        gc_freeze: Optional[bool] = None,
        drain_timeout: float = 30.0,
        max_backlog: int = 1 << 20,
        max_handshakes: int = 1024,
        max_handshakes_per_source: int = 256,
        socket_transport: str = "loop",
        **session: Unpack[SessionKeywords],
    ) -> None:
        super().__init__(options=options, gc_freeze=gc_freeze, **session)
        self.host = host
        self._port = port
        self.hello_timeout = hello_timeout
        self.ping_interval = ping_interval
        self.close_timeout = close_timeout
        self.path = path
        self.handshake_timeout = handshake_timeout
        self.reuse_port = reuse_port
        self.backlog = backlog
        if socket_transport not in SOCKET_TRANSPORTS:
            choices = ", ".join(SOCKET_TRANSPORTS)
            raise ValueError(f"Gateway(socket_transport={socket_transport!r}): expected one of {choices}")
        # "loop" (the event loop's own TCP transport: uvloop's stream) or "aiofastnet"
        # (picows' default transport: recv() and its own read loop, paced to the per-turn
        # read bound by wslink.ChunkedWSProtocol). "loop" stays the default: in interleaved
        # runs (docs/benchmarks.md section 2) aiofastnet cost the gateway the same CPU per
        # call (0.96-1.05x) and 5.4 KiB more per device (each aiofastnet transport holds a
        # 256-entry iovec array inline: 4,296-byte objects).
        self.socket_transport = socket_transport
        # A device that does not read what we send: how long it may stay stalled and how
        # many bytes may wait for it before its connection is closed (``stalled_closed``).
        self.drain_timeout = drain_timeout
        self.max_backlog = max(max_backlog, self.max_frame + WRITE_HIGH)
        self.stalled_closed = 0
        self._stalled: set[DeviceLink] = set()
        # Connections still in the HTTP upgrade, in all and per source address. Over the
        # per-source cap a new connection is refused at once (``handshakes_refused``). At the
        # global cap the budget is shared: a source holding fewer than the busiest source
        # gets in, and the busiest source's oldest half-open connection is dropped for it
        # (``handshakes_evicted``), so a few addresses cannot lock every other one out.
        self.max_handshakes = max_handshakes
        self.max_handshakes_per_source = max_handshakes_per_source
        self.handshakes_refused = 0
        self.handshakes_evicted = 0
        self._half_open = 0
        # source -> its half-open connections, oldest first
        self._half_open_by_source: dict[str, dict[_HttpUpgrade, None]] = {}
        # n -> the sources holding exactly n half-open connections (n >= 1), and the top n
        self._sources_holding: dict[int, dict[str, None]] = {}
        self._most_held = 0
        self._refusals_unlogged = 0
        self._refusal_logged_at = -REFUSAL_LOG_INTERVAL
        # Refused upgrade requests: a few lines per interval, what the peer sent clipped.
        self._rejection_log = LogThrottle(log, interval=REFUSAL_LOG_INTERVAL)
        self._server: Optional[asyncio.AbstractServer] = None
        self._links: set[DeviceLink] = set()  # every upgraded connection
        self._young: set[Any] = set()  # handshakes and links waiting for a hello
        self._closing_links: set[DeviceLink] = set()
        self._sweeper: Optional[asyncio.TimerHandle] = None
        self._next_ping = 0.0
        # Gives freed heap back after mass departures (departed sessions released first).
        self._trimmer = memtrim.Trimmer(release=memtrim.release_sessions, follow_up=self.call_timeout + 1.0)
        ws_logger = logging.getLogger("mcpgen.runtime.links.websocket.gateway.ws")
        self._ws_logger = logging.LoggerAdapter(ws_logger, {})

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> Gateway:
        if self._server is not None:
            return self
        # Every device holds a descriptor: ask for the most the hard limit allows, and
        # keep the handshake cap well under what we got.
        nofile = fdlimit.raise_nofile_limit()
        if nofile is not None and self.max_handshakes > nofile // 2:
            log.warning(
                "max_handshakes=%d lowered to %d (half of the %d file descriptors this process may open)",
                self.max_handshakes,
                nofile // 2,
                nofile,
            )
            self.max_handshakes = nofile // 2
        loop = asyncio.get_running_loop()
        create_server: Any = loop.create_server
        if self.socket_transport == "aiofastnet":
            import aiofastnet  # only then (picows imports it on its own only when used)

            create_server = functools.partial(aiofastnet.create_server, loop)
        server: asyncio.Server = await create_server(
            lambda: _HttpUpgrade(self),
            self.host,
            self._port,
            reuse_port=self.reuse_port or None,
            backlog=self.backlog,
        )
        self._server = server
        sock = next(iter(server.sockets))
        self._port = sock.getsockname()[1]
        if self.ping_interval:
            self._next_ping = loop.time() + self.ping_interval
        self._sweeper = loop.call_later(SWEEP_INTERVAL, self._sweep)
        log.info("gateway listening on ws://%s:%d", self.host, self._port)
        return self

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self._port}{self.path or '/'}"

    async def close(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()  # no new connections from here on
        await self._close_sessions("gateway closed")
        for link in list(self._links):
            link.shutdown(WSCloseCode.GOING_AWAY, "gateway closed")
        for hs in list(self._young):
            if isinstance(hs, _HttpUpgrade):
                hs.abort()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.close_timeout
        while self._links and loop.time() < deadline:
            await asyncio.sleep(0.01)
        for link in list(self._links):
            if link.transport is not None:
                link.transport.disconnect(False)
        if self._server is not None:
            await self._server.wait_closed()
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        await self._finish_close("gateway closed")

    async def __aenter__(self) -> Gateway:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- connections: the HTTP upgrade ----------------------------------------------------

    def _check_request(self, target: str, headers: dict[str, str], remote: str) -> Any:
        """The :class:`Handshake` of an upgrade request, or ``(status, device_id, reason)``."""
        if self.path is not None and target.split("?", 1)[0] != self.path:
            return (http.HTTPStatus.NOT_FOUND, "?", f"unknown path {quoted(repr(target.split('?', 1)[0]))}")
        query = _query(target)
        lower = {k.lower(): v for k, v in headers.items()}

        def field(header: str) -> Optional[str]:
            # Headers first; query parameters (device-id=...) for clients that cannot set headers.
            value = lower.get(header.lower())
            return value if value is not None else query.get(header.lower())

        device_id = (field("Device-Id") or "").strip()
        if not device_id:
            return (http.HTTPStatus.BAD_REQUEST, "?", "missing Device-Id header")
        pv_text = field("Protocol-Version")
        pv: Optional[int] = None
        if pv_text is not None:
            try:
                pv = int(pv_text.strip())
            except ValueError:
                bad = quoted(repr(pv_text))
                return (http.HTTPStatus.BAD_REQUEST, device_id, f"bad Protocol-Version {bad}")
        return Handshake(
            device_id=device_id,
            client_id=field("Client-Id"),
            token=bearer_token(field("Authorization")),
            protocol_version=pv,
            remote=remote,
            headers=headers,
        )

    def _rejected(self, status: http.HTTPStatus, device_id: str, remote: str, reason: str) -> bytes:
        self.rejected += 1
        # The device id and the reason may carry what the peer sent (a 10 kB header): quote
        # a bounded prefix, and log at a bounded rate (issue 40).
        self._rejection_log.warning(
            "rejected device %s from %s: %s (HTTP %d)",
            quoted(repr(device_id)),
            remote,
            clip(reason, 4 * QUOTE_LIMIT),
            status.value,
        )
        body = f"{status.phrase}: {reason}\n".encode()
        return (
            f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body

    def _upgrade(self, transport: asyncio.Transport, hs: Handshake, data: bytes) -> None:
        """Hands an accepted connection to picows with the bytes read so far.

        picows' own ws_connect hands a connected transport to its protocol the same way
        (set_protocol + connection_made); the gateway does so after it has read and
        authenticated the HTTP upgrade request itself, because picows' request hook is
        synchronous and authenticators may be async.
        """
        # The headers were for the authenticator: the connection keeps only the fields it
        # logs and the session reads (~1.3 KB per device less with 100,000 devices).
        link = DeviceLink(self, dataclasses.replace(hs, headers=_NO_HEADERS), self.max_frame)
        transport.set_write_buffer_limits(high=WRITE_HIGH, low=WRITE_LOW)
        proto = wslink.ChunkedWSProtocol(
            None,  # host:port (client side only)
            None,  # path (client side only)
            False,  # server side
            lambda request: link,
            self._ws_logger,  # an adapter: picows makes a child Logger per connection otherwise
            True,  # disconnect when the listener raises
            None,  # handshake timeout: the upgrade request is already here
            False,  # auto ping: the gateway's sweep pings idle devices, one timer for all
            20.0,
            20.0,
            WSAutoPingStrategy.PING_WHEN_IDLE,
            True,  # answer pings
            self.max_frame,
            None,
            READ_BUFFER,
        )
        link.bind_reads(proto)
        transport.set_protocol(proto)
        proto.connection_made(transport)
        view = memoryview(data)
        while view:
            buf = proto.get_buffer(len(view))
            n = min(len(buf), len(view))
            buf[:n] = view[:n]
            proto.buffer_updated(n)
            view = view[n:]
            if transport.is_closing():
                break
        if self.socket_transport == "aiofastnet":  # its read loop needs the turn's bound
            link.paced = True

    def _half_open_admit(self, conn: _HttpUpgrade, source: str) -> bool:
        """Counts a new connection as half-open (no upgrade request read yet), or refuses
        it when ``max_handshakes_per_source`` are from ``source``. When ``max_handshakes``
        are half-open in all, the busiest source gives up its oldest one to a source that
        holds fewer; a connection from (one of) the busiest sources is refused. A source is
        an IPv4 address or an IPv6 /64 (:func:`_source_of`)."""
        mine = self._half_open_by_source.get(source)
        held = 0 if mine is None else len(mine)
        if held >= self.max_handshakes_per_source:
            self._refused_connection(conn.remote, f"{held} connections from {source} in the HTTP upgrade")
            return False
        if self._half_open >= self.max_handshakes:
            if held >= self._most_held:  # the source is (one of) the busiest itself
                self._refused_connection(conn.remote, f"{self._half_open} connections in the HTTP upgrade")
                return False
            self._evict_oldest_of_busiest(conn.remote)
        if mine is None:
            mine = self._half_open_by_source[source] = {}
        mine[conn] = None
        self._half_open += 1
        self._move_source(source, held, held + 1)
        return True

    def _evict_oldest_of_busiest(self, newcomer: str) -> None:
        busiest = next(iter(self._sources_holding[self._most_held]))
        victim = next(iter(self._half_open_by_source[busiest]))
        self._refused_connection(
            victim.remote,
            f"the HTTP upgrade cap ({self.max_handshakes}) is reached and {busiest} holds the most "
            f"({self._most_held}); its oldest connection makes room for {newcomer}",
            evicted=True,
        )
        victim.abort()  # leaves the count (_settled) before the newcomer enters it

    def _half_open_release(self, conn: _HttpUpgrade, source: str) -> None:
        mine = self._half_open_by_source.get(source)
        if mine is None or mine.pop(conn, False) is False:
            return
        self._half_open -= 1
        held = len(mine)
        if not held:
            del self._half_open_by_source[source]
        self._move_source(source, held + 1, held)

    def _move_source(self, source: str, old: int, new: int) -> None:
        """``source`` went from holding ``old`` half-open connections to ``new`` (one apart)."""
        if old:
            bucket = self._sources_holding[old]
            del bucket[source]
            if not bucket:
                del self._sources_holding[old]
                if self._most_held == old and new < old:
                    self._most_held = new
        if new:
            self._sources_holding.setdefault(new, {})[source] = None
            self._most_held = max(self._most_held, new)

    def _refused_connection(self, remote: str, why: str, evicted: bool = False) -> None:
        """Counts a refused (or, ``evicted``, a dropped) connection; logs one line per
        REFUSAL_LOG_INTERVAL at most."""
        if evicted:
            self.handshakes_evicted += 1
        else:
            self.handshakes_refused += 1
        now = time.monotonic()
        if now - self._refusal_logged_at < REFUSAL_LOG_INTERVAL:
            self._refusals_unlogged += 1
            return
        more = ""
        if self._refusals_unlogged:
            more = f" ({self._refusals_unlogged} more refused since the last line)"
        log.warning("%s connection from %s: %s%s", "dropped" if evicted else "refused", remote, why, more)
        self._refusal_logged_at = now
        self._refusals_unlogged = 0

    # -- connections: the session (wslink.LinkOwner: called by DeviceLink) -------------------

    def link_open(self, link: DeviceLink) -> None:
        if self._closing:
            link.shutdown(WSCloseCode.GOING_AWAY, "gateway closed")
            return
        self._links.add(link)
        link.deadline = asyncio.get_running_loop().time() + self.hello_timeout
        self._young.add(link)

    def link_hello(self, link: DeviceLink, data: bytes) -> None:
        self._young.discard(link)
        hs: Handshake = link.handshake
        hello = wire.decode_hello(data)
        if hello is None and not wslink.is_utf8(data):
            link.refuse_invalid_text()
            return
        refusal = self._hello_refusal(hs.device_id, hello)
        if refusal is not None:
            link.shutdown(WSCloseCode.POLICY_VIOLATION, refusal)
            return
        assert hello is not None
        device = self._open_session(link, hs, hello)
        link.device = device
        link.session = device.session
        link.state = wslink.RUNNING
        try:
            link.send_now(self._server_hello(device))
        except Exception as exc:
            device.connection_lost(f"sending the server hello failed: {exc}")
            return
        # Setup's tools/list reply grew the receive buffer; an idle device needs less
        # (run from the task's done callback: never inside this link's frame callback).
        self._start_setup(device).add_done_callback(lambda _t: link.compact_read_buffer())

    def link_closing(self, link: DeviceLink) -> None:
        self._young.discard(link)
        link.deadline = asyncio.get_running_loop().time() + self.close_timeout
        self._closing_links.add(link)

    def link_stalled(self, link: DeviceLink) -> None:
        """The device stopped reading (DeviceLink paused reading from it): it has
        ``drain_timeout`` to drain its send buffer."""
        link.stall_deadline = asyncio.get_running_loop().time() + self.drain_timeout
        self._stalled.add(link)

    def link_drained(self, link: DeviceLink) -> None:
        self._stalled.discard(link)

    def check_backlog(self, link: DeviceLink, more: int) -> None:
        """Called before a send to a stalled device: refuses the send, and closes the
        connection, when the bytes waiting for it would pass ``max_backlog``."""
        t = link.transport
        queued = t.underlying_transport.get_write_buffer_size()
        if queued + more > self.max_backlog:
            self._close_stalled(link, f"{queued} bytes unsent, over max_backlog={self.max_backlog}")
            raise DeviceDisconnected("the device does not read its connection (send buffer full)")

    def _close_stalled(self, link: DeviceLink, why: str) -> None:
        self._stalled.discard(link)
        self.stalled_closed += 1
        log.warning(
            "device %s (%s) does not read its connection: %s; closing it",
            link.handshake.device_id,
            link.handshake.remote,
            why,
        )
        link.close_reason = "the device did not read its connection"
        link.state = wslink.CLOSING
        if link.transport is not None and not link.transport.is_disconnected:
            link.transport.disconnect(False)  # a close frame would wait behind the backlog

    def link_lost(self, link: DeviceLink) -> None:
        self._stalled.discard(link)
        self._links.discard(link)
        self._young.discard(link)
        self._closing_links.discard(link)
        device: Optional[Device] = link.device
        if link.oversize:
            reason = f"frame larger than max_frame={self.max_frame} refused"
            log.warning("device %s: %s; connection closed", link.handshake.device_id, reason)
        else:
            reason = link.close_reason or "connection closed"
        if device is not None:
            device.connection_lost(reason)
            self._gone(device)
            self._cancel_setup(device)

    # -- the sweep: everything time-based, for all connections -----------------------------

    def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        try:
            for link in list(self._stalled):
                if link.state == wslink.CLOSING:  # the closing handshake's deadline applies
                    self._stalled.discard(link)
                elif now >= link.stall_deadline:
                    self._close_stalled(link, f"nothing drained for {self.drain_timeout:g}s")
            for item in list(self._young):
                if now < item.deadline:
                    continue
                self._young.discard(item)
                if isinstance(item, _HttpUpgrade):
                    log.warning(
                        "connection from %s: no upgrade request within %gs",
                        item.remote,
                        self.handshake_timeout,
                    )
                    item.abort()
                else:
                    log.warning(
                        "device %s (%s): no hello within %gs; closing",
                        item.handshake.device_id,
                        item.handshake.remote,
                        self.hello_timeout,
                    )
                    item.shutdown(WSCloseCode.POLICY_VIOLATION, "hello expected")
            for link in list(self._closing_links):
                if link.transport is None or link.transport.is_disconnected:
                    self._closing_links.discard(link)
                elif now >= link.deadline:  # the device did not answer our close frame
                    self._closing_links.discard(link)
                    link.transport.disconnect(False)
            self._trimmer.note(len(self._links), now)
            if self.ping_interval and now >= self._next_ping:
                self._next_ping = now + self.ping_interval
                self._keepalive(now)
        finally:
            if not loop.is_closed():
                self._sweeper = loop.call_later(SWEEP_INTERVAL, self._sweep)

    def _keepalive(self, now: float) -> None:
        """Pings devices that sent nothing for a ping interval; closes those that did not
        answer the previous ping (like websockets' ping_interval/ping_timeout, one timer for all)."""
        for link in list(self._links):
            if link.state == wslink.CLOSING or link.transport is None:
                continue
            if link.ping_outstanding:
                log.warning("device %s: no answer to a keepalive ping; closing", link.handshake.device_id)
                link.close_reason = "keepalive ping timeout"
                link.shutdown(WSCloseCode.INTERNAL_ERROR, "keepalive ping timeout")
            elif link.frames == link.frames_seen:
                link.ping_outstanding = True
                link.ping_sent = now
                link.transport.send_ping()
                link.compact_read_buffer()  # idle: what a large message grew is not needed
            link.frames_seen = link.frames


class _HttpUpgrade(asyncio.Protocol):
    """A new connection until its HTTP upgrade request is read and authenticated.

    Hand-written because the upgrade must wait for a possibly async authenticator before
    anything is answered (a refused device gets only its HTTP error); picows then takes
    the connection over, re-reads the request and validates the WebSocket headers itself.
    """

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.transport: Optional[asyncio.Transport] = None
        self.buf = bytearray()
        self.remote = "?"
        self.deadline = 0.0
        self.done = False
        self.source: Optional[str] = None  # the peer's address while counted as half-open

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        host = "?"
        try:
            peer = transport.get_extra_info("peername")
            host = _source_of(str(peer[0]))
            self.remote = f"{peer[0]}:{peer[1]}"
        except Exception:
            pass
        gw = self.gateway
        # Aborted from the next callback, not from here: aiofastnet's transport calls
        # connection_made and then starts reading (a separate callback that does not look
        # whether the transport was closed meanwhile), so an abort here leaves the event
        # loop watching a closed descriptor whose number the next socket reuses.
        if gw._closing:
            asyncio.get_running_loop().call_soon(transport.abort)
            return
        if not gw._half_open_admit(self, host):
            self.done = True
            asyncio.get_running_loop().call_soon(transport.abort)
            return
        self.source = host
        self.deadline = asyncio.get_running_loop().time() + gw.handshake_timeout
        gw._young.add(self)

    def _settled(self) -> None:
        """The connection leaves the half-open count (upgraded, refused or gone)."""
        self.gateway._young.discard(self)
        if self.source is not None:
            source, self.source = self.source, None
            self.gateway._half_open_release(self, source)

    def data_received(self, data: bytes) -> None:
        if self.done:
            self.buf += data
            return
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0 or end > MAX_REQUEST:  # (a whole oversize head can come in one read)
            if len(self.buf) > MAX_REQUEST:
                self._respond(
                    self.gateway._rejected(
                        http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                        "?",
                        self.remote,
                        "upgrade request too large",
                    )
                )
            return
        self.done = True
        self._settled()
        parsed = _parse_request(bytes(self.buf[:end]))
        if parsed is None:
            self._respond(
                self.gateway._rejected(
                    http.HTTPStatus.BAD_REQUEST, "?", self.remote, "malformed HTTP request"
                )
            )
            return
        target, headers = parsed
        checked = self.gateway._check_request(target, headers, self.remote)
        if not isinstance(checked, Handshake):
            status, device_id, reason = checked
            self._respond(self.gateway._rejected(status, device_id, self.remote, reason))
            return
        ok = self.gateway._authenticate_now(checked)
        if ok is True or ok is False:
            self._decide(checked, ok)
            return
        assert self.transport is not None
        self.transport.pause_reading()
        task = self.gateway._background(ok)
        task.add_done_callback(lambda t: self._async_decided(checked, t))

    def _async_decided(self, hs: Handshake, task: asyncio.Task) -> None:
        ok = (not task.cancelled()) and task.exception() is None and task.result() is True
        if self.transport is None or self.transport.is_closing():
            return
        self.transport.resume_reading()
        self._decide(hs, ok)

    def _decide(self, hs: Handshake, ok: bool) -> None:
        gw = self.gateway
        if not ok:
            reason = "no bearer token" if hs.token is None else "invalid token"
            self._respond(gw._rejected(http.HTTPStatus.UNAUTHORIZED, hs.device_id, self.remote, reason))
            return
        if gw._closing:
            self.abort()
            return
        assert self.transport is not None
        data = bytes(self.buf)
        self.buf = bytearray()
        gw._upgrade(self.transport, hs, data)

    def _respond(self, response: bytes) -> None:
        self.done = True
        self._settled()
        if self.transport is not None:
            self.transport.write(response)
            self.transport.close()

    def abort(self) -> None:
        self.done = True
        self._settled()
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        self._settled()
        self.transport = None


def _source_of(address: str) -> str:
    """The source a peer address counts under for the half-open caps: an IPv4 address
    (also when IPv4-mapped), or the /64 of an IPv6 one (one host may hold a whole /64)."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return address


def _parse_request(head: bytes) -> Optional[tuple[str, dict[str, str]]]:
    """``(target, headers)`` of an HTTP/1.1 GET request head, or None when malformed."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:
        return None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[0] != "GET" or not parts[2].startswith("HTTP/1."):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            return None
        headers[name] = value.strip()
    return parts[1], headers


def _query(path: str) -> dict[str, str]:
    _, _, qs = path.partition("?")
    return {k.lower(): v for k, v in urllib.parse.parse_qsl(qs)} if qs else {}
