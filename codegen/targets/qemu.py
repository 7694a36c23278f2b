"""Cross-compiles a spec's firmware for an emulated MCU: the Cortex-M3 of
``qemu-system-arm -M mps2-an385`` (target ``qemu``) or the RV32IMC of
``qemu-system-riscv32 -M virt`` (target ``qemu-riscv32``, the ESP32-C3's CPU).

The image contains the portable core, the generated tables, the spec's handlers
(``<spec dir>/<stem>_handlers.cpp``), the port code both targets share
(``ports/bare_metal``: main loop, C runtime start-up, stack and heap accounting) and the
target's port (``ports/qemu_mps2`` or ``ports/qemu_riscv_virt``: start-up code, linker
script, polled UART driver, libc stubs). It serves newline-delimited MCP messages on the
MCP UART; a debug console gets the boot banner and the stack high-water mark after every
message. What differs between the targets is data, in :mod:`mcpgen.codegen.targets.qemu_machines`.

``compile_image(ctx, target=...)`` (``build_qemu(spec_path, outdir, target=...)`` from a path)
writes ``outdir/firmware/<build dir>/<slug>.elf``
(``build-qemu`` or ``build-qemu-riscv32``) and, beside it, ``<slug>.map`` and
``<slug>.memory.json`` (the figures of :class:`MemoryReport` and of the core alone).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from mcpgen.codegen import resources
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.names import device_slug
from mcpgen.codegen.spec.ota import require_host_only
from mcpgen.codegen.targets import user_handlers
from mcpgen.codegen.targets.base import BuildContext, BuildOptions, Built, Log, Target
from mcpgen.codegen.targets.qemu_machines import (
    CORTEX_M3,
    RISCV32,
    SHARED_PORT,
    MachineLike,
    QemuMachine,
    get_machine,
    target_of_elf,
)

# The Cortex-M3 compile flags: benchmarks/device.py measures the core built with them.
CXX_FLAGS: tuple[str, ...] = CORTEX_M3.cxx_flags
DEFAULT_STACK_SIZE = 16 * 1024
DEFAULT_RAM_BUDGET = 256 * 1024


template_root = resources.firmware_template


def cross_tool(name: str, target: MachineLike = CORTEX_M3) -> str:
    """Path of a tool of the target's toolchain (``MCPGEN_ARM_PREFIX`` / ``MCPGEN_RISCV_PREFIX``
    override the prefix); raises BuildError naming the apt packages when it is missing."""
    return get_machine(target).toolchain.tool(name)


@dataclass(frozen=True)
class MemoryReport:
    """Memory use of an MCU image, in bytes.

    ``flash`` = code + constants + the initial values of ``.data`` (what is programmed);
    ``ram`` = ``.data`` + ``.bss`` (static RAM, buffers included); ``stack`` = the main
    stack reserved by the linker script (its measured peak use is reported at run time
    on the debug console, see ``docs/firmware.md``).
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
    """Reads section sizes with ``<prefix>size -A`` and checks the symbol table for malloc
    (the target, hence the toolchain, comes from the ELF header)."""
    target = target_of_elf(elf)
    out = subprocess.run(
        [cross_tool("size", target), "-A", "-d", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    sections: dict[str, int] = {}
    for line in out.splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+(\d+)", line)
        if m:
            sections[m.group(1)] = int(m.group(2))
    text = sum(sections.get(s, 0) for s in target.text_sections)
    data = sum(sections.get(s, 0) for s in target.data_sections)
    bss = sum(sections.get(s, 0) for s in target.bss_sections)
    stack = sections.get(".stack", 0)
    syms = subprocess.run(
        [cross_tool("nm", target), "--defined-only", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    heap_linked = any(line.split()[-1] in ("malloc", "_malloc_r") for line in syms.splitlines() if line)
    return MemoryReport(
        text=text, data=data, bss=bss, stack=stack, flash=text + data, ram=data + bss, heap_linked=heap_linked
    )


def linked_sizes(map_file: Path, objects: Sequence[Path], target: MachineLike = CORTEX_M3) -> dict[str, int]:
    """text / data / bss that the given object files contribute to the linked image, read
    from the linker map (after --gc-sections, so only what the image really contains)."""
    target = get_machine(target)
    names = {Path(o).name for o in objects}
    totals = {"text": 0, "data": 0, "bss": 0}
    kind_of = {
        **{s: "text" for s in target.text_sections},
        **{s: "data" for s in target.data_sections},
        **{s: "bss" for s in target.bss_sections},
    }
    text = map_file.read_text(encoding="utf-8", errors="replace")
    body = text.split("Linker script and memory map", 1)[-1]  # skip "Discarded input sections"
    output: Optional[str] = None
    pending: Optional[str] = None  # an input section name that wrapped onto the next line
    for line in body.splitlines():
        m = re.match(r"^(\.\S+)", line)
        if m:  # an output section starts
            output = m.group(1)
            pending = None
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+|COMMON)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)$", line)
        if m and (m.group(1) or pending) and output in kind_of and Path(m.group(3)).name in names:
            totals[kind_of[output]] += int(m.group(2), 16)
        pending = None
    return totals


def _run(cmd: Sequence[str], what: str) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        raise BuildError(f"{what} failed (exit {proc.returncode}):\n$ {' '.join(cmd)}\n{output}")


def _generate(ctx: BuildContext) -> tuple[list[Path], list[Path], Path]:
    """Emits the generated C++; returns (generated sources, include dirs, handlers file)."""
    outdir = ctx.outdir
    files, _ = ctx.generate("cpp")
    sources = sorted(outdir / rel for rel in files if rel.endswith((".cpp", ".cc")))
    includes = sorted({(outdir / rel).parent for rel in files if rel.endswith((".h", ".hpp"))})
    handlers = user_handlers.ensure_handlers(ctx.spec, ctx.spec_path, ctx.log)
    ctx.log(f"generated {len(files)} files in {outdir} (fingerprint {ctx.spec.fingerprint})")
    return sources, includes, handlers


def build_qemu(
    spec_path: Path,
    outdir: Path,
    *,
    target: MachineLike = CORTEX_M3,
    log: Log = print,
    stack_size: int = DEFAULT_STACK_SIZE,
    ram_budget: int = DEFAULT_RAM_BUDGET,
    defines: Optional[dict[str, str]] = None,
) -> Path:
    """Loads ``spec_path`` and cross-compiles its firmware (:func:`compile_image`); returns
    the ELF path. The front door for scripts and tests; ``codegen`` calls the target."""
    ctx = BuildContext.load(spec_path, outdir, BuildOptions(log=log))
    return compile_image(ctx, target=target, stack_size=stack_size, ram_budget=ram_budget, defines=defines)


def compile_image(
    ctx: BuildContext,
    *,
    target: MachineLike = CORTEX_M3,
    stack_size: int = DEFAULT_STACK_SIZE,
    ram_budget: int = DEFAULT_RAM_BUDGET,
    defines: Optional[dict[str, str]] = None,
) -> Path:
    """Generates and cross-compiles the firmware of ``ctx.spec`` for ``target`` (``"qemu"`` =
    Cortex-M3, ``"qemu-riscv32"`` = RV32IMC); returns the ELF path.

    ``defines`` adds ``-DNAME=VALUE`` (e.g. ``{"MCPGEN_REQUEST_BUFFER_SIZE": "2048"}``).
    Raises :class:`BuildError` with the compiler's output when anything fails.
    """
    target = get_machine(target)
    spec_path, outdir, log = ctx.spec_path, ctx.outdir, ctx.log
    cxx = target.toolchain.tool("g++")
    linker = target.toolchain.tool(target.toolchain.link_driver)
    target.toolchain.check_libraries()
    generated, gen_includes, handlers = _generate(ctx)
    slug = device_slug(ctx.spec.device.name)

    root = template_root()
    core_dir = root / "core"
    shared_dir = root / "ports" / SHARED_PORT
    port_dir = root / "ports" / target.port
    core_sources = sorted((core_dir / "mcpgen").glob("*.cpp"))
    if not core_sources:
        raise BuildError(f"no core sources in {core_dir / 'mcpgen'}")
    port_sources = [*sorted(shared_dir.glob("*.cpp")), *sorted(port_dir.glob("*.cpp"))]
    port_sources += sorted(port_dir.glob("*.S"))  # start-up code in assembly (RISC-V)
    sources = [*core_sources, *generated, handlers, *port_sources]

    build_dir = outdir / "firmware" / target.build_subdir
    obj_dir = build_dir / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    include_dirs = (core_dir, core_dir / "mcpgen", *gen_includes, port_dir, shared_dir, spec_path.parent)
    include_flags = [f"-I{d}" for d in include_dirs]
    define_flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    define_flags.append(f"-D{target.define}=1")

    def compile_one(idx_src: tuple[int, Path]) -> Path:
        idx, src = idx_src
        obj = obj_dir / f"{idx:02d}_{src.stem}.o"
        flags = (*target.asm_flags, "-g") if src.suffix == ".S" else target.cxx_flags
        cmd = [cxx, *flags, *define_flags, *include_flags, "-c", str(src), "-o", str(obj)]
        _run(cmd, f"compiling {src}")
        return obj

    log(f"compiling {len(sources)} sources for {target.cpu} with {Path(cxx).name}")
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        objects = list(pool.map(compile_one, enumerate(sources)))

    elf = build_dir / f"{slug}.elf"
    map_file = build_dir / f"{slug}.map"
    link = [
        linker,
        *target.cpu_flags,
        *target.libc_flags,
        *target.link_flags,
        "-Wl,--gc-sections",
        f"-Wl,-Map={map_file}",
        f"-Wl,--defsym=MCPGEN_STACK_SIZE={stack_size}",
        f"-Wl,--defsym=MCPGEN_RAM_BUDGET={ram_budget}",
        "-T",
        str(port_dir / target.linker_script),
        *map(str, objects),
        "-o",
        str(elf),
    ]
    log(f"linking {elf}")
    _run(link, "linking")
    report = memory_report(elf)
    core = linked_sizes(map_file, objects[: len(core_sources)], target)
    figures = {**asdict(report), "target": target.name, "core": core}
    (build_dir / f"{slug}.memory.json").write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    log(f"memory: {report.summary()}")
    log(f"core (linked): text {core['text']} B, data {core['data']} B, bss {core['bss']} B")
    return elf


class QemuTarget(Target):
    """``--target qemu|qemu-riscv32``: an image for one emulated MCU (``qemu_machines``)."""

    def __init__(self, machine: QemuMachine, summary: str) -> None:
        self.machine = machine
        self.name = machine.name
        self.summary = summary

    def build(self, ctx: BuildContext) -> list[Built]:
        require_host_only(ctx.spec, ctx.spec_path, self.name)
        return [Built("firmware", compile_image(ctx, target=self.machine))]


TARGETS: tuple[Target, ...] = (
    QemuTarget(CORTEX_M3, "a Cortex-M3 image for qemu-system-arm -M mps2-an385"),
    QemuTarget(RISCV32, "an RV32IMC image (the ESP32-C3's CPU) for qemu-system-riscv32 -M virt"),
)
