"""Generates the PlatformIO/ESP-IDF project of a spec and builds it with ``pio run``.

The project's files are emitted by ``codegen/emit/esp32.py`` (its docstring shows the
layout), from the model and what this module finds on the machine: the ``MCPGEN_*``
settings (the spec's ``firmware:`` section and the environment), where the handlers file
is, the MQTT CA certificate. This module writes them (only the changed ones), the OTA
public key, and the settings into ``sdkconfig`` files PlatformIO or idf.py already made.

The user's ``<stem>_handlers.cpp`` beside the spec is compiled *in place*: ``src/handlers.cmake``
sets its path (relative to ``src/``) and ``src/CMakeLists.txt`` adds it to the component's
sources. Why a CMake path and not a copy or a symlink: a copy is what lost edits made in
the IDE (the next generation overwrote it); a symlink needs privileges on Windows and is
flattened by archivers and some sync tools; and PlatformIO ignores ``build_src_filter``
with ESP-IDF (CMake decides what is compiled). The CMake path is the ESP-IDF build
system's own mechanism and needs nothing of the file system. A copy left in ``src/`` by an
older mcpgen is removed when it equals the user's file and stops the build otherwise.

``pio run`` output is streamed line by line. When PlatformIO has to download the
platform or toolchain and cannot (no network), the download phase is cut off after a
bounded time and the function ends with a message saying what was generated, where,
and the command to run on a networked machine.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Optional

from mcpgen.codegen.emit import esp32 as emit_esp32
from mcpgen.codegen.emit import esp32_ota, esp32_transport
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.targets import user_handlers
from mcpgen.codegen.targets.base import BuildContext, BuildOptions, Built, Target
from mcpgen.codegen.targets.writer import write_tree

REGISTRY_HOST = "api.registry.platformio.org"

# Seconds PlatformIO may spend before it starts compiling (installing the platform and
# toolchain) when the registry is reachable / when it is not.
DOWNLOAD_TIMEOUT = float(os.environ.get("MCPGEN_PIO_DOWNLOAD_TIMEOUT", "1800"))
OFFLINE_TIMEOUT = float(os.environ.get("MCPGEN_PIO_OFFLINE_TIMEOUT", "20"))
# Say something when PlatformIO has been silent this long (seconds).
HEARTBEAT = float(os.environ.get("MCPGEN_PIO_HEARTBEAT", "15"))
_COMPILING = re.compile(r"^(Compiling |Building .*\.o\b|\[\s*\d+/\d+\] Building)")

# A line like these means the download phase is over and the build runs.
_BUILD_STARTED = re.compile(
    r"^(Building in (release|debug) mode|Reading CMake configuration|-- Building ESP-IDF|Compiling |"
    r"Generating |Linking |Retrieving maximum program size|Checking size|\[\s*\d+%\])"
)


@dataclass(frozen=True)
class Board:
    env: str  # PlatformIO environment name (= codegen board name)
    pio_board: str
    chip: str  # esptool --chip
    bootloader_offset: int


BOARDS: dict[str, Board] = {
    "esp32": Board("esp32", "esp32dev", "esp32", 0x1000),
    "esp32s3": Board("esp32s3", "esp32-s3-devkitc-1", "esp32s3", 0x0),
    "esp32c3": Board("esp32c3", "esp32-c3-devkitm-1", "esp32c3", 0x0),
}
PARTITION_TABLE_OFFSET = 0x8000


def board_info(board: str) -> Board:
    try:
        return BOARDS[board]
    except KeyError:
        raise BuildError(f"unknown board {board!r}: choose one of {', '.join(BOARDS)}") from None


def project_dir(outdir: Path) -> Path:
    return Path(outdir) / "firmware" / "platformio"


def settings_environ(spec: Spec, environ: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The ``MCPGEN_*`` settings of a build: the spec's ``firmware:`` section (secrets
    resolved), overridden by the environment (``environ``, default ``os.environ``)."""
    env = {s.env: s.value for s in spec.firmware}
    env.update(os.environ if environ is None else environ)
    return env


def read_mqtt_ca(settings: dict[str, str]) -> tuple[str, str]:
    """(PEM text, file name) of ``MCPGEN_MQTT_CA_FILE``; ("", "") when it is not set."""
    path = settings.get("MCPGEN_MQTT_CA_FILE") or ""
    if not path:
        return "", ""
    try:
        pem = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise BuildError(
            f"MCPGEN_MQTT_CA_FILE={path}: cannot read it ({exc})\n"
            "  fix: point it at the broker's CA certificate in PEM form"
        ) from exc
    if "-----BEGIN CERTIFICATE-----" not in pem:
        raise BuildError(
            f"MCPGEN_MQTT_CA_FILE={path}: no '-----BEGIN CERTIFICATE-----' in it "
            "(PEM expected)\n  fix: convert a DER certificate with "
            "`openssl x509 -inform der -in CA.der -out CA.pem`"
        )
    return pem, Path(path).name


def _rewrite(path: Path, change: Callable[[str], str]) -> bool:
    """Rewrites an existing text file as ``change`` says; True when it changed."""
    text = path.read_text(encoding="utf-8")
    new = change(text)
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def generate_project(
    spec_path: Path, outdir: Path, *, log: Log = print, environ: Optional[dict[str, str]] = None
) -> Path:
    """Loads ``spec_path`` and writes its PlatformIO project (:func:`write_project`); returns
    its directory. The front door for scripts and tests; ``codegen`` calls the target."""
    return write_project(BuildContext.load(spec_path, outdir, BuildOptions(log=log)), environ=environ)


def write_project(ctx: BuildContext, *, environ: Optional[dict[str, str]] = None) -> Path:
    """Writes the complete PlatformIO project for ``ctx.spec``; returns its directory."""
    spec, spec_path, outdir, log = ctx.spec, ctx.spec_path, ctx.outdir, ctx.log

    handlers = user_handlers.ensure_handlers(spec, spec_path, log)
    project = project_dir(outdir)
    _retire_handlers_copy(project / "src" / handlers.name, handlers, log)

    settings = settings_environ(spec, environ)
    values = emit_esp32.config_values(settings)
    transport = esp32_transport.transport_of(settings)
    ca_pem, ca_source = read_mqtt_ca(settings)
    inputs = emit_esp32.ProjectInputs(
        spec_file=spec_path.name,
        handlers_from_project=_relative(handlers, project),
        handlers_from_src=_relative(handlers, project / "src"),
        settings=settings,
        platform=os.environ.get("MCPGEN_PIO_PLATFORM", emit_esp32.DEFAULT_PLATFORM),
        mqtt_ca_pem=ca_pem,
        mqtt_ca_source=ca_source,
    )
    files = emit_esp32.emit(spec, inputs, ctx.emit("cpp"))

    written = write_tree(project, files)
    if spec.ota_signing is not None:  # binary: beside write_tree's text files, written when it changed
        key_file = project / esp32_ota.VERIFICATION_KEY
        if not key_file.exists() or key_file.read_bytes() != spec.ota_signing.public_key:
            key_file.write_bytes(spec.ota_signing.public_key)
            written.append(key_file)
    for name in [f"sdkconfig.{env}" for env in BOARDS] + ["sdkconfig"]:  # PlatformIO's, idf.py's
        existing = project / name
        if not existing.exists():
            continue
        if _rewrite(existing, partial(emit_esp32.with_settings, values=values)):
            log(f"updated the mcpgen settings in {existing} from the environment")
        if _rewrite(existing, partial(esp32_transport.with_choice, transport=transport)):
            log(f"set the transport in {existing} to {transport}")
    log(
        f"generated PlatformIO project {project} ({len(files)} files, {len(written)} changed, "
        f"fingerprint {spec.fingerprint}, transport {transport})"
    )
    secrets = sorted(s.secret for s in spec.firmware if s.secret is not None)
    if secrets:
        log(
            f"secrets {', '.join(secrets)} are written only to {project / 'sdkconfig.defaults'} (and the "
            f"sdkconfig files PlatformIO and idf.py make from it): keep {project} out of version control"
        )
    missing = [name for name, value in values.items() if not value and name != "MCPGEN_WIFI_PASSWORD"]
    if missing and transport != "serial":  # the serial transport needs neither Wi-Fi nor a backend
        log(
            f"note: {', '.join(missing)} not set: the firmware will build but ask to be configured at boot "
            "(set them and build again, or `pio run -t menuconfig`)"
        )
    return project


def _relative(path: Path, start: Path) -> str:
    """``path`` relative to ``start`` in POSIX form; absolute when there is no relative path
    (another drive on Windows). Relative keeps a checkout that moves as a whole working."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()
    except ValueError:
        return Path(path).resolve().as_posix()


def _retire_handlers_copy(copy: Path, handlers: Path, log: Log) -> None:
    """Older projects had a copy of the handlers in ``src/``; it would now be compiled twice.

    An unchanged copy is removed. An edited one is the user's work: stop and say where
    it should go, rather than delete it or silently build without it.
    """
    if not copy.is_file():
        return
    if copy.read_bytes() == handlers.read_bytes():
        copy.unlink()
        log(f"removed {copy}: the build now compiles {handlers} in place")
        return
    raise BuildError(
        f"{copy}: this copy of your handlers, left by an older codegen, differs from {handlers}, "
        "which the build now compiles in place (the copy would be ignored).\n"
        f"  fix: if you edited the copy, move those changes into {handlers}; "
        "then delete the copy and build again"
    )


# ---------------------------------------------------------------------------- PlatformIO


def pio_command() -> Optional[list[str]]:
    """How to invoke PlatformIO here (``pio`` on PATH, else ``python -m platformio``), or None."""
    exe = shutil.which("pio") or shutil.which("platformio")
    if exe:
        return [exe]
    try:
        import importlib.util

        if importlib.util.find_spec("platformio") is not None:
            return [sys.executable, "-m", "platformio"]
    except (ImportError, ValueError):
        pass
    return None


def pio_core_dir() -> Path:
    return Path(os.environ.get("PLATFORMIO_CORE_DIR", Path.home() / ".platformio"))


def platform_installed() -> bool:
    platforms = pio_core_dir() / "platforms"
    return platforms.is_dir() and any(p.name.startswith("espressif32") for p in platforms.iterdir())


def registry_reachable(timeout: float = 5.0) -> bool:
    """True when the PlatformIO registry answers (or a proxy is configured: then we cannot tell)."""
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    try:
        with socket.create_connection((REGISTRY_HOST, 443), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass
class StreamResult:
    returncode: int
    output: str
    timed_out: bool  # cut off in the download phase
    build_started: bool


def _tree_bytes(root: Path) -> int:
    """Bytes of the files under ``root`` (0 when it does not exist); symlinks not followed."""
    total = 0
    stack = [root]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(Path(e.path))
                elif e.is_file(follow_symlinks=False):
                    total += e.stat(follow_symlinks=False).st_size
            except OSError:
                pass
    return total


def run_streaming(
    cmd: Sequence[str],
    *,
    cwd: Optional[Path] = None,
    log: Log = print,
    download_timeout: Optional[float] = None,
    heartbeat: Optional[float] = None,
    started_re: re.Pattern[str] = _BUILD_STARTED,
    tool: str = "PlatformIO",
    download_dir: Optional[Path] = None,
) -> StreamResult:
    """Runs ``cmd`` showing its output live, line by line (``\\r`` progress lines too).

    While no line matched ``started_re`` (the download/install phase), the process is
    stopped after ``download_timeout`` seconds. A heartbeat line is logged whenever the
    tool has been silent for ``heartbeat`` seconds, so nothing ever sits silent; it says
    how much has arrived in ``download_dir`` while installing (PlatformIO's own progress
    bars do not survive a pipe) and how many files were compiled since.
    """
    heartbeat = HEARTBEAT if heartbeat is None else heartbeat
    baseline = _tree_bytes(download_dir) if download_dir is not None else 0
    compiled = 0
    env = dict(os.environ, PYTHONUNBUFFERED="1", PLATFORMIO_DISABLE_PROGRESSBAR="true")
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    lines: queue.Queue[Optional[str]] = queue.Queue()

    def reader() -> None:
        assert proc.stdout is not None
        buf = b""
        while True:
            chunk = proc.stdout.read1(4096) if hasattr(proc.stdout, "read1") else proc.stdout.read(1)
            if not chunk:
                break
            buf += chunk
            parts = re.split(rb"\r\n|\n|\r", buf)
            buf = parts.pop()
            for p in parts:
                lines.put(p.decode("utf-8", "replace"))
        if buf:
            lines.put(buf.decode("utf-8", "replace"))
        lines.put(None)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    start = last = time.monotonic()
    captured: list[str] = []
    build_started = False
    timed_out = False
    while True:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            line = ""
            now = time.monotonic()
            if not build_started and download_timeout is not None and now - start > download_timeout:
                timed_out = True
                log(f"... no build started after {download_timeout:.0f} s: stopping {tool}")
                _kill_group(proc)
                break
            if now - last > heartbeat:
                elapsed = f"{now - start:.0f} s"
                if build_started:
                    log(f"... {tool} still compiling ({elapsed}, {compiled} files compiled so far)")
                elif download_dir is not None:
                    got = max(0, _tree_bytes(download_dir) - baseline) / 1e6
                    log(
                        f"... {tool} still installing the platform/toolchain "
                        f"({elapsed}, {got:.1f} MB downloaded into {download_dir} so far)"
                    )
                else:
                    log(f"... {tool} still working ({elapsed})")
                last = now
            continue
        if line is None:
            break
        last = time.monotonic()
        if line.strip():
            log(line)
            captured.append(line)
            if not build_started and started_re.search(line.strip()):
                build_started = True
            if _COMPILING.search(line.strip()):
                compiled += 1
    rc = proc.wait()
    thread.join(timeout=2)
    return StreamResult(rc, "\n".join(captured), timed_out, build_started)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    except PermissionError:
        proc.kill()


def next_steps(project: Path, board: str) -> str:
    return (
        f"  generated: {project} (PlatformIO project, envs {', '.join(BOARDS)})\n"
        f"  build:     pio run -d {project} -e {board}\n"
        f"  flash:     pio run -d {project} -e {board} -t upload --upload-port PORT\n"
        f"             (or: codegen flash SPEC --board {board} --port PORT [--esptool])\n"
        f"  idf.py:    cd {project} && idf.py set-target {board_info(board).chip} && idf.py build"
    )


def offline_message(project: Path, board: str, reachable: bool) -> str:
    why = (
        f"the PlatformIO registry ({REGISTRY_HOST}) is not reachable from this machine"
        if not reachable
        else "the download did not complete"
    )
    return (
        f"PlatformIO could not download the espressif32 platform / ESP-IDF toolchain for {board}: {why}.\n"
        f"Nothing was compiled. Run the build on a machine with network access "
        "(the first build downloads the platform, ESP-IDF and the toolchain; later builds work offline):\n"
        + next_steps(project, board)
    )


def pio_run(project: Path, board: str, extra: Sequence[str] = (), *, log: Log = print) -> int:
    """``pio run -d PROJECT -e BOARD [extra]`` with live output and the offline guard."""
    pio = pio_command()
    if pio is None:
        log(
            "PlatformIO is not installed: pip install 'mcpgen[esp32]' (or: pip install platformio; "
            "then `pio --version` should work)."
        )
        log(next_steps(project, board))
        return 1
    installed = platform_installed()
    reachable = installed or registry_reachable()
    limit = DOWNLOAD_TIMEOUT if reachable else OFFLINE_TIMEOUT
    if not installed:
        state = "reachable" if reachable else "NOT reachable"
        log(
            f"PlatformIO will first install the espressif32 platform and toolchain "
            f"(registry {state}; giving it {limit:.0f} s to start building)"
        )
    cmd = [*pio, "run", "-d", str(project), "-e", board, *extra]
    log("$ " + " ".join(cmd))
    res = run_streaming(
        cmd, log=log, download_timeout=limit, download_dir=None if installed else pio_core_dir()
    )
    if res.returncode == 0 and not res.timed_out:
        return 0
    if not res.build_started and not installed:
        log(offline_message(project, board, reachable and not res.timed_out))
        return 1
    log(f"`pio run` failed (exit {res.returncode}); the project is in {project}")
    return 1


def build_esp32(
    spec_path: Path,
    outdir: Path,
    board: str,
    *,
    log: Log = print,
    run_pio: bool = True,
    pio_args: Sequence[str] = (),
) -> int:
    """Loads ``spec_path`` and builds ``board`` (:func:`build_board`); returns an exit code.
    The front door for scripts and tests; ``codegen`` calls the target."""
    ctx = BuildContext.load(spec_path, outdir, BuildOptions(log=log, run_pio=run_pio))
    return build_board(ctx, board, pio_args=pio_args)


def build_board(ctx: BuildContext, board: str, *, pio_args: Sequence[str] = ()) -> int:
    """Generates the PlatformIO project and (``ctx.options.run_pio``) builds ``board``.
    Returns an exit code.

    ``pio_args`` are added to ``pio run`` (``codegen build -v`` passes ``-v``)."""
    log = ctx.log
    info = board_info(board)
    project = write_project(ctx)
    if not ctx.options.run_pio:
        log(next_steps(project, info.env))
        return 0
    rc = pio_run(project, info.env, pio_args, log=log)
    if rc == 0:
        build = project / ".pio" / "build" / info.env
        for name, offset in images_for(project, info):
            log(f"  {offset:#07x}  {name}")
        log(f"built {info.env}: images in {build}")
    return rc


def images_for(project: Path, info: Board) -> list[tuple[Path, int]]:
    """(image, flash offset) for a built env: bootloader, partition table, app, and with the
    two-slot table (device.ota) the initial OTA data when the build made one: flashed by
    cable, the device then boots ota_0 (the image just written), not a slot an update chose."""
    build = project / ".pio" / "build" / info.env
    table = project / "partitions.csv"
    images = [
        (build / "bootloader.bin", info.bootloader_offset),
        (build / "partitions.bin", PARTITION_TABLE_OFFSET),
    ]
    otadata = partition_offset(table, "data", "ota")
    if otadata is not None and (build / "ota_data_initial.bin").is_file():
        images.append((build / "ota_data_initial.bin", otadata))
    images.append((build / "firmware.bin", app_offset(table)))
    return images


def partition_offset(partitions_csv: Path, kind: str, subtype: Optional[str] = None) -> Optional[int]:
    """Offset of the first partition of type ``kind`` (and ``subtype``) of a partition table CSV."""
    try:
        text = partitions_csv.read_text(encoding="utf-8")
    except OSError:
        return None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        cols = [c.strip() for c in line.split(",")]
        if len(cols) >= 4 and cols[1] == kind and (subtype is None or cols[2] == subtype) and cols[3]:
            return int(cols[3], 0)
    return None


def app_offset(partitions_csv: Path, default: int = 0x10000) -> int:
    """Offset of the first app partition (factory or ota_0) of a partition table CSV."""
    offset = partition_offset(partitions_csv, "app")
    return default if offset is None else offset


class Esp32Target(Target):
    """``--target esp32|esp32s3|esp32c3``: a PlatformIO/ESP-IDF project for one board, then ``pio run``."""

    def __init__(self, board: str, summary: str) -> None:
        self.name = board
        self.summary = summary

    def build(self, ctx: BuildContext) -> list[Built]:
        options = ctx.options
        esp32_ota.require_signing_supported(ctx.spec, self.name)
        rc = build_board(ctx, self.name, pio_args=("-v",) if options.verbose else ())
        if rc != 0:
            why = "PlatformIO's output is above"
            if options.quiet:
                why = "run without -q to see PlatformIO's output"
            raise BuildError(f"the {self.name} build failed ({why})")
        return [Built("project", project_dir(ctx.outdir))]


TARGETS: tuple[Target, ...] = (
    Esp32Target("esp32", "a PlatformIO/ESP-IDF project for ESP32-DevKitC, then `pio run`"),
    Esp32Target("esp32s3", "a PlatformIO/ESP-IDF project for ESP32-S3-DevKitC-1, then `pio run`"),
    Esp32Target("esp32c3", "a PlatformIO/ESP-IDF project for ESP32-C3-DevKitM-1, then `pio run`"),
)
