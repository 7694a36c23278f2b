"""Cross-compiles a spec's firmware for the emulated Cortex-M3 (``qemu-system-arm -M mps2-an385``).

The image contains the portable core, the generated tables, the spec's handlers
(``<spec dir>/<stem>_handlers.cpp``) and the ``qemu_mps2`` port (start-up code, linker
script, polled CMSDK UART driver, newlib stubs, main loop). It serves newline-delimited
MCP messages on UART0; UART1 is its debug console (boot banner, stack high-water mark
after every message).

``build_qemu(spec, outdir)`` writes ``outdir/firmware/build-qemu/<slug>.elf`` and, beside
it, ``<slug>.map`` and ``<slug>.memory.json`` (the figures of :class:`MemoryReport`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from mcpgen.codegen import resources
from mcpgen.codegen.build_errors import BuildError

Log = Callable[[str], None]

PORT_NAME = "qemu_mps2"
QEMU_MACHINE = "mps2-an385"
DEFAULT_STACK_SIZE = 16 * 1024
DEFAULT_RAM_BUDGET = 256 * 1024

CPU_FLAGS: tuple[str, ...] = ("-mcpu=cortex-m3", "-mthumb")
CXX_FLAGS: tuple[str, ...] = (
    *CPU_FLAGS,
    "-std=c++17",
    "-Os",
    "-g",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-threadsafe-statics",
    "-fno-unwind-tables",
    "-fno-asynchronous-unwind-tables",
    "-ffunction-sections",
    "-fdata-sections",
    "-Wall",
    "-Wextra",
    "-Werror",
)


template_root = resources.firmware_template


def cross_tool(name: str) -> str:
    """Path of an ``arm-none-eabi-<name>`` tool (``MCPGEN_ARM_PREFIX`` overrides the prefix)."""
    prefix = os.environ.get("MCPGEN_ARM_PREFIX", "arm-none-eabi-")
    exe = shutil.which(prefix + name)
    if exe is None:
        raise BuildError(
            f"{prefix}{name} not found: install the Arm bare-metal toolchain "
            "(Debian/Ubuntu: apt-get install gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib)"
        )
    return exe


@dataclass(frozen=True)
class MemoryReport:
    """Memory use of a Cortex-M image, in bytes.

    ``flash`` = code + constants + the initial values of ``.data`` (what is programmed);
    ``ram`` = ``.data`` + ``.bss`` (static RAM, buffers included); ``stack`` = the main
    stack reserved by the linker script (its measured peak use is reported at run time
    on UART1, see ``docs/firmware.md``).
    """

    text: int
    data: int
    bss: int
    stack: int
    flash: int
    ram: int
    heap_linked: bool  # True if malloc is in the image (the request path must not need it)

    def summary(self) -> str:
        heap = "malloc linked" if self.heap_linked else "no malloc"
        return (
            f"flash {self.flash} B (text {self.text} + data {self.data}), "
            f"RAM {self.ram} B static (data {self.data} + bss {self.bss}) + stack {self.stack} B, {heap}"
        )


def memory_report(elf: Path) -> MemoryReport:
    """Reads section sizes with ``arm-none-eabi-size -A`` and checks the symbol table for malloc."""
    out = subprocess.run(
        [cross_tool("size"), "-A", "-d", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    sections: dict[str, int] = {}
    for line in out.splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+(\d+)", line)
        if m:
            sections[m.group(1)] = int(m.group(2))
    text = sum(sections.get(s, 0) for s in (".text", ".ARM.extab", ".ARM.exidx"))
    data = sections.get(".data", 0)
    bss = sections.get(".bss", 0)
    stack = sections.get(".stack", 0)
    syms = subprocess.run(
        [cross_tool("nm"), "--defined-only", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    heap_linked = any(line.split()[-1] in ("malloc", "_malloc_r") for line in syms.splitlines() if line)
    return MemoryReport(
        text=text, data=data, bss=bss, stack=stack, flash=text + data, ram=data + bss, heap_linked=heap_linked
    )


def _run(cmd: Sequence[str], what: str) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        raise BuildError(f"{what} failed (exit {proc.returncode}):\n$ {' '.join(cmd)}\n{output}")


def _generate(spec_path: Path, outdir: Path, log: Log) -> tuple[object, list[Path], list[Path], Path]:
    """Emits the generated C++; returns (spec, generated sources, include dirs, handlers file)."""
    from mcpgen.codegen import emit_cpp
    from mcpgen.codegen.writer import write_tree

    try:
        from mcpgen.codegen.loader import load_spec

        spec = load_spec(spec_path)
    except OSError as exc:
        raise BuildError(f"cannot read spec {spec_path}: {exc}") from exc
    except Exception as exc:  # SpecErrors (validation) carries every problem found
        errors = getattr(exc, "errors", None)
        if errors is None:
            raise
        lines = [e.format() if hasattr(e, "format") else str(e) for e in errors]
        raise BuildError(f"{spec_path}: invalid spec\n" + "\n".join(lines)) from exc
    files = emit_cpp.emit(spec)
    write_tree(outdir, files)
    sources = sorted(outdir / rel for rel in files if rel.endswith((".cpp", ".cc")))
    includes = sorted({(outdir / rel).parent for rel in files if rel.endswith((".h", ".hpp"))})
    handlers = emit_cpp.ensure_handlers(spec, spec_path, log)
    log(f"generated {len(files)} files in {outdir} (fingerprint {getattr(spec, 'fingerprint', '?')})")
    return spec, sources, includes, handlers


def build_qemu(
    spec_path: Path,
    outdir: Path,
    *,
    log: Log = print,
    stack_size: int = DEFAULT_STACK_SIZE,
    ram_budget: int = DEFAULT_RAM_BUDGET,
    defines: Optional[dict[str, str]] = None,
) -> Path:
    """Generates and cross-compiles the firmware; returns the ELF path.

    ``defines`` adds ``-DNAME=VALUE`` (e.g. ``{"MCPGEN_REQUEST_BUFFER_SIZE": "2048"}``).
    Raises :class:`BuildError` with the compiler's output when anything fails.
    """
    from mcpgen.codegen.names import device_slug

    spec_path = Path(spec_path)
    outdir = Path(outdir)
    cxx = cross_tool("g++")
    spec, generated, gen_includes, handlers = _generate(spec_path, outdir, log)
    slug = device_slug(spec.device.name)  # type: ignore[attr-defined]

    root = template_root()
    core_dir = root / "core"
    port_dir = root / "ports" / PORT_NAME
    core_sources = sorted((core_dir / "mcpgen").glob("*.cpp"))
    if not core_sources:
        raise BuildError(f"no core sources in {core_dir / 'mcpgen'}")
    port_sources = sorted(port_dir.glob("*.cpp"))
    sources = [*core_sources, *generated, handlers, *port_sources]

    build_dir = outdir / "firmware" / "build-qemu"
    obj_dir = build_dir / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    include_dirs = (core_dir, core_dir / "mcpgen", *gen_includes, port_dir, spec_path.parent)
    include_flags = [f"-I{d}" for d in include_dirs]
    define_flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    define_flags.append("-DMCPGEN_PORT_QEMU_MPS2=1")

    def compile_one(idx_src: tuple[int, Path]) -> Path:
        idx, src = idx_src
        obj = obj_dir / f"{idx:02d}_{src.stem}.o"
        cmd = [cxx, *CXX_FLAGS, *define_flags, *include_flags, "-c", str(src), "-o", str(obj)]
        _run(cmd, f"compiling {src}")
        return obj

    log(f"compiling {len(sources)} sources for Cortex-M3 ({QEMU_MACHINE}) with {Path(cxx).name}")
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        objects = list(pool.map(compile_one, enumerate(sources)))

    elf = build_dir / f"{slug}.elf"
    link = [
        cxx,
        *CPU_FLAGS,
        "--specs=nano.specs",
        "-nostartfiles",
        "-u",
        "_printf_float",
        "-Wl,--gc-sections",
        f"-Wl,-Map={build_dir / (slug + '.map')}",
        f"-Wl,--defsym=MCPGEN_STACK_SIZE={stack_size}",
        f"-Wl,--defsym=MCPGEN_RAM_BUDGET={ram_budget}",
        "-T",
        str(port_dir / "mps2_an385.ld"),
        *map(str, objects),
        "-o",
        str(elf),
    ]
    log(f"linking {elf}")
    _run(link, "linking")
    report = memory_report(elf)
    figures = json.dumps(asdict(report), indent=2) + "\n"
    (build_dir / f"{slug}.memory.json").write_text(figures, encoding="utf-8")
    log(f"memory: {report.summary()}")
    return elf
