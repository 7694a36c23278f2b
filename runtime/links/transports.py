"""Newline-delimited transports: a device simulator process (stdio) and serial links.

Both carry bare JSON-RPC, one message per line (``\\n``; a trailing ``\\r`` is dropped).
Only JSON-RPC lines reach the session: a line must parse as a JSON object with
``"jsonrpc": "2.0"``, and one with an ``id`` and no ``method`` (a reply) must carry
``result`` or ``error``. Everything else (boot logs on a UART, a log line that quotes a
request or its id, structured logs) is dropped, so it can never answer or fail a call.
A line longer than ``max_frame`` bytes is dropped too, read to its end without being kept
(the link resynchronizes at the next newline and stays open); when its head shows it is
the reply to a pending call, that call fails at once with a :class:`ProtocolError` that
says so, instead of waiting out its timeout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Optional, Union

import orjson

from mcpgen.extras import missing_extra
from mcpgen.runtime.errors import DeviceDisconnected, LogThrottle, ProtocolError
from mcpgen.runtime.session.compat import Fingerprints
from mcpgen.runtime.session.device import Device, Policy, start_session

log = logging.getLogger("mcpgen.runtime.links.transports")
stderr_log = logging.getLogger("mcpgen.runtime.process.stderr")

DEFAULT_MAX_FRAME = 1 << 20


class FrameTooLarge(Exception):
    """A line exceeded the transport's ``max_frame`` (kept for callers; the framer no
    longer raises it: it drops the line and resynchronizes)."""


#: Bytes kept of the start of an overlong line, to tell whose reply it was.
OVERLONG_HEAD = 256


class LineFramer:
    """Splits a byte stream into lines. A line longer than ``max_frame`` is dropped: its
    first :data:`OVERLONG_HEAD` bytes go to ``on_overlong`` once, and the rest is skipped
    up to the next newline without being stored, so noise costs neither memory nor the
    link. ``dropped`` counts such lines."""

    def __init__(
        self, max_frame: int = DEFAULT_MAX_FRAME, on_overlong: Optional[Callable[[bytes], None]] = None
    ) -> None:
        self.max_frame = max_frame
        self.on_overlong = on_overlong
        self.dropped = 0
        self._buf = bytearray()
        self._skipping = False  # inside an overlong line: drop until the next newline

    def _overlong(self, head: bytes) -> None:
        self.dropped += 1
        self._buf = bytearray()
        if self.on_overlong is not None:
            self.on_overlong(head[:OVERLONG_HEAD])

    def feed(self, chunk: bytes) -> list[bytes]:
        out: list[bytes] = []
        start = 0
        end = len(chunk)
        limit = self.max_frame
        while start < end:
            nl = chunk.find(b"\n", start)
            if self._skipping:
                if nl < 0:
                    return out
                self._skipping = False
                start = nl + 1
                continue
            stop = end if nl < 0 else nl
            if len(self._buf) + (stop - start) > limit + 1:  # (+1: a trailing \r is not counted)
                head = bytes(self._buf[:OVERLONG_HEAD]) + chunk[start : min(stop, start + OVERLONG_HEAD)]
                self._overlong(head)
                if nl < 0:
                    self._skipping = True
                    return out
                start = nl + 1
                continue
            if nl < 0:
                self._buf += chunk[start:]
                return out
            if self._buf:
                self._buf += chunk[start:nl]
                line = bytes(self._buf)
                self._buf = bytearray()
            else:
                line = chunk[start:nl]
            start = nl + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > limit:
                self._overlong(line)
                continue
            if line.strip():
                out.append(line)
        return out


# A reply's head as devices write it: `{"jsonrpc":"2.0","id":<id>,"result"|"error"` (the
# members may come in either order). Only an overlong line's head is matched against it.
_REPLY_HEAD = re.compile(
    rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(?P<a>-?\d{1,19}|"[^"\\]{0,128}")'
    rb'|"id"\s*:\s*(?P<b>-?\d{1,19}|"[^"\\]{0,128}")\s*,\s*"jsonrpc"\s*:\s*"2\.0")'
    rb'\s*,\s*"(?:result|error)"\s*:'
)


def reply_head_id(head: bytes) -> Optional[Union[int, str]]:
    """The id of a JSON-RPC reply whose first bytes are ``head``, else None."""
    m = _REPLY_HEAD.match(head)
    if m is None:
        return None
    text = m.group("a") or m.group("b")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, (int, str)) else None


def is_jsonrpc_line(line: bytes) -> bool:
    """Whether ``line`` is a JSON-RPC message the session may read: an object with
    ``"jsonrpc": "2.0"``; a reply (``id``, no ``method``) also needs ``result`` or ``error``."""
    stripped = line.lstrip()
    if not stripped.startswith(b"{"):
        return False  # the common log line: no parse
    try:
        msg = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if type(msg) is not dict or msg.get("jsonrpc") != "2.0":
        return False
    if "method" in msg:
        return True
    return "id" in msg and ("result" in msg or "error" in msg)


class LineLink:
    """What both line transports do with the bytes they read: frame them, hand JSON-RPC
    lines to the device, drop the rest, and fail the call whose reply was too long."""

    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self.device: Optional[Device] = None
        self.framer = LineFramer(max_frame, self._overlong)
        self.ignored = 0  # lines that were not JSON-RPC
        self._overlong_log = LogThrottle(log)

    def deliver(self, chunk: bytes) -> None:
        device = self.device
        assert device is not None
        for line in self.framer.feed(chunk):
            if is_jsonrpc_line(line):
                device.feed(line)
            else:
                self.ignored += 1
                log.debug("device %s: ignoring a line that is not JSON-RPC: %r", device.device_id, line[:120])

    def _overlong(self, head: bytes) -> None:
        device = self.device
        assert device is not None
        rid = reply_head_id(head)
        failed = False
        if rid is not None:
            failed = device.session.fail(
                rid,
                ProtocolError(
                    f"the reply to request {rid!r} is longer than max_frame={self.max_frame} bytes and was "
                    "dropped (the device stays connected); ask for less (a smaller resource or result), "
                    "or connect with a larger max_frame"
                ),
            )
        self._overlong_log.warning(
            "device %s: dropped a line longer than max_frame=%d bytes%s; reading on from the next line",
            device.device_id,
            self.max_frame,
            f" (the reply to request {rid!r}, which failed)" if failed else "",
        )


# -- subprocess (stdio) ---------------------------------------------------------------------


class ProcessTransport:
    """A child process speaking newline-delimited JSON-RPC on stdin/stdout."""

    def __init__(self, proc: asyncio.subprocess.Process, max_frame: int) -> None:
        self.proc = proc
        self.max_frame = max_frame
        self.device: Optional[Device] = None
        self.link = LineLink(max_frame)
        self._reader: Optional[asyncio.Task] = None
        self._stderr_task: Optional[asyncio.Task] = None
        self._closing = False

    def start(self, device: Device) -> None:
        self.device = device
        self.link.device = device
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        if self.proc.stderr is not None:
            self._stderr_task = asyncio.get_running_loop().create_task(self._stderr_loop())

    async def send(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            raise DeviceDisconnected("the device process's stdin is closed")
        stdin.write(data + b"\n")  # one write (one pipe syscall) per message, not two
        await stdin.drain()

    async def _read_loop(self) -> None:
        assert self.device is not None and self.proc.stdout is not None
        reason = "device process closed its stdout"
        try:
            while True:
                chunk = await self.proc.stdout.read(65536)
                if not chunk:
                    break
                self.link.deliver(chunk)
        except asyncio.CancelledError:
            reason = "transport closed"
            raise
        except Exception as exc:  # a broken pipe or a bug in a callback: drop the link
            reason = f"read failed: {exc!r}"
            log.exception("device %s: reading stdout failed", self.device.device_id)
        finally:
            if not self._closing and reason.startswith("device process"):
                try:
                    code = await asyncio.wait_for(self.proc.wait(), 0.5)
                    reason = f"device process exited with code {code}"
                except (TimeoutError, asyncio.CancelledError):
                    pass
            self.device.connection_lost(reason)

    async def _stderr_loop(self) -> None:
        assert self.proc.stderr is not None
        pid = self.proc.pid
        try:
            while True:
                line = await self.proc.stderr.readline()
                if not line:
                    return
                stderr_log.info("[pid %d] %s", pid, line.decode("utf-8", "replace").rstrip())
        except (asyncio.CancelledError, ValueError):
            return

    def _kill(self) -> None:
        if self.proc.returncode is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 2.0)
        except TimeoutError:
            if self.proc.returncode is None:
                self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 2.0)
            except TimeoutError:
                self._kill()
                await self.proc.wait()
        for task in (self._reader, self._stderr_task):
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass


async def connect_process(
    argv: Sequence[str],
    *,
    fingerprint: Fingerprints = None,
    policy: Policy = "warn",
    call_timeout: float = 10.0,
    setup_timeout: Optional[float] = None,
    stderr: Literal["inherit", "log", "devnull"] = "inherit",
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    max_frame: int = DEFAULT_MAX_FRAME,
    device_id: Optional[str] = None,
    vision: Optional[Mapping[str, str]] = None,
) -> Device:
    """Starts ``argv`` (e.g. ``["./sim", "--stdio"]``) and returns its ready :class:`Device`.

    ``device_id`` defaults to ``process:<name>``, ``name`` being the ``serverInfo.name`` the
    device reports (the spec's device name), or the program's file name if it reports
    none: an id that stays the same when the process is restarted, so names derived from
    it (the bridge's tool prefixes, its events resource URI) do too.

    ``stderr``: ``"inherit"`` passes the child's stderr through, ``"log"`` sends each line
    to the ``runtime.process.stderr`` logger, ``"devnull"`` drops it. Closing the device
    closes the child's stdin and waits for it (terminate, then kill, after 2 s each).
    """
    err: Any = {"inherit": None, "log": asyncio.subprocess.PIPE, "devnull": asyncio.subprocess.DEVNULL}[
        stderr
    ]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=err,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    transport = ProcessTransport(proc, max_frame)
    program = os.path.basename(str(argv[0])) if argv else "device"
    device = Device(transport, device_id=device_id or f"process:{program}", call_timeout=call_timeout)
    transport.start(device)
    device = await start_session(
        device, fingerprint=fingerprint, policy=policy, timeout=setup_timeout, vision=vision
    )
    reported = device.server_info.get("name")
    if device_id is None and isinstance(reported, str) and reported.strip():
        device.device_id = f"process:{reported.strip()[:64]}"
    return device


# -- serial (pyserial) -----------------------------------------------------------------------


class SerialTransport:
    """A pyserial port (``/dev/tty*``, a pty, ``socket://host:port``, any ``serial_for_url``).

    Reads are driven by the event loop on the port's file descriptor when it has one
    (ttys, ptys, sockets), else by a reader thread; writes run in one worker thread so a
    slow link never blocks the loop.
    """

    def __init__(self, port: Any, max_frame: int) -> None:
        self.port = port
        self.max_frame = max_frame
        self.device: Optional[Device] = None
        self.link = LineLink(max_frame)
        self._writer = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="mcpgen-serial-w"
        )
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._fd: Optional[int] = None
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._closed = False

    def start(self, device: Device) -> None:
        self.device = device
        self.link.device = device
        self._loop = asyncio.get_running_loop()
        fd = None
        try:
            fd = self.port.fileno()
        except Exception:
            fd = None
        if fd is not None and os.name == "posix":
            self.port.timeout = 0
            self._fd = fd
            self._loop.add_reader(fd, self._on_readable)
        else:
            self.port.timeout = 0.1
            self._thread = threading.Thread(target=self._thread_loop, name="mcpgen-serial-r", daemon=True)
            self._thread.start()

    def _on_readable(self) -> None:
        try:
            chunk = self.port.read(65536)
        except Exception as exc:
            self._lost(f"serial read failed: {exc}")
            return
        if chunk:
            self._deliver(chunk)

    def _deliver(self, chunk: bytes) -> None:
        try:
            self.link.deliver(chunk)
        except Exception as exc:  # a bug in a callback: drop the link, as the process reader does
            device_id = self.device.device_id if self.device is not None else "?"
            log.exception("device %s: reading the serial link failed", device_id)
            self._lost(f"read failed: {exc!r}")

    def _thread_loop(self) -> None:
        assert self._loop is not None
        while not self._stop.is_set():
            try:
                chunk = self.port.read(4096)
            except Exception as exc:
                if not self._stop.is_set():
                    self._loop.call_soon_threadsafe(self._lost, f"serial read failed: {exc}")
                return
            if chunk:
                self._loop.call_soon_threadsafe(self._deliver, chunk)

    def _lost(self, reason: str) -> None:
        if self._fd is not None and self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._fd = None
        if self.device is not None:
            self.device.connection_lost(reason)

    async def send(self, data: bytes) -> None:
        if self._closed:
            raise DeviceDisconnected("serial port closed")
        assert self._loop is not None
        await self._loop.run_in_executor(self._writer, self.port.write, data + b"\n")

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._fd is not None and self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._fd = None
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._writer, self.port.close)
        except Exception:
            log.debug("closing serial port failed", exc_info=True)
        self._writer.shutdown(wait=False)
        if self._thread is not None:
            await loop.run_in_executor(None, self._thread.join, 1.0)


async def connect_serial(
    url: str,
    *,
    baudrate: int = 115200,
    fingerprint: Fingerprints = None,
    policy: Policy = "warn",
    call_timeout: float = 10.0,
    setup_timeout: Optional[float] = None,
    init_retry: Optional[float] = 1.0,
    max_frame: int = DEFAULT_MAX_FRAME,
    device_id: Optional[str] = None,
    vision: Optional[Mapping[str, str]] = None,
    **serial_options: Any,
) -> Device:
    """Opens ``url`` with ``serial.serial_for_url`` and returns the ready :class:`Device`.

    ``initialize`` is re-sent every ``init_retry`` seconds (new id each time) until the
    device answers or ``setup_timeout`` (default ``call_timeout``) passes, because a
    device on a UART may still be booting when the port opens.
    """
    try:
        import serial  # pyserial; imported here so the other transports work without it
    except ModuleNotFoundError as exc:
        raise missing_extra(exc, "connect_serial") from None

    loop = asyncio.get_running_loop()
    port = await loop.run_in_executor(
        None, lambda: serial.serial_for_url(url, baudrate=baudrate, timeout=0, **serial_options)
    )
    transport = SerialTransport(port, max_frame)
    device = Device(transport, device_id=device_id or f"serial:{url}", call_timeout=call_timeout)
    transport.start(device)
    return await start_session(
        device,
        fingerprint=fingerprint,
        policy=policy,
        timeout=setup_timeout,
        init_retry=init_retry,
        vision=vision,
    )
