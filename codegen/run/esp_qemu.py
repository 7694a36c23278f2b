"""``codegen run SPEC --target esp32c3 --qemu`` (and ``--target esp32 --qemu``): the spec's
ESP-IDF project, built by the user's ESP-IDF, booted in Espressif's QEMU.

1. ESP-IDF is found as its users expect: ``IDF_PATH`` set and ``idf.py`` on ``PATH`` (what
   ``. $IDF_PATH/export.sh`` does). Espressif's QEMU is ``qemu-system-riscv32`` (ESP32-C3)
   or ``qemu-system-xtensa`` (ESP32) on ``PATH`` with the chip's machine (``-M esp32c3``);
   ``python $IDF_PATH/tools/idf_tools.py install qemu-riscv32`` (``qemu-xtensa``) installs it.
   Debian's ``qemu-system-riscv32`` has no ``esp32c3`` machine: that is said, not tried.
2. The ESP-IDF project is generated with the serial transport on UART0 (MCP over the UART
   QEMU puts on a host pty; no Wi-Fi) into ``build/<spec>/<board>-qemu``, then
   ``idf.py -C PROJECT -B BUILD set-target CHIP`` (first time only) and ``idf.py ... build``.
3. The flash image is merged with esptool, as ``idf.py qemu`` does: ``python -m esptool
   --chip CHIP merge_bin -o BUILD/qemu_flash.bin --fill-flash-size SIZE @flash_args`` in the
   build directory (ESP-IDF's Python, ``$IDF_PYTHON_ENV_PATH/bin/python``, else this one).
4. QEMU boots it (``-M CHIP -drive file=...,if=mtd,format=raw``, an eFuse image of chip
   revision v0.3 / v3.0 so ESP-IDF's minimum-revision check passes, the watchdog off as
   ``idf.py qemu`` has it, ``-serial pty``); the runtime connects to the pty with
   ``connect_serial`` (re-sending ``initialize`` while the chip boots) and lists and calls
   every tool, or opens the console (``-i``), as ``--target qemu`` does.

While it runs, the pty is printed: ``codegen bridge --serial PTY`` or ``codegen selftest
--port PTY`` reach the emulated board as they would a board on USB.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Optional

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.run.console import ReadLine
from mcpgen.codegen.run.run_qemu import stop_qemu
from mcpgen.codegen.targets.base import BuildContext
from mcpgen.codegen.targets.esp32 import project_dir, run_streaming, write_project


@dataclass(frozen=True)
class EspQemu:
    """How Espressif's QEMU runs one chip."""

    chip: str  # ESP-IDF target and esptool --chip
    qemu: str  # the emulator program
    machine: str  # -M
    idf_tools_package: str  # python $IDF_PATH/tools/idf_tools.py install <this>
    efuse_size: int  # bytes of the eFuse image
    efuse_bits: dict[int, int] = field(default_factory=dict)  # byte offset -> value (chip revision)
    extra: tuple[str, ...] = ()

    def install_line(self) -> str:
        return (
            f"python $IDF_PATH/tools/idf_tools.py install {self.idf_tools_package}, "
            "then . $IDF_PATH/export.sh"
        )


# The eFuse images hold the chip revision ESP-IDF's bootloader checks against its minimum
# (CONFIG_ESP32C3_REV_MIN: v0.3; ESP32: v3.0): the same revisions `idf.py qemu` gives
# its default images; every other bit is 0.
CHIPS: dict[str, EspQemu] = {
    "esp32c3": EspQemu("esp32c3", "qemu-system-riscv32", "esp32c3", "qemu-riscv32", 1024, {38: 0x0C}),
    "esp32": EspQemu(
        "esp32", "qemu-system-xtensa", "esp32", "qemu-xtensa", 124, {13: 0x80, 22: 0x10}, ("-m", "4M")
    ),
}

IDF_MISSING = (
    "ESP-IDF not found ({why}): install ESP-IDF 5.1 or newer "
    "(https://docs.espressif.com/projects/esp-idf/en/stable/esp32c3/get-started/) and run "
    ". $IDF_PATH/export.sh in this shell, so IDF_PATH and idf.py are set"
)
FLASH_IMAGE = "qemu_flash.bin"
EFUSE_IMAGE = "qemu_efuse.bin"
_PTY_RE = re.compile(r"char device redirected to (\S+) \(label (\w+)\)")
_FLASH_SIZE_RE = re.compile(r'^CONFIG_ESPTOOLPY_FLASHSIZE="(\w+)"', re.MULTILINE)


class EspQemuError(RuntimeError):
    """ESP-IDF or QEMU is missing, the build failed, or QEMU did not start."""


def chip_of(board: str) -> EspQemu:
    try:
        return CHIPS[board]
    except KeyError:
        raise EspQemuError(
            f"--qemu runs {' and '.join(sorted(CHIPS))} boards (Espressif's QEMU has no "
            f"{board}); e.g. --target esp32c3 --qemu"
        ) from None


def find_idf(environ: Optional[dict[str, str]] = None) -> tuple[str, Path]:
    """``idf.py`` on PATH and ``IDF_PATH``; EspQemuError naming what to install otherwise."""
    env = os.environ if environ is None else environ
    idf_path = env.get("IDF_PATH")
    if not idf_path:
        raise EspQemuError(IDF_MISSING.format(why="IDF_PATH is not set"))
    if not Path(idf_path).is_dir():
        raise EspQemuError(IDF_MISSING.format(why=f"IDF_PATH={idf_path} is not a directory"))
    idf_py = shutil.which("idf.py", path=env.get("PATH"))
    if idf_py is None:
        raise EspQemuError(IDF_MISSING.format(why="idf.py is not on PATH"))
    return idf_py, Path(idf_path)


def find_qemu(chip: EspQemu, environ: Optional[dict[str, str]] = None) -> str:
    """Espressif's QEMU for ``chip`` on PATH (one that has its machine)."""
    env = os.environ if environ is None else environ
    exe = shutil.which(chip.qemu, path=env.get("PATH"))
    if exe is None:
        raise EspQemuError(
            f"{chip.qemu} (Espressif's QEMU, with -M {chip.machine}) not found on PATH: {chip.install_line()}"
        )
    try:
        machines = subprocess.run(
            [exe, "-machine", "help"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EspQemuError(f"{exe} -machine help failed: {exc}") from exc
    if not re.search(rf"^{re.escape(chip.machine)}\s", machines, re.MULTILINE):
        raise EspQemuError(
            f"{exe} has no {chip.machine} machine (it is not Espressif's QEMU): "
            f"{chip.install_line()} (it goes first on PATH)"
        )
    return exe


def idf_python(environ: Optional[dict[str, str]] = None) -> str:
    """The Python of the user's ESP-IDF (export.sh sets IDF_PYTHON_ENV_PATH), else this one."""
    env = os.environ if environ is None else environ
    venv = env.get("IDF_PYTHON_ENV_PATH")
    if venv:
        for rel in ("bin/python", "Scripts/python.exe"):
            if (Path(venv) / rel).is_file():
                return str(Path(venv) / rel)
    return sys.executable


# The application component: the generated project's src/ (its CMakeLists.txt adds it).
APP_COMPONENT = "src"


def build_dir(project: Path) -> Path:
    return project / "build-qemu"


def _configured_target(build: Path) -> Optional[str]:
    import json

    try:
        desc = json.loads((build / "project_description.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    target = desc.get("target") if isinstance(desc, dict) else None
    return target if isinstance(target, str) else None


def idf_commands(idf_py: str, project: Path, chip: EspQemu) -> list[list[str]]:
    """The idf.py command lines that build ``project`` for ``chip`` (set-target only the
    first time: it rewrites sdkconfig from sdkconfig.defaults and cleans the build)."""
    build = build_dir(project)
    # COMPONENTS=src: only the app component's closure is built and linked. Without it idf.py
    # builds and links every component of ESP-IDF, Wi-Fi and Bluetooth (and their binary blobs)
    # included, which a serial-transport image does not use.
    base = [idf_py, "-C", str(project), "-B", str(build), f"-DCOMPONENTS={APP_COMPONENT}"]
    cmds = []
    if _configured_target(build) != chip.chip:
        cmds.append([*base, "set-target", chip.chip])
    cmds.append([*base, "build"])
    return cmds


def flash_size(project: Path, build: Path) -> str:
    for path in (build / "config" / "sdkconfig.h", project / "sdkconfig"):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        found = _FLASH_SIZE_RE.search(text) or re.search(r'CONFIG_ESPTOOLPY_FLASHSIZE "(\w+)"', text)
        if found:
            return found.group(1)
    return "4MB"


def merge_command(chip: EspQemu, project: Path, environ: Optional[dict[str, str]] = None) -> list[str]:
    """esptool's merge of the build's images (``flash_args``) into one full flash image."""
    from mcpgen.codegen.run.flash import esptool_major

    build = build_dir(project)
    # esptool 5 spells its commands with dashes; 4 with underscores (5 still takes those).
    merge = "merge-bin" if esptool_major() >= 5 else "merge_bin"
    return [
        idf_python(environ),
        "-m",
        "esptool",
        "--chip",
        chip.chip,
        merge,
        "-o",
        str(build / FLASH_IMAGE),
        "--fill-flash-size",
        flash_size(project, build),
        "@flash_args",
    ]


def efuse_image(chip: EspQemu, path: Path) -> Path:
    if not path.is_file():
        data = bytearray(chip.efuse_size)
        for offset, value in chip.efuse_bits.items():
            data[offset] = value
        path.write_bytes(bytes(data))
    return path


def qemu_command(exe: str, chip: EspQemu, flash: Path, efuse: Path) -> list[str]:
    return [
        exe,
        "-M",
        chip.machine,
        *chip.extra,
        "-drive",
        f"file={flash},if=mtd,format=raw",
        "-drive",
        f"file={efuse},if=none,format=raw,id=efuse",
        "-global",
        f"driver=nvram.{chip.chip}.efuse,property=drive,value=efuse",
        "-global",
        f"driver=timer.{chip.chip}.timg,property=wdt_disable,value=true",
        "-nic",
        "none",
        "-display",
        "none",
        "-monitor",
        "none",
        "-serial",
        "pty",
    ]


def build_image(ctx: BuildContext, board: str, *, environ: Optional[dict[str, str]] = None) -> Path:
    """Generates the serial-transport ESP-IDF project, builds it with idf.py and merges the
    flash image; returns the image. EspQemuError when a step fails."""
    chip = chip_of(board)
    env = dict(os.environ if environ is None else environ)
    idf_py, _ = find_idf(env)
    # MCP on UART0: the UART QEMU puts on the pty (the USB-Serial-JTAG is not emulated).
    project = write_project(ctx, environ={**env, "MCPGEN_TRANSPORT": "serial", "MCPGEN_SERIAL_PORT": "uart0"})
    for cmd in idf_commands(idf_py, project, chip):
        ctx.log("$ " + " ".join(cmd))
        res = run_streaming(cmd, log=ctx.log, tool="idf.py")
        if res.returncode != 0:
            raise EspQemuError(
                f"idf.py {' '.join(cmd[6:])} failed (exit {res.returncode}); its output is above"
            )
    build = build_dir(project)
    if not (build / "flash_args").is_file():
        raise EspQemuError(f"idf.py build wrote no {build / 'flash_args'}")
    cmd = merge_command(chip, project, env)
    ctx.log("$ " + " ".join(cmd))
    res = run_streaming(cmd, cwd=build, log=ctx.log, tool="esptool")
    image = build / FLASH_IMAGE
    if res.returncode != 0 or not image.is_file():
        raise EspQemuError(
            f"merging the flash image failed (esptool exit {res.returncode}; "
            "pip install esptool in ESP-IDF's Python if it is missing)"
        )
    return image


class EspQemuDevice:
    """A running Espressif QEMU; the MCP UART (UART0) at :attr:`pty`."""

    def __init__(self, process: subprocess.Popen[bytes], pty: str, output: Path) -> None:
        self.process = process
        self.pty = pty
        self.output = output

    def close(self, timeout: float = 5.0) -> None:
        stop_qemu(self.process, timeout)


def _output(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


@contextmanager
def boot(cmd: Sequence[str], workdir: Path, *, timeout: float = 30.0) -> Iterator[EspQemuDevice]:
    """Starts QEMU (``cmd`` ends with ``-serial pty``) and yields it once it named its pty."""
    from mcpgen.codegen.run.run_qemu import _death_signal_setter

    workdir.mkdir(parents=True, exist_ok=True)
    out_path = workdir / "qemu.out"
    out: IO[bytes] = open(out_path, "wb")  # noqa: SIM115 - owned by the child
    try:
        process = subprocess.Popen(
            list(cmd),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_death_signal_setter(),  # noqa: PLW1509 - only a prctl call (run_qemu)
        )
    finally:
        out.close()
    dev: Optional[EspQemuDevice] = None
    try:
        deadline = time.monotonic() + timeout
        while dev is None:
            found = _PTY_RE.search(_output(out_path))
            if found is not None:
                dev = EspQemuDevice(process, found.group(1), out_path)
                break
            if process.poll() is not None:
                raise EspQemuError(f"{cmd[0]} exited with {process.returncode}: {_output(out_path).strip()}")
            if time.monotonic() > deadline:
                raise EspQemuError(
                    f"{cmd[0]} named no pty within {timeout:.0f} s: {_output(out_path).strip()}"
                )
            time.sleep(0.02)
        yield dev
    finally:
        if dev is not None:
            dev.close()
        elif process.poll() is None:
            process.kill()
            process.wait()


async def _session(
    pty: str,
    ctx: BuildContext,
    *,
    interactive: bool,
    out: Log,
    timeout: float,
    boot_timeout: float,
    reader: Optional[ReadLine],
) -> int:
    from mcpgen.codegen.run.console import Console, call_every_tool
    from mcpgen.runtime import connect_serial

    device = await connect_serial(
        pty, fingerprint=ctx.spec.fingerprint, call_timeout=timeout, setup_timeout=boot_timeout
    )
    try:
        if not interactive:
            return await call_every_tool(device, ctx.spec, out, timeout)
        assert reader is not None
        return await Console(device, out, timeout=timeout).run(reader)
    finally:
        await device.close()


def run_esp_qemu(
    ctx: BuildContext,
    board: str,
    *,
    interactive: bool,
    out: Log,
    timeout: float,
    reader: Optional[ReadLine] = None,
    boot_timeout: float = 60.0,
    error: Optional[Log] = None,
) -> int:
    """``codegen run SPEC --target esp32c3|esp32 --qemu``: build with idf.py, boot in
    Espressif's QEMU, call every tool (or the console with ``interactive``). Exit code."""
    say_error = error or (lambda msg: out(f"error: {msg}"))
    from mcpgen.codegen.run.run_qemu import exit_on_hangup

    try:
        chip = chip_of(board)
        find_idf()  # both checked before anything is built: one line for what is missing
        exe = find_qemu(chip)
        image = build_image(ctx, board)
        build = image.parent
        cmd = qemu_command(exe, chip, image, efuse_image(chip, build / EFUSE_IMAGE))
        ctx.log("$ " + " ".join(cmd))
        with exit_on_hangup(), boot(cmd, build / "qemu-run") as dev:
            ctx.log(f"MCP UART (UART0) at {dev.pty}; QEMU output in {dev.output}")
            if interactive and reader is None:
                from mcpgen.codegen.run.console import LineReader

                line_reader = LineReader()
                try:
                    return asyncio.run(
                        _session(
                            dev.pty,
                            ctx,
                            interactive=True,
                            out=out,
                            timeout=timeout,
                            boot_timeout=boot_timeout,
                            reader=line_reader,
                        )
                    )
                finally:
                    line_reader.close()
            return asyncio.run(
                _session(
                    dev.pty,
                    ctx,
                    interactive=interactive,
                    out=out,
                    timeout=timeout,
                    boot_timeout=boot_timeout,
                    reader=reader,
                )
            )
    except (EspQemuError, BuildError) as exc:
        say_error(str(exc))
        return 1


__all__ = [
    "CHIPS",
    "EspQemu",
    "EspQemuError",
    "boot",
    "build_image",
    "find_idf",
    "find_qemu",
    "idf_commands",
    "merge_command",
    "project_dir",
    "qemu_command",
    "run_esp_qemu",
]
