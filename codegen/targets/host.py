"""Builds the host device simulator of a spec: generate, then compile and link with g++.

``compile_simulator(ctx)`` (``build_host(spec_path, outdir)`` from a path) writes
``outdir/firmware/generated/mcp_tools.{h,cpp}``, creates the starter ``<stem>_handlers.cpp``
beside the spec when it is missing, and compiles the portable core, the host port, the
generated tables and the handlers into
``outdir/firmware/build/<device slug>-sim``. Compilation is incremental: an object is
rebuilt only when the hash of its flags, its source and every header it included
(from the compiler's ``-MMD`` dependency file) changed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mcpgen.codegen import resources
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.names import device_slug
from mcpgen.codegen.targets import user_handlers
from mcpgen.codegen.targets.base import BuildContext, BuildOptions, Built, Target
from mcpgen.codegen.targets.python import bindings_built, make_bindings

FIRMWARE_TEMPLATE = resources.firmware_template()
CORE_DIR = FIRMWARE_TEMPLATE / "core"
HOST_PORT_DIR = FIRMWARE_TEMPLATE / "ports" / "host"

CXXFLAGS: tuple[str, ...] = (
    "-std=c++17",
    "-O2",
    "-g",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-fno-exceptions",
    "-fno-rtti",
)


MQTT_PACKAGE = "libmosquitto-dev"


def mqtt_available(cxx: str = "g++") -> bool:
    """True when ``cxx`` finds libmosquitto's header (Debian ``libmosquitto-dev``).

    The simulator's ``--mqtt`` mode is built on libmosquitto. Without it the build still
    succeeds (WebSocket and stdio work) and ``--mqtt`` exits with one line naming the
    package: MQTT is optional for most users, the build is not.
    """
    probe = "#include <mosquitto.h>\n#include <mqtt_protocol.h>\n"
    proc = subprocess.run(
        [cxx, "-x", "c++", "-E", "-o", os.devnull, "-"], input=probe, capture_output=True, text=True
    )
    return proc.returncode == 0


WS_PACKAGE = "libwebsockets-dev"


def ws_available(cxx: str = "g++") -> bool:
    """True when ``cxx`` finds libwebsockets' header (Debian ``libwebsockets-dev``).

    The simulator's ``--ws`` mode is built on libwebsockets (ports/host/ws_client.h says
    why). Without it the build still succeeds (stdio and MQTT work), logs one line naming
    the package, and ``--ws`` exits 2 with the same advice.
    """
    probe = "#include <libwebsockets.h>\n"
    proc = subprocess.run(
        [cxx, "-x", "c++", "-E", "-o", os.devnull, "-"], input=probe, capture_output=True, text=True
    )
    return proc.returncode == 0


@dataclass(frozen=True)
class _Unit:
    source: Path
    obj: Path


def _deps_of(dep_file: Path) -> list[Path]:
    """Prerequisites listed in a make-style ``.d`` file written by ``-MMD``."""
    try:
        text = dep_file.read_text(encoding="utf-8")
    except OSError:
        return []
    text = text.replace("\\\n", " ")
    _, _, rest = text.partition(":")
    first_rule = rest.split("\n", 1)[0]
    deps: list[Path] = []
    tokens = first_rule.replace("\\ ", "\0").split()
    for tok in tokens:
        deps.append(Path(tok.replace("\0", " ")))
    return deps


def _stamp(flags: Sequence[str], source: Path, deps: Sequence[Path]) -> str | None:
    """Hash of the flags and the content of the source and its headers; None if one is gone."""
    h = hashlib.sha256()
    h.update("\0".join(flags).encode())
    for path in [source, *sorted(set(deps) - {source})]:
        try:
            h.update(str(path).encode() + b"\0" + path.read_bytes())
        except OSError:
            return None
    return h.hexdigest()


def _needs_build(unit: _Unit, flags: Sequence[str]) -> bool:
    stamp_file = unit.obj.with_suffix(".stamp")
    if not unit.obj.exists() or not stamp_file.exists():
        return True
    deps = _deps_of(unit.obj.with_suffix(".d"))
    if not deps:
        return True
    current = _stamp(flags, unit.source, deps)
    return current is None or current != stamp_file.read_text(encoding="utf-8").strip()


def _compile(cxx: str, unit: _Unit, flags: Sequence[str], cwd: Path) -> tuple[_Unit, str | None]:
    """Compiles one unit; returns (unit, error output or None)."""
    unit.obj.parent.mkdir(parents=True, exist_ok=True)
    dep_file = unit.obj.with_suffix(".d")
    cmd = [cxx, *flags, "-MMD", "-MF", str(dep_file), "-c", str(unit.source), "-o", str(unit.obj)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        for stale in (unit.obj, unit.obj.with_suffix(".stamp")):
            stale.unlink(missing_ok=True)
        return unit, f"$ {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}"
    stamp = _stamp(flags, unit.source, _deps_of(dep_file))
    if stamp is not None:
        unit.obj.with_suffix(".stamp").write_text(stamp + "\n", encoding="utf-8")
    return unit, None


def _object_name(source: Path, group: str) -> str:
    return f"{group}__{source.stem}.o"


def build_host(
    spec_path: Path,
    outdir: Path,
    *,
    log: Callable[[str], None] = print,
    cxx: str = "g++",
    extra_flags: Sequence[str] = (),
    jobs: int = 0,
) -> Path:
    """Loads ``spec_path`` and compiles its simulator (:func:`compile_simulator`); returns
    the executable. The front door for scripts and tests; ``codegen`` calls the target."""
    ctx = BuildContext.load(spec_path, outdir, BuildOptions(log=log))
    return compile_simulator(ctx, cxx=cxx, extra_flags=extra_flags, jobs=jobs)


def compile_simulator(
    ctx: BuildContext, *, cxx: str = "g++", extra_flags: Sequence[str] = (), jobs: int = 0
) -> Path:
    """Generates and compiles the host simulator of ``ctx.spec``; returns the executable.

    ``extra_flags`` (e.g. ``-DMCPGEN_RESPONSE_BUFFER_SIZE=512``) are added to every
    compile; ``jobs`` is the number of parallel compiles (0: up to 2 or the CPU count).
    Raises BuildError with the compiler output when a unit does not compile or link.
    """
    if shutil.which(cxx) is None:
        raise BuildError(f"{cxx} not found: the simulator needs a C++17 compiler (apt-get install g++)")
    ctx = ctx.resolved()
    spec, outdir, log = ctx.spec, ctx.outdir, ctx.log
    _, written = ctx.generate("cpp")
    for path in written:
        log(f"generated {path}")
    handlers = user_handlers.ensure_handlers(spec, ctx.spec_path, log)

    generated_dir = outdir / "firmware" / "generated"
    build_dir = outdir / "firmware" / "build"
    obj_dir = build_dir / "obj"
    with_mqtt = mqtt_available(cxx)
    if not with_mqtt:
        log(f"{MQTT_PACKAGE} not found: building without --mqtt (apt-get install {MQTT_PACKAGE})")
    with_ws = ws_available(cxx)
    if not with_ws:
        log(f"{WS_PACKAGE} not found: building without --ws (apt-get install {WS_PACKAGE})")
    flags = [
        *CXXFLAGS,
        *extra_flags,
        f"-DMCPGEN_HOST_MQTT={1 if with_mqtt else 0}",
        f"-DMCPGEN_HOST_WS={1 if with_ws else 0}",
        f"-I{CORE_DIR}",
        f"-I{generated_dir}",
        f"-I{HOST_PORT_DIR}",
    ]
    units: list[_Unit] = []
    for group, directory in (("core", CORE_DIR / "mcpgen"), ("host", HOST_PORT_DIR)):
        for src in sorted(directory.glob("*.cpp")):
            units.append(_Unit(src, obj_dir / _object_name(src, group)))
    units.append(_Unit(generated_dir / "mcp_tools.cpp", obj_dir / "gen__mcp_tools.o"))
    units.append(_Unit(handlers, obj_dir / "user__handlers.o"))

    stale = [u for u in units if _needs_build(u, flags)]
    errors: list[str] = []
    if stale:
        workers = jobs or max(1, min(2, os.cpu_count() or 1))
        log(f"compiling {len(stale)} of {len(units)} units ({workers} jobs)")
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = pool.map(lambda u: _compile(cxx, u, flags, outdir), stale)
            for done, (unit, err) in enumerate(results, start=1):
                if err is not None:
                    errors.append(err)
                else:  # numbered, so a long compile shows how far it is
                    log(f"[{done}/{len(stale)}] compiled {unit.source.name}")
    if errors:
        raise BuildError("compilation failed:\n" + "\n".join(errors))

    exe = build_dir / f"{device_slug(spec.device.name)}-sim"
    newest_obj = max(u.obj.stat().st_mtime_ns for u in units)
    if stale or not exe.exists() or exe.stat().st_mtime_ns < newest_obj:
        libs = (["-lmosquitto"] if with_mqtt else []) + (["-lwebsockets"] if with_ws else [])
        # OTA images (ports/host/ota.cpp): SHA-256, and TLS for https:// image servers.
        libs += ["-lmbedtls", "-lmbedx509", "-lmbedcrypto"] if spec.device.ota else []
        cmd = [cxx, *CXXFLAGS, *extra_flags, *(str(u.obj) for u in units), "-o", str(exe), *libs]
        proc = subprocess.run(cmd, cwd=outdir, capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            raise BuildError(f"link failed:\n$ {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}")
        log(f"linked {exe}")
    else:
        log(f"{exe} is up to date")
    return exe


class HostTarget(Target):
    """``--target host``: the simulator executable and the compiled Python bindings."""

    name = "host"
    summary = "the simulator executable (system g++) and the compiled Python bindings"

    def build(self, ctx: BuildContext) -> list[Built]:
        exe = compile_simulator(ctx)
        pydir = make_bindings(ctx)
        return [Built("simulator", exe, missing_transports()), bindings_built(pydir)]


def missing_transports(cxx: str = "g++") -> str:
    """The result line's note on a simulator built without a transport (said again at the
    end of the build, where it is seen: the compile log's one line scrolls away)."""
    notes = []
    if not ws_available(cxx):
        notes.append(f"no --ws: {WS_PACKAGE} was not found; apt-get install {WS_PACKAGE} and build again")
    if not mqtt_available(cxx):
        notes.append(
            f"no --mqtt: {MQTT_PACKAGE} was not found; apt-get install {MQTT_PACKAGE} and build again"
        )
    return "; ".join(notes)


TARGETS: tuple[Target, ...] = (HostTarget(),)
