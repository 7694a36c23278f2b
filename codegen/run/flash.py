"""Uploads a built ESP32 firmware: ``pio run -t upload`` or esptool ``write-flash``.

``flash(ctx, board, port)`` runs ``pio run -e BOARD -t upload --upload-port PORT``
in the generated PlatformIO project (PlatformIO builds first when needed).
``use_esptool=True`` writes the images PlatformIO built (bootloader, partition table,
app) with ``python -m esptool --chip CHIP --port PORT write-flash OFFSET FILE ...``:

=========  ==========  =========  =======
chip       bootloader  partitions  app
=========  ==========  =========  =======
esp32      0x1000      0x8000     0x10000
esp32s3    0x0         0x8000     0x10000
esp32c3    0x0         0x8000     0x10000
=========  ==========  =========  =======

``PORT`` is anything pyserial opens: ``/dev/ttyUSB0``, ``COM3``, ``socket://host:port``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Optional

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.targets.base import BuildContext
from mcpgen.codegen.targets.esp32 import (
    board_info,
    images_for,
    pio_run,
    project_dir,
    run_streaming,
    write_project,
)

DEFAULT_BAUD = 460800
# esptool's own progress goes line by line; nothing is a "download phase" here.
_NEVER = re.compile(r"(?!x)x")


def esptool_major() -> int:
    try:
        return int(metadata.version("esptool").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return 0


def esptool_write_command(
    chip: str,
    port: str,
    images: Sequence[tuple[Path, int]],
    *,
    baud: int = DEFAULT_BAUD,
    extra: Sequence[str] = (),
) -> list[str]:
    """The esptool command line writing ``images`` ((file, offset) pairs) in one session."""
    major = esptool_major()
    if major == 0:
        raise BuildError("esptool is not installed: pip install 'mcpgen[esp32]' (or: pip install esptool)")
    write = "write-flash" if major >= 5 else "write_flash"
    cmd = [sys.executable, "-m", "esptool", "--chip", chip, "--port", port, "--baud", str(baud), *extra]
    cmd.append(write)
    for path, offset in sorted(images, key=lambda item: item[1]):
        cmd += [f"{offset:#x}", str(path)]
    return cmd


def write_images(
    chip: str,
    port: str,
    images: Sequence[tuple[Path, int]],
    *,
    baud: int = DEFAULT_BAUD,
    extra: Sequence[str] = (),
    log: Log = print,
) -> int:
    """Writes ``images`` with the real esptool, showing its progress; returns its exit code."""
    for path, _offset in images:
        if not Path(path).is_file():
            raise BuildError(f"image {path} not found")
    cmd = esptool_write_command(chip, port, images, baud=baud, extra=extra)
    for path, offset in sorted(images, key=lambda item: item[1]):
        log(f"  {offset:#08x}  {path} ({Path(path).stat().st_size} bytes)")
    log("$ " + " ".join(cmd))
    return run_streaming(cmd, log=log, download_timeout=None, started_re=_NEVER, tool="esptool").returncode


def flash(
    ctx: BuildContext,
    board: str,
    port: str,
    *,
    use_esptool: bool = False,
    baud: int = DEFAULT_BAUD,
    error: Optional[Log] = None,
) -> int:
    """``codegen flash``: uploads the firmware of ``ctx.spec`` for ``board`` to ``port``. Exit code.

    ``ctx.log`` gets the progress; ``error`` (default: ``ctx.log``) the reasons for a failure,
    so they show even when the progress is silenced (``codegen flash -q``)."""
    spec_path, outdir, log = ctx.spec_path, ctx.outdir, ctx.log
    error = error or log
    info = board_info(board)
    project = project_dir(outdir)
    try:
        if use_esptool:
            images = images_for(project, info)
            missing = [str(p) for p, _ in images if not p.is_file()]
            if missing:
                error(
                    f"no built {board} images in {Path(missing[0]).parent} "
                    f"(missing {', '.join(Path(m).name for m in missing)}); "
                    f"build first: codegen build {spec_path} --target {board} -o {outdir}"
                )
                return 1
            log(f"writing {board} images to {port} with esptool")
            rc = write_images(info.chip, port, images, baud=baud, log=log)
        else:
            project = write_project(ctx)
            rc = pio_run(project, info.env, ["-t", "upload", "--upload-port", port], log=log)
    except BuildError as exc:
        error(str(exc))
        return 1
    if rc == 0:
        log("flashed")
    else:
        error(f"flashing failed (exit {rc})")
    return rc
