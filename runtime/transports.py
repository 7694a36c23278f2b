"""Newline-delimited transports: a device simulator process (stdio) and serial links.

Both carry bare JSON-RPC, one message per line (``\\n``; a trailing ``\\r`` is dropped).
Lines that are not JSON (boot logs on a UART) are ignored; a line longer than
``max_frame`` bytes closes the connection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Optional

from mcpgen.extras import missing_extra
from mcpgen.runtime.compat import Fingerprints
from mcpgen.runtime.device import Device, Policy, start_session
from mcpgen.runtime.errors import DeviceDisconnected

log = logging.getLogger("mcpgen.runtime.transports")
stderr_log = logging.getLogger("mcpgen.runtime.process.stderr")

DEFAULT_MAX_FRAME = 1 << 20


class FrameTooLarge(Exception):
    """A line exceeded the transport's ``max_frame``."""


class LineFramer:
    """Splits a byte stream into lines, refusing lines longer than ``max_frame``."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        buf = self._buf
        buf += chunk
        if b"\n" not in chunk:
            if len(buf) > self.max_frame:
                raise FrameTooLarge(f"line longer than {self.max_frame} bytes")
            return []
        parts = buf.split(b"\n")
        self._buf = bytearray(parts.pop())
        if len(self._buf) > self.max_frame:
            raise FrameTooLarge(f"line longer than {self.max_frame} bytes")
        out = []
        for p in parts:
            if p.endswith(b"\r"):
                p = p[:-1]
            if len(p) > self.max_frame:
                raise FrameTooLarge(f"line longer than {self.max_frame} bytes")
            if p.strip():
                out.append(bytes(p))
        return out


# -- subprocess (stdio) ---------------------------------------------------------------------


class ProcessTransport:
    """A child process speaking newline-delimited JSON-RPC on stdin/stdout."""

    def __init__(self, proc: asyncio.subprocess.Process, max_frame: int) -> None:
        self.proc = proc
        self.max_frame = max_frame
        self.device: Optional[Device] = None
        self._reader: Optional[asyncio.Task] = None
        self._stderr_task: Optional[asyncio.Task] = None
        self._closing = False

    def start(self, device: Device) -> None:
        self.device = device
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        if self.proc.stderr is not None:
            self._stderr_task = asyncio.get_running_loop().create_task(self._stderr_loop())

    async def send(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            raise DeviceDisconnected("the device process's stdin is closed")
        stdin.write(data)
        stdin.write(b"\n")
        await stdin.drain()

    async def _read_loop(self) -> None:
        assert self.device is not None and self.proc.stdout is not None
        framer = LineFramer(self.max_frame)
        reason = "device process closed its stdout"
        try:
            while True:
                chunk = await self.proc.stdout.read(65536)
                if not chunk:
                    break
                for line in framer.feed(chunk):
                    self.device.feed(line)
        except FrameTooLarge as exc:
            reason = f"frame refused: {exc}"
            log.warning("device %s: %s; closing", self.device.device_id, reason)
            self._kill()
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
        self._framer = LineFramer(max_frame)
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
        assert self.device is not None
        try:
            lines = self._framer.feed(chunk)
        except FrameTooLarge as exc:
            log.warning("device %s: frame refused: %s; closing", self.device.device_id, exc)
            self._lost(f"frame refused: {exc}")
            return
        for line in lines:
            self.device.feed(line)

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
