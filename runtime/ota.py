"""Over-the-air rollouts: serve a firmware image and move a fleet onto it (docs/ota.md).

* :func:`read_image` reads what an image says about itself (the ``MCPGEN-OTA-IMAGE``
  marker a ``device.ota: true`` build embeds: device name, version, spec fingerprint) and
  its size and SHA-256, the arguments of ``self.upgrade_firmware``.
* :class:`ImageServer` serves one image over HTTP, or HTTPS with a certificate, from
  inside the event loop.
* :func:`rollout` calls ``self.upgrade_firmware`` on devices of a
  :class:`~mcpgen.runtime.links.hub.DeviceHub` (the WebSocket gateway, the MQTT gateway) or of
  an :class:`~mcpgen.runtime.MqttFleet` worker in batches, waits for each to come back,
  and reports per device what happened; it halts once more than ``max_failures`` devices
  failed.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
import ssl
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional, Protocol, Union

from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout, McpDeviceError, ToolError
from mcpgen.runtime.links.hub import DeviceHub
from mcpgen.runtime.session.device import Device

#: The device's built-in update tool (the stock xiaozhi-esp32 name).
OTA_TOOL = "self.upgrade_firmware"
_MARKER = re.compile(rb"MCPGEN-OTA-IMAGE\|([^|\x00\n]+)\|([^|\x00\n]+)\|([0-9a-f]{16})\|")

Outcome = Literal["updated", "rolled_back", "failed", "offline", "skipped"]
#: Outcomes that count towards ``max_failures``.
FAILURES: tuple[str, ...] = ("rolled_back", "failed", "offline")


class ImageError(ValueError):
    """The file is not an image built with ``device.ota: true``."""


class UnsafeUrl(ValueError):
    """A download URL with a control character (CR, LF, NUL, any below 0x20, or 0x7f): in a
    request line it would end the line and inject headers. Raised before any request."""


def check_url(url: str) -> str:
    """Returns ``url`` when it holds no control character; raises :class:`UnsafeUrl` otherwise
    (the devices refuse such a URL too, before they connect)."""
    for i, ch in enumerate(url):
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise UnsafeUrl(
                f"url {url[:i]!r}...: control character {ord(ch):#04x} at offset {i}; a download "
                "URL never holds CR, LF, NUL or another control character (percent-encode it)"
            )
    return url


#: Why a device refused an update, from the start of its tool error (ports/host/ota.cpp and
#: the ESP-IDF port word these the same): :attr:`DeviceResult.reason`.
REFUSALS: tuple[tuple[str, str], ...] = (
    ("unsigned image", "unsigned"),
    ("truncated signature", "truncated_signature"),
    ("bad signature", "bad_signature"),
    ("downgrade refused", "downgrade"),
    ("unsafe url", "unsafe_url"),
    ("SHA-256 mismatch", "sha256_mismatch"),
    ("truncated download", "truncated_download"),
)


def refusal_reason(message: str) -> str:
    """The typed reason of a device's refusal message (``"other"`` when it is none above)."""
    for prefix, reason in REFUSALS:
        if message.startswith(prefix):
            return reason
    return "other"


@dataclass(frozen=True)
class FirmwareImage:
    """An image file and what ``self.upgrade_firmware`` needs to know about it."""

    path: Path
    data: bytes = field(repr=False)
    sha256: str
    device_name: str
    version: str
    fingerprint: str

    @property
    def size(self) -> int:
        return len(self.data)


def read_image(path: Path) -> FirmwareImage:
    """Reads ``path`` and its marker; raises :class:`ImageError` when it has none."""
    data = Path(path).read_bytes()
    m = _MARKER.search(data)
    if m is None:
        raise ImageError(
            f"{path}: no MCPGEN-OTA-IMAGE marker; expected a simulator built from a spec with "
            "`device.ota: true` (rebuild it with `codegen build SPEC --target host`)"
        )
    name, version, fingerprint = (g.decode("utf-8", "replace") for g in m.groups())
    return FirmwareImage(Path(path), data, hashlib.sha256(data).hexdigest(), name, version, fingerprint)


def server_tls(certfile: Union[str, Path], keyfile: Optional[Union[str, Path]] = None) -> ssl.SSLContext:
    """A server-side TLS context for :class:`ImageServer` from a PEM certificate (chain) and key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(certfile), None if keyfile is None else str(keyfile))
    return context


class ImageServer:
    """Serves one image at ``http://HOST:PORT/<file name>`` (HTTP/1.0, GET only), or at
    ``https://...`` when given a TLS context (:func:`server_tls`).

    Written on asyncio streams rather than ``http.server`` so it runs in the backend's
    event loop beside the gateway, without threads; it needs nothing but one GET. With
    ``tls`` the certificate must name the address the devices use (``host``, or the name
    in ``url_host``), and the devices must trust its CA.
    """

    #: Bytes handed to the transport at a time: what one client can hold of the image in
    #: this process beyond the transport's buffer (every client reads the one shared copy).
    CHUNK = 64 * 1024

    def __init__(
        self,
        image: FirmwareImage,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        tls: Optional[ssl.SSLContext] = None,
        url_host: Optional[str] = None,
        write_timeout: float = 30.0,
    ) -> None:
        self.image = image
        self.write_timeout = write_timeout  # a client that takes nothing for this long is dropped
        self._view = memoryview(image.data)  # shared by every download: slices never copy
        #: Downloads that handed over the whole image, by the ``fetch`` query of their URL
        #: (:meth:`url_for` gives each device its own): what a rollout counts as fetched.
        self.completed: dict[str, int] = {}
        self.dropped = 0  # clients cut off by the write timeout
        self.host = host
        self.tls = tls
        self.url_host = url_host or host
        self._port = port
        self.path = "/" + image.path.name
        self.requests = 0
        self.bytes_served = 0
        self._server: Optional[asyncio.base_events.Server] = None

    async def start(self) -> ImageServer:
        self._server = await asyncio.start_server(
            self._serve, self.host, self._port, ssl=self.tls, ssl_handshake_timeout=10 if self.tls else None
        )
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def port(self) -> int:
        """The port it listens on (the one chosen by the system when started with 0)."""
        return self._port

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.url_host}:{self._port}{self.path}"

    def url_for(self, device_id: str) -> str:
        """The image's URL for one device: it carries a random ``fetch`` token the server
        records once that download handed over the whole image (:attr:`completed`)."""
        return f"{self.url}?fetch={secrets.token_hex(8)}"

    def fetched(self, url: str) -> bool:
        """True once the download at ``url`` (from :meth:`url_for`) handed over the whole image."""
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("fetch", [""])[0]
        return self.completed.get(token, 0) > 0

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> ImageServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            parts = head.split(b"\r\n", 1)[0].split()
            self.requests += 1
            target = parts[1].decode("latin-1") if len(parts) >= 2 else ""
            path, _, query = target.partition("?")
            if len(parts) >= 2 and parts[0] == b"GET" and path == self.path:
                writer.write(
                    b"HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n" % self.image.size
                )
                # Chunks of the one shared buffer, each drained under the write timeout: a
                # slow client holds at most a chunk and the transport's buffer, and one that
                # reads nothing is dropped instead of holding its socket and memory forever.
                for start in range(0, self.image.size, self.CHUNK):
                    writer.write(self._view[start : start + self.CHUNK])
                    try:
                        await asyncio.wait_for(writer.drain(), self.write_timeout)
                    except TimeoutError:
                        self.dropped += 1
                        writer.transport.abort()
                        return
                self.bytes_served += self.image.size
                token = urllib.parse.parse_qs(query).get("fetch", [""])[0]
                if token:
                    self.completed[token] = self.completed.get(token, 0) + 1
            else:
                writer.write(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass  # a client that went away or sent garbage only loses its own download
        finally:
            writer.close()


@dataclass
class DeviceResult:
    """What happened to one device in a rollout."""

    device_id: str
    outcome: Outcome
    old_version: str = ""
    new_version: str = ""
    old_fingerprint: str = ""
    new_fingerprint: str = ""
    duration: float = 0.0
    detail: str = ""
    #: Why a ``failed`` device refused (:func:`refusal_reason`: ``unsigned``,
    #: ``bad_signature``, ``truncated_signature``, ``downgrade``, ``unsafe_url``, ...), or "".
    reason: str = ""

    def line(self) -> str:
        """One progress line: ``lamp-3  updated  0.3.1 (b06a...) -> 0.4.0 (77c2...)  2.1s``;
        a device that never ran the update (skipped, offline) says only what it knows."""
        if self.old_fingerprint or self.new_fingerprint:
            unknown = "(not back)" if self.outcome == "offline" else "(unchanged)"
            new = f"{self.new_version} ({self.new_fingerprint})" if self.new_fingerprint else unknown
            change = f"{self.old_version} ({self.old_fingerprint}) -> {new}"
            text = f"{self.device_id}  {self.outcome}  {change}  {self.duration:.1f}s"
        else:
            text = f"{self.device_id}  {self.outcome}"
            if self.outcome != "skipped":
                text += f"  {self.duration:.1f}s"
        return text + (f"  {self.detail}" if self.detail else "")


@dataclass
class RolloutReport:
    results: list[DeviceResult]
    halted: bool  # more than max_failures devices failed; the rest were skipped

    def count(self, outcome: Outcome) -> int:
        return sum(1 for r in self.results if r.outcome == outcome)

    @property
    def failures(self) -> int:
        return sum(1 for r in self.results if r.outcome in FAILURES)


class SharedFleet(Protocol):
    """What a rollout needs of an :class:`~mcpgen.runtime.MqttFleet` worker (a structural
    type: this module sits beside the fleet and does not import it)."""

    def is_online(self, device_id: str) -> Optional[bool]: ...

    async def device(self, device_id: str, *, timeout: Optional[float] = None) -> Device: ...


#: Where a rollout finds devices: a gateway (WebSocket or MQTT) or a fleet worker.
Devices = Union[DeviceHub, SharedFleet]


async def _current(hub: Devices, device_id: str, deadline: float) -> Optional[Device]:
    """The device's ready session now, or None when it is not connected."""
    if isinstance(hub, DeviceHub):
        d = hub.connected.get(device_id)
        return None if d is None or d.closed else d
    if hub.is_online(device_id) is False:  # its retained state says offline (its Last Will)
        return None
    try:  # the worker's own session (initialize -> tools/list the first time)
        return await hub.device(device_id, timeout=min(deadline, 10.0))
    except McpDeviceError:
        return None


async def update_device(
    hub: Devices,
    device_id: str,
    image: FirmwareImage,
    url: str,
    *,
    deadline: float = 60.0,
    allow_downgrade: bool = False,
    server: Optional[ImageServer] = None,
) -> DeviceResult:
    """Updates one device and waits (up to ``deadline`` seconds in all) for it to come back.

    The device replies, reboots into the new slot and reconnects; its new session's
    fingerprint and version say which image runs: the new one (``updated``) or, when the
    new image did not reach the backend, the old one after the device's rollback
    (``rolled_back``). With ``server`` (the :class:`ImageServer` serving ``url``) the device
    gets its own URL and counts as updated only when the server saw it fetch the whole
    image. ``allow_downgrade`` lets the device install a lower version (it refuses one
    otherwise). A ``url`` with a control character raises :class:`UnsafeUrl` before any call.
    """
    check_url(url)
    t0 = time.monotonic()
    old = await _current(hub, device_id, deadline)
    if old is None:
        return DeviceResult(device_id, "offline", detail="not connected")
    res = DeviceResult(
        device_id,
        "failed",
        old_version=str(old.server_info.get("version", "")),
        old_fingerprint=old.fingerprint or "",
    )
    if server is not None:
        url = server.url_for(device_id)
    args: dict[str, object] = {
        "url": url,
        "sha256": image.sha256,
        "size": image.size,
        "version": image.version,
    }
    if allow_downgrade:  # only when asked: devices built before the argument existed still take the call
        args["allow_downgrade"] = True
    try:
        await old.call(OTA_TOOL, args, timeout=deadline)
    except ToolError as exc:
        res.detail = exc.message
        res.reason = refusal_reason(exc.message)
        res.duration = time.monotonic() - t0
        return res
    except DeviceDisconnected:
        pass  # the reboot may overtake the reply; the fingerprint of the next session tells
    except McpDeviceError as exc:  # a timeout, a device without OTA, ...
        res.detail = f"{type(exc).__name__}: {exc}"
        res.duration = time.monotonic() - t0
        return res
    new = await _next_session(hub, old, t0 + deadline)
    res.duration = time.monotonic() - t0
    if new is None:
        res.outcome, res.detail = "offline", f"did not reconnect within {deadline:g}s"
        return res
    res.new_version = str(new.server_info.get("version", ""))
    res.new_fingerprint = new.fingerprint or ""
    fetched = server is None or server.fetched(url)
    if res.new_fingerprint == image.fingerprint and res.new_version == image.version and fetched:
        res.outcome = "updated"
    elif res.new_fingerprint == image.fingerprint and res.new_version == image.version:
        res.detail = "the device reports the new image, but the image server never handed it the whole image"
    elif res.new_fingerprint == res.old_fingerprint and res.new_version == res.old_version:
        res.outcome = "rolled_back"
        res.detail = "the new image did not come up; the device returned to its old one"
    else:
        res.detail = (
            f"came back as {res.new_version} (spec {res.new_fingerprint}), "
            f"expected {image.version} (spec {image.fingerprint})"
        )
    return res


async def _next_session(hub: Devices, old: Device, until: float) -> Optional[Device]:
    """The device's first ready session after ``old`` closed; None when ``until`` passed."""
    try:
        await asyncio.wait_for(old.wait_closed(), max(0.0, until - time.monotonic()))
        while True:
            left = max(0.0, until - time.monotonic())
            if isinstance(hub, DeviceHub):
                new = await hub.wait_for_device(old.device_id, timeout=left)
            else:
                # A fleet handle closes when the device's Last Will says offline; the next one
                # waits for "online" again and sets up a new session. A device still offline
                # when the time is up fails with DeviceDisconnected; a session whose setup
                # timed out (an image that connects but does not answer) is tried again.
                try:
                    new = await hub.device(old.device_id, timeout=left)
                except (DeviceDisconnected, DeviceTimeout):
                    if time.monotonic() >= until:
                        return None
                    await asyncio.sleep(0.2)
                    continue
            if new is not old:
                return new
            await asyncio.sleep(0.05)
    except (TimeoutError, DeviceTimeout):
        return None


async def rollout(
    hub: Devices,
    devices: Sequence[str],
    image: FirmwareImage,
    url: str,
    *,
    batch: int = 1,
    max_failures: int = 0,
    deadline: float = 60.0,
    on_result: Optional[Callable[[DeviceResult], None]] = None,
    allow_downgrade: bool = False,
    server: Optional[ImageServer] = None,
) -> RolloutReport:
    """Updates ``devices`` (ids of ``hub``: a gateway, or an ``MqttFleet`` worker) to ``image``
    served at ``url``, ``batch`` at a time; each id once, however often it is named.

    After each batch, a rollout with more than ``max_failures`` failed devices (rolled
    back, failed, offline) halts: the devices not tried yet are reported ``skipped``.
    ``on_result`` sees each device's result as it is known (progress output).
    ``allow_downgrade`` and ``server`` are :func:`update_device`'s. A ``url`` with a control
    character raises :class:`UnsafeUrl` before any device is asked.
    """
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    check_url(url)
    results: list[DeviceResult] = []
    pending = list(dict.fromkeys(devices))  # a device named twice is updated once
    halted = False

    async def one(device_id: str) -> DeviceResult:
        r = await update_device(
            hub, device_id, image, url, deadline=deadline, allow_downgrade=allow_downgrade, server=server
        )
        if on_result is not None:
            on_result(r)
        return r

    while pending:
        group, pending = pending[:batch], pending[batch:]
        results.extend(await asyncio.gather(*(one(d) for d in group)))
        if sum(1 for r in results if r.outcome in FAILURES) > max_failures:
            halted = True
            for d in pending:
                r = DeviceResult(d, "skipped", detail=f"rollout halted: more than {max_failures} failures")
                results.append(r)
                if on_result is not None:
                    on_result(r)
            break
    return RolloutReport(results, halted)


__all__ = [
    "OTA_TOOL",
    "DeviceResult",
    "Devices",
    "FirmwareImage",
    "ImageError",
    "ImageServer",
    "RolloutReport",
    "REFUSALS",
    "SharedFleet",
    "UnsafeUrl",
    "check_url",
    "read_image",
    "refusal_reason",
    "rollout",
    "server_tls",
    "update_device",
]
