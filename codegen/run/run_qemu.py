"""Boots an MCU image in QEMU and hands out its MCP UART: a Cortex-M3 image in
``qemu-system-arm -M mps2-an385`` or an RV32 image in ``qemu-system-riscv32 -M virt
-bios none``; which one comes from the ELF header (:mod:`mcpgen.codegen.targets.qemu_machines`).

The MCP UART (UART0 on both machines) becomes a TCP server socket on 127.0.0.1;
:attr:`QemuDevice.url` is the pyserial URL (``socket://127.0.0.1:PORT``) that
``runtime.connect_serial`` opens. With ``uart="pty"`` it is a host pseudo-terminal instead
(``/dev/pts/N``): the board then looks like one on a USB serial port, for ``codegen bridge
--serial`` and any other program that opens a tty. The firmware's debug console (boot banner,
per-message stack high-water mark) goes to a log file, :attr:`QemuDevice.log_path`: it
is UART1 on the mps2 board and the semihosting console on virt, which has one UART.

    with boot(elf) as dev:
        device = await runtime.connect_serial(dev.url)
        ...
        dev.stack_high_water()  # deepest stack use seen so far, in bytes

``qemu_session(ctx, target=...)`` (``run_qemu_session(spec_path, outdir, target=...)`` from a
path) is ``codegen run SPEC --target qemu`` (or ``qemu-riscv32``): build, boot, connect the
runtime, list the tools, call every assistant-callable one with example arguments, print
the results and the stack figures.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Optional

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.spec.examples import example_call
from mcpgen.codegen.targets.base import BuildContext, BuildOptions
from mcpgen.codegen.targets.qemu import compile_image, memory_report
from mcpgen.codegen.targets.qemu_machines import (
    CORTEX_M3,
    MachineLike,
    QemuMachine,
    get_machine,
    target_of_elf,
)

BOOT_BANNER = "mcpgen: boot "
_HWM_RE = re.compile(r"stack_hwm (\d+)")
_STACK_RE = re.compile(r"stack_hwm \d+/(\d+)")


class QemuError(RuntimeError):
    """QEMU is missing, exited early, or the firmware did not boot."""


class QemuDevice:
    """A running emulator. Use :func:`boot` (a context manager) to get one."""

    def __init__(
        self,
        elf: Path,
        process: subprocess.Popen[bytes],
        port: int,
        log_path: Path,
        stderr_path: Path,
        target: QemuMachine = CORTEX_M3,
        pty: Optional[str] = None,
    ) -> None:
        self.elf = elf
        self.target = target
        self.process = process
        self.port = port
        self.log_path = log_path
        self.stderr_path = stderr_path
        self.pty = pty  # the MCP UART's pseudo-terminal (uart="pty"), else None

    @property
    def url(self) -> str:
        """pyserial URL of the MCP UART, for ``runtime.connect_serial``: the pty's path, or
        ``socket://127.0.0.1:PORT``."""
        return self.pty if self.pty is not None else f"socket://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        """Everything the firmware wrote to its debug console so far."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def stack_high_water(self) -> Optional[int]:
        """Deepest main-stack use the firmware has reported (bytes), None before any report."""
        values = [int(v) for v in _HWM_RE.findall(self.log_text())]
        return max(values) if values else None

    def stack_size(self) -> Optional[int]:
        m = _STACK_RE.findall(self.log_text())
        return int(m[-1]) if m else None

    def wait_for_log(self, needle: str, timeout: float = 10.0) -> str:
        """Blocks until ``needle`` appears on the debug console; returns the log. Raises QemuError."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log_text()
            if needle in text:
                return text
            if not self.running:
                raise QemuError(f"{self.target.qemu} exited with {self.process.returncode}: {self._stderr()}")
            if time.monotonic() > deadline:
                raise QemuError(f"no {needle!r} on the firmware console within {timeout:.0f} s:\n{text}")
            time.sleep(0.02)

    def _stderr(self) -> str:
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace").strip()
        except FileNotFoundError:
            return ""

    def close(self, timeout: float = 5.0) -> None:
        stop_qemu(self.process, timeout)


def stop_qemu(process: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Stops a QEMU: SIGTERM (QEMU shuts down cleanly on it), then SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# prctl(2) option: the signal a child gets when the thread that started it exits.
_PR_SET_PDEATHSIG = 1


def _death_signal_setter() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` that makes the child get SIGTERM when its parent dies (Linux), so an
    emulator never outlives a ``codegen run`` or ``run_qemu`` that was killed, hung up or
    crashed (QEMU shuts down cleanly on SIGTERM). None where prctl is not available.

    Hand-written with ctypes: the stdlib has no prctl binding, and the one on PyPI
    (python-prctl) needs libcap headers to build, for one call. libc's prctl is looked up
    here, before fork, so the child only makes the call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the call: nobody would stop us
            os._exit(1)

    return set_death_signal


@contextmanager
def exit_on_hangup() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal) raise SystemExit in the main thread while
    this is active, so ``with boot(...)`` blocks unwind and stop QEMU before the process
    ends; elsewhere (another thread) it does nothing. The previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    sigs = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {sig: signal.signal(sig, leave) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def qemu_available(target: MachineLike = CORTEX_M3) -> bool:
    return shutil.which(get_machine(target).qemu) is not None


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    sock.set_inheritable(True)
    return sock


# QEMU's line naming the pty it made for a chardev (on its stdout, which goes to qemu.stderr).
_PTY_RE = re.compile(r"char device redirected to (\S+) \(label mcp\)")


def start(
    elf: Path,
    *,
    workdir: Optional[Path] = None,
    boot_timeout: float = 10.0,
    extra_args: tuple[str, ...] = (),
    uart: str = "socket",
) -> QemuDevice:
    """Starts QEMU on ``elf`` and waits for the firmware's boot banner. Call ``close()`` after.

    The emulator and machine follow from the image's CPU (Cortex-M3 or RISC-V). ``uart`` is
    where the MCP UART goes: ``socket`` (a TCP server on 127.0.0.1) or ``pty`` (a host
    pseudo-terminal, :attr:`QemuDevice.pty`)."""
    if uart not in ("socket", "pty"):
        raise ValueError(f"uart={uart!r}: expected 'socket' or 'pty'")
    elf = Path(elf).resolve()
    if not elf.is_file():
        raise QemuError(f"no firmware image at {elf}")
    try:
        target = target_of_elf(elf)
    except ValueError as exc:
        raise QemuError(str(exc)) from exc
    exe = shutil.which(target.qemu)
    if exe is None:
        raise QemuError(target.qemu_missing())
    workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="mcpgen-qemu-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "console.log"
    stderr_path = workdir / "qemu.stderr"
    log_path.write_bytes(b"")
    # The listening socket is created here and inherited by QEMU (chardev fd=N): no free
    # port guessing and no race with other processes grabbing the port.
    sock = _listening_socket()
    port = sock.getsockname()[1]
    mcp_chardev = f"socket,id=mcp,fd={sock.fileno()},server=on,wait=off" if uart == "socket" else "pty,id=mcp"
    cmd = [
        exe,
        "-M",
        target.machine,
        *target.qemu_args,
        "-nodefaults",
        "-display",
        "none",
        "-monitor",
        "none",
        "-chardev",
        mcp_chardev,
        "-serial",
        "chardev:mcp",
        "-chardev",
        f"file,id=console,path={log_path}",
        *target.console_args("console"),
        *extra_args,
        "-kernel",
        str(elf),
    ]
    stderr_file: IO[bytes] = open(stderr_path, "wb")  # noqa: SIM115 - owned by the child
    try:
        # The emulator dies with this process (or, strictly, with the thread starting it:
        # boot() from the main thread, or from a thread that outlives the emulator).
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=stderr_file,
            stderr=stderr_file,
            pass_fds=(sock.fileno(),),
            preexec_fn=_death_signal_setter(),  # noqa: PLW1509 - only a prctl call, see _death_signal_setter
        )
    finally:
        sock.close()
        stderr_file.close()
    dev = QemuDevice(elf, process, port, log_path, stderr_path, target)
    try:
        # Connect only once the firmware runs: a connection QEMU accepts while the
        # machine is still being set up can lose its first bytes.
        dev.wait_for_log(BOOT_BANNER, boot_timeout)
        if uart == "pty":
            found = _PTY_RE.search(dev._stderr())
            if found is None:
                raise QemuError(f"{target.qemu} did not name the pty of the MCP UART: {dev._stderr()}")
            dev.pty = found.group(1)
    except BaseException:
        dev.close()
        raise
    return dev


@contextmanager
def boot(
    elf: Path, *, workdir: Optional[Path] = None, boot_timeout: float = 10.0, uart: str = "socket"
) -> Iterator[QemuDevice]:
    """Context manager: a booted emulator whose MCP UART is at ``.url``; shut down on exit."""
    dev = start(elf, workdir=workdir, boot_timeout=boot_timeout, uart=uart)
    try:
        yield dev
    finally:
        dev.close()


def show_value(value: Any) -> str:
    """A call's arguments or result as every run prints them (host, QEMU, the console):
    JSON, an image as ``<image MIME, N bytes>``, an audio clip as ``<audio MIME, N bytes>``,
    an embedded resource as ``<resource URI MIME, N bytes>`` (several items: a list)."""

    def default(o: Any) -> Any:
        mime = getattr(o, "mime_type", None)
        if mime is not None:  # runtime.Image, Audio, EmbeddedResource
            uri = getattr(o, "uri", None)
            if uri is not None:
                return f"<resource {uri} {mime}, {len(o.data)} bytes>"
            kind = "audio" if type(o).__name__ == "Audio" else "image"
            return f"<{kind} {mime}, {len(o.data)} bytes>"
        return repr(o)

    return json.dumps(value, ensure_ascii=False, default=default)


async def _session(dev: QemuDevice, spec: Any, log: Log) -> int:
    from mcpgen.runtime import connect_serial

    device = await connect_serial(dev.url)
    failures = 0
    try:
        log(
            f"connected: {device.server_info} protocol {device.protocol_version} "
            f"fingerprint {device.fingerprint} (spec {spec.fingerprint})"
        )
        tools = device.tools
        log(f"{len(tools)} tools:")
        for t in tools:
            log(f"  {t.name}{'  [user only]' if t.user_only else ''}")
        for tool in spec.tools:
            if tool.user_only:
                continue
            args, human = example_call(tool, spec.types)
            try:
                result = await device.call(tool.name, args, timeout=10.0, human=human or None)
            except Exception as exc:  # report every tool, then fail
                failures += 1
                shown = show_value({**args, **human})
                log(f"  call {tool.name}({shown}) FAILED: {type(exc).__name__}: {exc}")
            else:
                log(f"  call {tool.name}({show_value({**args, **human})}) -> {show_value(result)}")
    finally:
        await device.close()
    return failures


def run_qemu_session(
    spec_path: Path, outdir: Path, *, target: MachineLike = CORTEX_M3, log: Log = print
) -> int:
    """Loads ``spec_path`` and runs :func:`qemu_session`; an invalid spec is logged and
    returns 1. The front door for scripts and tests; ``codegen run`` has its context."""
    try:
        ctx = BuildContext.load(spec_path, outdir, BuildOptions(log=log))
    except BuildError as exc:
        log(str(exc))
        return 1
    return qemu_session(ctx, target=target)


def qemu_session(ctx: BuildContext, *, target: MachineLike = CORTEX_M3) -> int:
    """``codegen run SPEC --target qemu|qemu-riscv32``: build, boot, connect, list and call the tools.

    Returns a process exit code (0 = every call succeeded).
    """
    target = get_machine(target)
    spec, log = ctx.spec, ctx.log
    if not qemu_available(target):
        log(f"error: {target.qemu_missing()}")
        return 1
    try:
        elf = compile_image(ctx, target=target)
    except BuildError as exc:
        log(str(exc))
        return 1
    log(f"booting {elf.name} in {target.qemu} -M {target.machine}")
    try:
        with exit_on_hangup(), boot(elf, workdir=elf.parent / "run") as dev:
            log(f"MCP UART at {dev.url}; debug console in {dev.log_path}")
            failures = asyncio.run(_session(dev, spec, log))
            hwm, size = dev.stack_high_water(), dev.stack_size()
    except QemuError as exc:
        log(f"error: {exc}")
        return 1
    log(f"memory: {memory_report(elf).summary()}")
    log(f"stack high-water mark: {hwm} of {size} bytes")
    if failures:
        log(f"{failures} tool call(s) failed")
        return 1
    return 0


def main() -> int:  # python -m mcpgen.codegen.run.run_qemu [--pty] ELF: boot, print the UART until Ctrl-C
    args = sys.argv[1:]
    uart = "pty" if args[:1] == ["--pty"] else "socket"
    args = args[1:] if uart == "pty" else args
    if len(args) != 1:
        print("usage: python -m mcpgen.codegen.run.run_qemu [--pty] FIRMWARE.elf", file=sys.stderr)
        return 2
    with exit_on_hangup(), boot(Path(args[0]), uart=uart) as dev:
        print(f"MCP UART: {dev.url}  (console: {dev.log_path}); Ctrl-C stops", flush=True)
        try:
            dev.process.wait()
        except KeyboardInterrupt:
            pass
    return 0


__all__ = [
    "QemuDevice",
    "QemuError",
    "boot",
    "exit_on_hangup",
    "qemu_available",
    "run_qemu_session",
    "start",
    "stop_qemu",
]


if __name__ == "__main__":
    raise SystemExit(main())
