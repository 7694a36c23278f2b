"""``codegen run``: build and start a device here, connect the runtime, then call every tool
once or (``--interactive``) keep it running behind a small console.

Devices: ``host`` is the simulator speaking MCP on its stdin/stdout (its log lines are
shown as ``[device] ...``, as progress: not with ``-q``); ``qemu`` is the Cortex-M3 image
in QEMU, MCP on UART0 (its debug console, UART1, is shown by the console's ``log`` command).

Console commands (``help`` lists them)::

    tools                      the device's tools with their parameters
    schema NAME                a tool's input schema
    call NAME {"a": 1}         call with a JSON object ...
    call NAME a=1 b=text       ... or key=value pairs (values are JSON when they parse)
    NAME a=1                   the same, without `call`
    ping | log | help | quit   (Ctrl-D quits too)

Tab completes commands, tool names and a tool's parameters (``run.completer``); an
unknown tool or command is answered with the closest name ("did you mean").

Notifications the device sends are printed as they arrive (``<- method {params}``). With
a terminal, lines are edited with readline; history is kept in ``~/.mcpgen_history``
(``MCPGEN_HISTORY`` overrides the file).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Optional, Protocol

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.run import run_qemu
from mcpgen.codegen.run.completer import COMMANDS, DELIMITERS, ConsoleCompleter, suggestion
from mcpgen.codegen.spec.examples import example_call
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.targets.base import BuildContext
from mcpgen.codegen.targets.host import compile_simulator
from mcpgen.codegen.targets.qemu import compile_image
from mcpgen.codegen.targets.qemu_machines import MACHINES as QEMU_MACHINES
from mcpgen.codegen.targets.qemu_machines import get_machine

ReadLine = Callable[[], Awaitable[Optional[str]]]


class Runner(Protocol):
    """Builds one target, boots it and talks to it; returns an exit code. ``ctx.log`` gets
    the build and boot progress, ``out`` the tool calls and the console; ``reader`` reads
    the console's lines when ``interactive``."""

    def __call__(
        self, ctx: BuildContext, *, interactive: bool, out: Log, timeout: float, reader: Optional[ReadLine]
    ) -> int: ...


HISTORY_ENV = "MCPGEN_HISTORY"
HISTORY_LENGTH = 1000
PROMPT = "mcp> "

HELP = """\
commands:
  tools                   list the device's tools
  schema NAME             show a tool's input schema
  call NAME {"k": 1}      call a tool with a JSON object of arguments
  call NAME k=1 s=text    ... or key=value pairs (a value is JSON if it parses, else text)
  NAME k=1                the same without `call`
  ping                    check the device answers
  log                     the device's debug log (qemu: UART1)
  help                    this text
  quit                    stop the device and leave (Ctrl-D too)"""


def history_file() -> Path:
    return Path(os.environ.get(HISTORY_ENV) or Path.home() / ".mcpgen_history")


def parse_arguments(text: str) -> dict[str, Any]:
    """``{"a": 1}`` or ``a=1 b="two words" c=[1,2]`` -> a dict; raises ValueError with the reason."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value
    args: dict[str, Any] = {}
    for token in shlex.split(text):
        key, sep, raw = token.partition("=")
        if not sep or not key:
            raise ValueError(f"expected key=value, got {token!r}")
        try:
            args[key] = json.loads(raw)
        except json.JSONDecodeError:
            args[key] = raw
    return args


_show = run_qemu.show_value  # one way to print a value, for every target


class Console:
    """The interactive console over a connected runtime ``Device``."""

    def __init__(
        self,
        device: Any,
        out: Log = print,
        *,
        timeout: float = 10.0,
        device_log: Optional[Callable[[], str]] = None,
    ) -> None:
        self.device = device
        self.out = out
        self.timeout = timeout
        self.device_log = device_log

    def tools_text(self) -> str:
        lines = []
        for t in self.device.tools:
            props = t.input_schema.get("properties", {})
            required = set(t.input_schema.get("required", []))
            params = ", ".join(
                f"{k}{'' if k in required else '?'}: {v.get('type', '?')}" for k, v in props.items()
            )
            flag = "  [user only]" if t.user_only else ""
            summary = next(iter((t.description or "").strip().splitlines()), "")
            lines.append(f"  {t.name}({params}){flag}  {summary}")
        return f"{len(lines)} tools:\n" + "\n".join(lines)

    async def call(self, name: str, rest: str) -> None:
        from mcpgen.runtime import (
            DeviceDisconnected,
            DeviceTimeout,
            McpDeviceError,
            ToolError,
            ValidationError,
        )

        try:
            args = parse_arguments(rest)
        except ValueError as exc:
            self.out(f"error: {exc}")
            return
        progress: dict[str, Any] = {}
        try:
            if self.device.tool(name).reports_progress:
                # the device then sends notifications/progress, printed like every notification
                progress["progress_token"] = f"console-{name}"
        except KeyError:
            pass  # no such tool: the call below says so
        try:
            result = await self.device.call(name, args, timeout=self.timeout, **progress)
        except ValidationError as exc:
            self.out(f"invalid arguments: {exc}")
        except ToolError as exc:
            self.out(f"tool error: {exc}")
        except DeviceTimeout:
            self.out(f"no answer within {self.timeout:g} s (codegen run --timeout SECONDS)")
        except DeviceDisconnected:
            raise  # ends the console
        except McpDeviceError as exc:  # RpcError, ProtocolError: the session goes on
            self.out(f"{type(exc).__name__}: {exc}")
        else:
            self.out(f"-> {_show(result)}")

    async def handle(self, line: str) -> bool:
        """Runs one command line; False when the console should end."""
        line = line.strip()
        if not line or line.startswith("#"):
            return True
        word, _, rest = line.partition(" ")
        names = {t.name for t in self.device.tools}
        if word in ("quit", "exit", "q"):
            return False
        if word in ("help", "?"):
            self.out(HELP)
        elif word in ("tools", "list", "ls"):
            self.out(self.tools_text())
        elif word == "schema":
            name = rest.strip()
            if name not in names:
                self.out(f"no tool {name!r}{suggestion(name, names)} (`tools` lists them)")
            else:
                self.out(json.dumps(self.device.tool(name).input_schema, indent=2))
        elif word == "ping":
            await self.device.ping(timeout=self.timeout)
            self.out("pong")
        elif word == "log":
            self.out(self.device_log() if self.device_log else "(this device has no separate log)")
        elif word == "call":
            name, _, args = rest.strip().partition(" ")
            if name not in names:
                self.out(f"no tool {name!r}{suggestion(name, names)} (`tools` lists them)")
            else:
                await self.call(name, args)
        elif word in names:
            await self.call(word, rest)
        else:
            self.out(
                f"unknown command {word!r}{suggestion(word, [*COMMANDS, *names])} (`help` lists the commands)"
            )
        return True

    async def run(self, read_line: ReadLine) -> int:
        """Reads and runs commands until ``quit``, end of input or the device going away.

        Ctrl-C (SIGINT) cancels the command that is running (a tool call is cancelled on
        the device too: the runtime sends ``notifications/cancelled``) and otherwise only
        reminds how to leave; it never ends the console half-way through a call.
        """
        from mcpgen.runtime import DeviceDisconnected

        loop = asyncio.get_running_loop()
        unsubscribe = self.device.on_notification(
            lambda method, params: self.out(f"<- {method} {_show(params)}")
        )
        current: Optional[asyncio.Task[bool]] = None

        def interrupted() -> None:
            if current is not None and not current.done():
                current.cancel()
            else:
                self.out("(Ctrl-C: `quit` or Ctrl-D leaves)")

        handles_sigint = _add_sigint_handler(loop, interrupted)
        closed: asyncio.Future[Any] = loop.create_future()
        try:
            info = self.device.server_info
            name = f"{info.get('name', '?')} {info.get('version', '')}".strip()
            self.out(
                f"connected to {name}: {len(self.device.tools)} tools; "
                "`help` lists the commands, `quit` or Ctrl-D leaves"
            )
            use_completer = getattr(read_line, "use_completer", None)
            if use_completer is not None:  # Tab completes commands, tool names, parameters
                use_completer(ConsoleCompleter.for_tools(self.device.tools))
            closed = asyncio.ensure_future(self.device.wait_closed())
            while True:
                reading = asyncio.ensure_future(read_line())
                await asyncio.wait({reading, closed}, return_when=asyncio.FIRST_COMPLETED)
                if not reading.done():
                    reading.cancel()
                    self.out(f"the device disconnected: {self.device.close_reason}")
                    return 1
                line = reading.result()
                if line is None:
                    return 0
                current = asyncio.ensure_future(self.handle(line))
                try:
                    if not await current:
                        return 0
                except asyncio.CancelledError:
                    if not current.cancelled():
                        raise  # the console itself is being cancelled
                    self.out("cancelled")
                except DeviceDisconnected as exc:
                    self.out(f"the device disconnected: {exc}")
                    return 1
                finally:
                    current = None
                if self.device.closed:
                    self.out(f"the device disconnected: {self.device.close_reason}")
                    return 1
        finally:
            closed.cancel()
            unsubscribe()
            if handles_sigint:
                loop.remove_signal_handler(signal.SIGINT)


def _add_sigint_handler(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> bool:
    """Routes SIGINT to ``callback`` on ``loop``; False where that is not possible (Windows,
    or not the main thread)."""
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    return True


class _SigintBlocked:
    """Blocks SIGINT in this thread while the device processes start: a blocked mask is
    inherited across fork and exec, so the simulator and QEMU (which installs its own
    SIGINT handler) never see the console's Ctrl-C, which shares their process group.
    The console unblocks it for itself once its handler is in place."""

    def __enter__(self) -> None:
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None and hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _settle(fut: asyncio.Future[Any], value: Any, error: Optional[BaseException]) -> None:
    """Resolves ``fut`` from the input thread's result unless it was cancelled meanwhile."""
    if fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(value)


class LineReader:
    """Reads console lines in a worker thread (so notifications print meanwhile), with
    readline editing on a terminal and a persistent history either way.

    ``close()`` saves the history.
    """

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stdin
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        try:
            import readline
        except ImportError:  # Windows without pyreadline: plain input
            self.readline: Any = None
        else:
            self.readline = readline
            readline.set_history_length(HISTORY_LENGTH)
            try:
                readline.read_history_file(history_file())
            except OSError:
                pass

    def use_completer(self, completer: ConsoleCompleter) -> None:
        """Tab completes with ``completer`` (on a terminal with readline)."""
        if self.readline is None or not self.tty:
            return
        self.readline.set_completer_delims(DELIMITERS)
        self.readline.set_completer(completer.complete)
        if "libedit" in (getattr(self.readline, "__doc__", "") or ""):  # macOS's readline
            self.readline.parse_and_bind("bind ^I rl_complete")
        else:
            self.readline.parse_and_bind("tab: complete")

    def close(self) -> None:
        """Writes the history file."""
        self.save()

    def _read(self) -> Optional[str]:
        if self.tty:
            try:
                line = input(PROMPT)
            except EOFError:
                return None
        else:
            raw = self.stream.readline()
            if not raw:
                return None
            line = raw.rstrip("\r\n")
            if self.readline is not None and line.strip():
                self.readline.add_history(line)  # input() does this itself on a terminal
        return line

    async def __call__(self) -> Optional[str]:
        # A daemon thread, not the loop's executor: a read still blocked when the device
        # goes away must not keep asyncio.run (or the process) from ending.
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Optional[str]] = loop.create_future()

        def work() -> None:
            if hasattr(signal, "pthread_sigmask"):  # Ctrl-C is for the main thread (see Console)
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                line = self._read()
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                loop.call_soon_threadsafe(_settle, fut, None, exc)
            else:
                loop.call_soon_threadsafe(_settle, fut, line, None)

        threading.Thread(target=work, name="mcpgen-console-input", daemon=True).start()
        return await fut

    def save(self) -> None:
        if self.readline is None:
            return
        try:
            path = history_file()
            path.parent.mkdir(parents=True, exist_ok=True)
            self.readline.write_history_file(path)
        except OSError:
            pass  # a read-only home must not break the session


class _DeviceLogHandler(logging.Handler):
    """Shows the simulator's stderr lines (logged by the runtime) as ``[device] ...``."""

    def __init__(self, out: Log) -> None:
        super().__init__(logging.INFO)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        self.out("[device] " + text.split("] ", 1)[-1] if text.startswith("[pid ") else "[device] " + text)


async def call_every_tool(device: Any, spec: Any, log: Log, timeout: float) -> int:
    """Lists the tools and calls each assistant-callable one with example arguments."""
    console = Console(device, log, timeout=timeout)
    log(f"connected: {device.server_info} fingerprint {device.fingerprint} (spec {spec.fingerprint})")
    log(console.tools_text())
    failures = 0
    for tool in spec.tools:
        if tool.user_only:
            continue
        args, human = example_call(tool, spec.types)
        try:
            result = await device.call(tool.name, args, timeout=timeout, human=human or None)
        except Exception as exc:  # report every tool, then fail
            failures += 1
            log(f"  call {tool.name}({_show({**args, **human})}) FAILED: {type(exc).__name__}: {exc}")
        else:
            log(f"  call {tool.name}({_show({**args, **human})}) -> {_show(result)}")
    if failures:
        log(f"{failures} tool call(s) failed")
    return 1 if failures else 0


async def _host_session(
    exe: Path, spec: Any, *, interactive: bool, log: Log, out: Log, timeout: float, reader: Optional[ReadLine]
) -> int:
    from mcpgen.runtime import connect_process

    stderr_logger = logging.getLogger("mcpgen.runtime.process.stderr")
    handler = _DeviceLogHandler(log)  # progress, not a result: `codegen -q` leaves them out
    stderr_logger.addHandler(handler)
    old_level, old_propagate = stderr_logger.level, stderr_logger.propagate
    stderr_logger.setLevel(logging.INFO)
    stderr_logger.propagate = False
    try:
        with _SigintBlocked() if interactive else contextlib.nullcontext():
            device = await connect_process(
                [str(exe), "--stdio"], fingerprint=spec.fingerprint, call_timeout=timeout, stderr="log"
            )
        try:
            if not interactive:
                return await call_every_tool(device, spec, out, timeout)
            assert reader is not None
            return await Console(device, out, timeout=timeout).run(reader)
        finally:
            await device.close()
    finally:
        stderr_logger.removeHandler(handler)
        stderr_logger.setLevel(old_level)
        stderr_logger.propagate = old_propagate


async def _serial_console(
    url: str,
    spec: Any,
    *,
    out: Log,
    timeout: float,
    reader: ReadLine,
    device_log: Optional[Callable[[], str]],
    baudrate: int = 115200,
) -> int:
    from mcpgen.runtime import connect_serial

    device = await connect_serial(url, baudrate=baudrate, fingerprint=spec.fingerprint, call_timeout=timeout)
    try:
        return await Console(device, out, timeout=timeout, device_log=device_log).run(reader)
    finally:
        await device.close()


def run_host(
    ctx: BuildContext, *, interactive: bool, out: Log, timeout: float, reader: Optional[ReadLine]
) -> int:
    """``codegen run --target host``: the simulator on stdio."""
    exe = compile_simulator(ctx)
    return asyncio.run(
        _host_session(
            exe, ctx.spec, interactive=interactive, log=ctx.log, out=out, timeout=timeout, reader=reader
        )
    )


def run_qemu_machine(
    ctx: BuildContext,
    machine: str,
    *,
    interactive: bool,
    out: Log,
    timeout: float,
    reader: Optional[ReadLine],
) -> int:
    """``codegen run --target qemu|qemu-riscv32``: the image in QEMU, its MCP UART as a serial device."""
    if not interactive:
        return run_qemu.qemu_session(ctx.with_log(out), target=machine)
    log = ctx.log
    elf = compile_image(ctx, target=machine)
    qemu = get_machine(machine)
    log(f"booting {elf.name} in {qemu.qemu} -M {qemu.machine}")
    try:
        with (
            run_qemu.exit_on_hangup(),
            _SigintBlocked(),
            run_qemu.boot(elf, workdir=elf.parent / "run") as dev,
        ):
            assert reader is not None
            return asyncio.run(
                _serial_console(
                    dev.url, ctx.spec, out=out, timeout=timeout, reader=reader, device_log=dev.log_text
                )
            )
    except run_qemu.QemuError as exc:
        out(f"error: {exc}")
        return 1


def run_serial_console(
    url: str, spec: Spec, *, baudrate: int, out: Log, timeout: float, reader: Optional[ReadLine] = None
) -> int:
    """The console on a board that speaks MCP on its serial port (the ESP-IDF serial
    transport): ``codegen run SPEC --target esp32* -i`` after flashing. The board's log
    lines share the port; the runtime skips them (they are not JSON)."""
    line_reader = None
    if reader is None:
        line_reader = LineReader()
        reader = line_reader
    try:
        with _SigintBlocked():
            return asyncio.run(
                _serial_console(
                    url, spec, out=out, timeout=timeout, reader=reader, device_log=None, baudrate=baudrate
                )
            )
    finally:
        if line_reader is not None:
            line_reader.close()


def _qemu_runner(machine: str) -> Runner:
    def run(
        ctx: BuildContext, *, interactive: bool, out: Log, timeout: float, reader: Optional[ReadLine]
    ) -> int:
        return run_qemu_machine(
            ctx, machine, interactive=interactive, out=out, timeout=timeout, reader=reader
        )

    return run


#: What ``codegen run`` boots, by target name: builds it (through ``targets/``), starts it
#: and talks to it. Booting lives here, never in ``targets/`` (the generator runs one way).
RUNNERS: dict[str, Runner] = {"host": run_host, **{name: _qemu_runner(name) for name in QEMU_MACHINES}}


def runnable_targets() -> tuple[str, ...]:
    """The ``--target`` names ``codegen run`` accepts."""
    return tuple(RUNNERS)


def run_device(
    ctx: BuildContext,
    target: str,
    *,
    interactive: bool = False,
    out: Log = print,
    timeout: float = 10.0,
    reader: Optional[ReadLine] = None,
) -> int:
    """``codegen run``: builds ``target``, starts it, then calls every tool or opens the console.

    ``ctx.log`` gets the build and boot progress and the simulator's own log lines
    (``[device] ...``), ``out`` the tool calls and the console. Returns an exit code. Build
    failures raise ``BuildError`` (the CLI prints them).
    """
    runner = RUNNERS.get(target)
    if runner is None:
        raise BuildError(
            f"codegen run cannot start target {target!r}\n  fix: use one of {', '.join(runnable_targets())}"
        )
    line_reader = None
    if interactive and reader is None:
        line_reader = LineReader()
        reader = line_reader
    try:
        return runner(ctx, interactive=interactive, out=out, timeout=timeout, reader=reader)
    finally:
        if line_reader is not None:
            line_reader.close()
