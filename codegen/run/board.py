"""``codegen run SPEC --target esp32|esp32s3|esp32c3``: build, flash, then watch a real board.

One command for what is otherwise ``codegen build``, ``codegen flash`` and ``codegen monitor``
(as ``esphome run`` or ``idf.py flash monitor`` do):

1. the port is resolved first (``--port auto`` finds the board on USB, see ``ports``), so a
   missing board is said before minutes of compiling, not after;
2. PlatformIO builds the project (``targets.esp32.build_board``);
3. esptool writes the images PlatformIO built (``flash.write_images``): the same write as
   ``codegen flash --esptool``, in one esptool session;
4. esp-idf-monitor shows the board's log and decodes panics with the firmware's ELF.

``--interactive`` (the console) needs the firmware to speak MCP on the serial port: the
serial transport (``MCPGEN_TRANSPORT=serial``). Step 4 is then the console on the same
port instead of the monitor. With another transport it is refused before anything is built,
with the way that works, rather than left to time out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from mcpgen.codegen.emit import esp32_transport
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.run import flash as flash_mod
from mcpgen.codegen.run import monitor as monitor_mod
from mcpgen.codegen.run.console import ReadLine, run_serial_console
from mcpgen.codegen.run.ports import PortError, resolve_port
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.targets import esp32
from mcpgen.codegen.targets.base import BuildContext

NO_SERIAL_CONSOLE = (
    "the interactive console talks MCP over the serial port, and this build's transport is {transport}\n"
    "  fix: build the serial transport: MCPGEN_TRANSPORT=serial codegen run SPEC --target {board} -i "
    "(docs/firmware.md, 'Serial transport'); or leave out -i to flash and watch the log, then reach "
    "the board's tools through `codegen bridge` on its network"
)


def firmware_elf(outdir: Path, board: str) -> Path:
    """Where PlatformIO puts the ELF of ``board`` (what the monitor decodes panics with)."""
    return esp32.project_dir(outdir) / ".pio" / "build" / esp32.board_info(board).env / "firmware.elf"


def serial_baud(spec: Spec) -> int:
    """The speed of the serial transport's UART (``MCPGEN_SERIAL_BAUD``, default 115200)."""
    value = (esp32.settings_environ(spec).get("MCPGEN_SERIAL_BAUD") or "").strip()
    return int(value) if value.isdigit() else 115200


def run_board(
    ctx: BuildContext,
    board: str,
    *,
    port: Optional[str],
    interactive: bool = False,
    error: Optional[Log] = None,
    baud: int = 115200,
    reader: Optional[ReadLine] = None,
    timeout: float = 10.0,
) -> int:
    """Builds, flashes and monitors ``board`` on ``port`` (``auto``: detected). An exit code.

    With ``interactive`` the console (lines from ``reader``, default the terminal) replaces
    the monitor. ``ctx.log`` gets the progress, ``error`` (default ``ctx.log``) the reason of
    a failure."""
    log, outdir, spec = ctx.log, ctx.outdir, ctx.spec
    error = error or log
    if interactive:
        transport = esp32_transport.transport_of(esp32.settings_environ(spec))
        if transport != "serial":
            error(NO_SERIAL_CONSOLE.format(transport=transport, board=board))
            return 1
    try:
        device = resolve_port(port, out=log)
    except PortError as exc:
        error(str(exc))
        return 1
    info = esp32.board_info(board)
    if esp32.build_board(ctx, board) != 0:
        raise BuildError(f"the {board} build failed (PlatformIO's output is above); nothing was flashed")
    images = esp32.images_for(esp32.project_dir(outdir), info)
    log(f"writing {board} images to {device} with esptool")
    rc = flash_mod.write_images(info.chip, device, images, log=log)
    if rc != 0:
        error(f"flashing {device} failed (esptool exit {rc}); is another program (a monitor?) using it?")
        return rc
    if interactive:
        log(f"flashed; opening the console on {device} (MCP over the serial transport)")
        return run_serial_console(
            device, spec, baudrate=serial_baud(spec), out=log, timeout=timeout, reader=reader
        )
    log("flashed; starting the monitor")
    elf: Optional[Path] = firmware_elf(outdir, board)
    if elf is not None and not elf.is_file():
        elf = None
    try:
        return monitor_mod.monitor(device, baud=baud, board=board, elf=elf, log=log)
    except monitor_mod.MonitorError as exc:
        error(str(exc))
        return 1
