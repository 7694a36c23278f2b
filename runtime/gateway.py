"""The device gateway: a WebSocket server that xiaozhi-style devices connect to.

Per connection: check the handshake headers (``Device-Id`` required, ``Protocol-Version``
an integer when present, then the pluggable authenticator; rejected devices get HTTP 401
and a log line), wait for the device ``hello`` (``features.mcp`` must be true), answer
with the server hello ``{"type": "hello", "transport": "websocket", "session_id":
<uuid>, "version": 3}``, then run the MCP session over ``{"session_id", "type": "mcp",
"payload"}`` envelopes and hand out the ready :class:`~runtime.device.Device`.

Every connection runs in its own task; a device that misbehaves (bad JSON, oversize
frames, no hello, a failed setup) only ends its own connection. A device that connects
again gets a fresh session; its old handle is closed and the old handle's pending calls
fail with ``DeviceDisconnected``.
"""

from __future__ import annotations

import asyncio
import collections
import http
import inspect
import logging
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any, Optional

import orjson
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from mcpgen.runtime.auth import Authenticator, Handshake, bearer_token
from mcpgen.runtime.device import Device, Policy
from mcpgen.runtime.errors import DeviceTimeout, SpecMismatch

log = logging.getLogger("mcpgen.runtime.gateway")

_INFO_ATTR = "_mcpgen_handshake"


class WebSocketTransport:
    """Sends frames as WebSocket text messages."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws

    async def send(self, data: bytes) -> None:
        await self.ws.send(data, text=True)

    async def close(self) -> None:
        await self.ws.close(1000, "session closed")


class Gateway:
    """Accepts device connections and yields ready device handles (see docs/architecture.md)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        auth: Optional[Authenticator] = None,
        fingerprint: Optional[str] = None,
        policy: Policy = "warn",
        max_frame: int = 65536,
        call_timeout: float = 10.0,
        hello_timeout: float = 10.0,
        setup_timeout: Optional[float] = None,
        vision: Optional[Mapping[str, str]] = None,
        ping_interval: Optional[float] = 20.0,
        close_timeout: float = 2.0,
        path: Optional[str] = None,
    ) -> None:
        if policy not in ("strict", "warn", "off"):
            raise ValueError(f"policy must be 'strict', 'warn' or 'off', not {policy!r}")
        self.host = host
        self._port = port
        self.auth = auth
        self.fingerprint = fingerprint
        self.policy: Policy = policy
        self.max_frame = max_frame
        self.call_timeout = call_timeout
        self.hello_timeout = hello_timeout
        self.setup_timeout = setup_timeout
        self.vision = dict(vision) if vision is not None else None
        self.ping_interval = ping_interval
        self.close_timeout = close_timeout
        self.path = path
        self.connected: dict[str, Device] = {}
        self._live: dict[str, Device] = {}  # device id -> newest handle, ready or in setup
        self._server: Optional[Server] = None
        self._waiters: list[tuple[Optional[str], asyncio.Future]] = []
        self._queues: list[asyncio.Queue] = []
        self._unclaimed: collections.deque[Device] = collections.deque()
        self._closing = False
        self._tasks: set[asyncio.Task] = set()
        self.rejected = 0

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> Gateway:
        if self._server is not None:
            return self
        self._server = await serve(
            self._handler,
            self.host,
            self._port,
            process_request=self._process_request,
            max_size=self.max_frame,
            compression=None,
            ping_interval=self.ping_interval,
            close_timeout=self.close_timeout,
            logger=logging.getLogger("mcpgen.runtime.gateway.websockets"),
        )
        sock = next(iter(self._server.sockets))
        self._port = sock.getsockname()[1]
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
        devices = list(self._live.values())
        await asyncio.gather(*(d.close("gateway closed") for d in devices), return_exceptions=True)
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for _, fut in self._waiters:
            if not fut.done():
                fut.set_exception(DeviceTimeout("gateway closed"))
        self._waiters.clear()
        for q in self._queues:
            q.put_nowait(None)

    async def __aenter__(self) -> Gateway:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- handing out devices ------------------------------------------------------------

    async def wait_for_device(
        self, device_id: Optional[str] = None, timeout: Optional[float] = 10.0
    ) -> Device:
        """A ready device handle, waiting up to ``timeout`` for one (then :class:`DeviceTimeout`).

        With ``device_id``: that device's current handle. Without: the oldest ready device
        not handed out by ``wait_for_device`` before, so repeated calls collect every
        device once (a device that reconnects counts as new).
        """
        if device_id is not None:
            d = self.connected.get(device_id)
            if d is not None and not d.closed:
                self._claim(d)
                return d
        else:
            while self._unclaimed:
                d = self._unclaimed.popleft()
                if not d.closed:
                    return d
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        entry = (device_id, fut)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise DeviceTimeout(
                f"no device{'' if device_id is None else ' ' + repr(device_id)} ready within {timeout}s"
            ) from None
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    def _claim(self, device: Device) -> None:
        try:
            self._unclaimed.remove(device)
        except ValueError:
            pass

    async def devices(self) -> AsyncIterator[Device]:
        """Every device as its session becomes ready (those already connected first),
        until the gateway closes."""
        if self._closing:
            return
        q: asyncio.Queue = asyncio.Queue()
        for d in self.connected.values():
            if not d.closed:
                q.put_nowait(d)
        self._queues.append(q)
        try:
            while True:
                d = await q.get()
                if d is None:
                    return
                if not d.closed:
                    yield d
        finally:
            if q in self._queues:
                self._queues.remove(q)

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _ready(self, device: Device) -> None:
        if self._live.get(device.device_id) is not device or device.closed:
            return
        self.connected[device.device_id] = device
        log.info(
            "device %s ready (%s, %d tools, fingerprint %s%s)",
            device.device_id,
            device.server_info.get("name", "?"),
            len(device.tools),
            device.fingerprint,
            ", dynamic" if device.dynamic else "",
        )
        claimed = False
        for entry in list(self._waiters):
            want, fut = entry
            if fut.done():
                continue
            if want == device.device_id or (want is None and not claimed):
                fut.set_result(device)
                self._waiters.remove(entry)
                claimed = True
        if not claimed:
            self._unclaimed.append(device)
        for q in self._queues:
            q.put_nowait(device)

    def _gone(self, device: Device) -> None:
        self._claim(device)
        if self.connected.get(device.device_id) is device:
            del self.connected[device.device_id]
        if self._live.get(device.device_id) is device:
            del self._live[device.device_id]

    # -- connections --------------------------------------------------------------------

    async def _process_request(self, connection: ServerConnection, request: Request) -> Optional[Response]:
        headers: Headers = request.headers
        remote = _remote(connection)
        if self.path is not None and request.path.split("?", 1)[0] != self.path:
            return connection.respond(http.HTTPStatus.NOT_FOUND, "Not Found\n")
        query = _query(request.path)

        def field(header: str) -> Optional[str]:
            # Headers first; query parameters (device-id=...) for clients that cannot set headers.
            value = headers.get(header)
            return value if value is not None else query.get(header.lower())

        device_id = (field("Device-Id") or "").strip()
        if not device_id:
            return self._reject(
                connection, http.HTTPStatus.BAD_REQUEST, "?", remote, "missing Device-Id header"
            )
        pv_text = field("Protocol-Version")
        pv: Optional[int] = None
        if pv_text is not None:
            try:
                pv = int(pv_text.strip())
            except ValueError:
                return self._reject(
                    connection,
                    http.HTTPStatus.BAD_REQUEST,
                    device_id,
                    remote,
                    f"bad Protocol-Version {pv_text!r}",
                )
        hs = Handshake(
            device_id=device_id,
            client_id=field("Client-Id"),
            token=bearer_token(field("Authorization")),
            protocol_version=pv,
            remote=remote,
            headers={k: v for k, v in headers.raw_items()},
        )
        if not await self._authenticate(hs):
            reason = "no bearer token" if hs.token is None else "invalid token"
            return self._reject(connection, http.HTTPStatus.UNAUTHORIZED, device_id, remote, reason)
        setattr(connection, _INFO_ATTR, hs)
        return None

    async def _authenticate(self, hs: Handshake, logger: logging.Logger = log) -> bool:
        """Whether the authenticator (if any) accepts ``hs``; one that raises refuses (logged)."""
        if self.auth is None:
            return True
        try:
            ok = self.auth.authenticate(hs)
            if inspect.isawaitable(ok):
                ok = await ok
        except Exception:
            logger.exception("authenticator failed for device %r", hs.device_id)
            return False
        return bool(ok)

    def _reject(
        self, connection: ServerConnection, status: http.HTTPStatus, device_id: str, remote: str, reason: str
    ) -> Response:
        self.rejected += 1
        log.warning("rejected device %r from %s: %s (HTTP %d)", device_id, remote, reason, status.value)
        return connection.respond(status, f"{status.phrase}: {reason}\n")

    async def _handler(self, ws: ServerConnection) -> None:
        hs: Optional[Handshake] = getattr(ws, _INFO_ATTR, None)
        if hs is None or self._closing:
            await ws.close(1008, "not accepted")
            return
        device_id = hs.device_id
        try:
            hello = await asyncio.wait_for(self._read_hello(ws), self.hello_timeout)
        except asyncio.TimeoutError:
            log.warning(
                "device %s (%s): no hello within %gs; closing", device_id, hs.remote, self.hello_timeout
            )
            await ws.close(1008, "hello expected")
            return
        except ConnectionClosed:
            return
        if hello is None:
            return
        session_id = str(uuid.uuid4())
        server_hello = {"type": "hello", "transport": "websocket", "session_id": session_id, "version": 3}
        try:
            await ws.send(orjson.dumps(server_hello), text=True)
        except ConnectionClosed:
            return

        device = Device(
            WebSocketTransport(ws), device_id=device_id, session_id=session_id, call_timeout=self.call_timeout
        )
        device.client_id = hs.client_id
        device.hello = hello
        old = self._live.get(device_id)
        self._live[device_id] = device
        if old is not None:
            log.info("device %s reconnected; closing its previous session", device_id)
            self._gone(old)
            self._live[device_id] = device
            # Pending calls of the old handle fail now; its socket closes in the background
            # (a half-open old connection must not delay the new session).
            self._background(old.close("replaced by a new connection from the same device"))
        device.on_close(self._gone)

        setup = asyncio.get_running_loop().create_task(self._setup(device))
        reason = "connection closed"
        try:
            while True:
                msg = await ws.recv()
                if isinstance(msg, str):
                    try:
                        device.feed(msg)
                    except Exception:
                        log.exception("device %s: handling a frame failed", device_id)
                # binary frames carry audio on xiaozhi devices: not ours
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            if rcvd is not None and rcvd.code == 1009 or (exc.sent is not None and exc.sent.code == 1009):
                reason = f"frame larger than max_frame={self.max_frame} refused"
                log.warning("device %s: %s; connection closed", device_id, reason)
            else:
                code = rcvd.code if rcvd is not None else (exc.sent.code if exc.sent is not None else 1006)
                reason = f"connection closed (code {code})"
        finally:
            device.connection_lost(reason)
            self._gone(device)
            if not setup.done():
                setup.cancel()
            try:
                await setup
            except (asyncio.CancelledError, Exception):
                pass

    async def _read_hello(self, ws: ServerConnection) -> Optional[dict]:
        while True:
            msg = await ws.recv()
            if not isinstance(msg, str):
                continue
            try:
                hello = orjson.loads(msg)
            except orjson.JSONDecodeError:
                hello = None
            if not isinstance(hello, dict) or hello.get("type") != "hello":
                log.warning("device sent %r before its hello; closing", msg[:80])
                await ws.close(1008, "hello expected")
                return None
            features = hello.get("features")
            if not isinstance(features, dict) or features.get("mcp") is not True:
                log.warning("device hello without features.mcp=true; closing")
                await ws.close(1008, "MCP support (features.mcp) required")
                return None
            return hello

    async def _setup(self, device: Device) -> None:
        try:
            await device.setup(
                fingerprint=self.fingerprint,
                policy=self.policy,
                timeout=self.setup_timeout,
                vision=self.vision,
            )
        except SpecMismatch as exc:
            log.warning("device %s refused: %s", device.device_id, exc)
            await device.close(f"refused: {exc}")
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not device.closed:
                log.warning("device %s: session setup failed: %s", device.device_id, exc)
            await device.close(f"session setup failed: {exc}")
            return
        self._ready(device)


def _query(path: str) -> dict[str, str]:
    _, _, qs = path.partition("?")
    return {k.lower(): v for k, v in urllib.parse.parse_qsl(qs)} if qs else {}


def _remote(connection: ServerConnection) -> str:
    try:
        addr: Any = connection.remote_address
        return f"{addr[0]}:{addr[1]}"
    except Exception:
        return "?"
