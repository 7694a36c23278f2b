"""The emulated MCU targets of ``codegen build/run --target qemu*``, as data.

The Cortex-M3 (``qemu``) and the RISC-V RV32IMC (``qemu-riscv32``, the ESP32-C3's CPU)
images are built and booted by the same code (``build_qemu``, ``run_qemu``); what differs
between them -- toolchain, flags, port folder, linker script, how the image is measured,
the QEMU command line -- is one :class:`QemuMachine` each, here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from mcpgen.codegen.errors import BuildError

# Flags every image is compiled with, after the CPU's own (the repo's C++ rules, plus
# what keeps a bare-metal image small: no unwind tables, one section per function for
# --gc-sections).
COMMON_CXX_FLAGS: tuple[str, ...] = (
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

# The port code both bare-metal UART ports share (main loop, C runtime start-up, stack
# and heap accounting), beside each port's own folder.
SHARED_PORT = "bare_metal"

# ELF e_machine values of the CPUs below (ELF header offset 18).
EM_ARM = 40
EM_RISCV = 243


@dataclass(frozen=True)
class Toolchain:
    """A GNU cross toolchain: ``<prefix>g++`` etc., the prefix overridable by an env var."""

    prefix: str
    prefix_env: str
    apt_packages: str  # what to apt-get install when it is missing
    link_driver: str  # "g++" or "gcc": the driver that links
    # Files the C library package installs where gcc finds them (its specs file): the
    # compiler can be there without the library, which would fail later with a header error.
    required_files: tuple[str, ...] = ()

    def tool(self, name: str) -> str:
        """Path of ``<prefix><name>``; one BuildError line naming the package when missing."""
        prefix = os.environ.get(self.prefix_env, self.prefix)
        exe = shutil.which(prefix + name)
        if exe is None:
            raise BuildError(
                f"{prefix}{name} not found: install the toolchain "
                f"(Debian/Ubuntu: apt-get install {self.apt_packages}) or set {self.prefix_env}"
            )
        return exe

    def check_libraries(self) -> None:
        """Raises BuildError (one line naming the packages) when a required file is missing."""
        gcc = self.tool("gcc")
        for name in self.required_files:
            query = subprocess.run([gcc, f"-print-file-name={name}"], capture_output=True, text=True)
            found = query.stdout.strip()
            if not os.path.isabs(found):  # gcc echoes the bare name when it finds nothing
                raise BuildError(
                    f"{name} not found by {Path(gcc).name}: install the C library "
                    f"(Debian/Ubuntu: apt-get install {self.apt_packages})"
                )


@dataclass(frozen=True)
class QemuMachine:
    """Everything target-specific about building and booting one emulated MCU."""

    name: str  # the --target value
    cpu: str  # for messages
    port: str  # firmware_template/ports/<port>
    define: str  # -D<define>=1 for the port's sources
    toolchain: Toolchain
    cpu_flags: tuple[str, ...]  # compile and link
    asm_flags: tuple[str, ...]  # replaces cpu_flags for the port's .S files
    libc_flags: tuple[str, ...]  # compile and link: selects the C library
    link_flags: tuple[str, ...]  # link only
    linker_script: str  # in the port folder
    build_subdir: str  # OUT/firmware/<build_subdir>/
    # Sections of `size -A` summed into MemoryReport's text / data / bss.
    text_sections: tuple[str, ...]
    data_sections: tuple[str, ...]
    bss_sections: tuple[str, ...]
    elf_machine: int
    qemu: str  # emulator executable
    qemu_apt_package: str
    machine: str
    qemu_args: tuple[str, ...]  # machine options besides -M
    # Where the firmware's debug console goes: "serial" = the machine's second UART,
    # "semihosting" = QEMU's semihosting console (the machine has a single UART).
    console: str

    @property
    def cxx_flags(self) -> tuple[str, ...]:
        return (*self.cpu_flags, *self.libc_flags, *COMMON_CXX_FLAGS)

    def console_args(self, chardev: str) -> tuple[str, ...]:
        """QEMU options that route the firmware's debug console to ``chardev``."""
        if self.console == "serial":
            return ("-serial", f"chardev:{chardev}")
        return ("-semihosting-config", f"enable=on,target=native,chardev={chardev}")

    def qemu_missing(self) -> str:
        """The one line to show when the emulator is not installed."""
        return f"{self.qemu} not found: install it (Debian/Ubuntu: apt-get install {self.qemu_apt_package})"


CORTEX_M3 = QemuMachine(
    name="qemu",
    cpu="Cortex-M3 (mps2-an385)",
    port="qemu_mps2",
    define="MCPGEN_PORT_QEMU_MPS2",
    toolchain=Toolchain(
        prefix="arm-none-eabi-",
        prefix_env="MCPGEN_ARM_PREFIX",
        apt_packages="gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib",
        link_driver="g++",
        required_files=("nano.specs",),
    ),
    cpu_flags=("-mcpu=cortex-m3", "-mthumb"),
    asm_flags=("-mcpu=cortex-m3", "-mthumb"),
    libc_flags=(),
    # newlib-nano; -u _printf_float so that handlers may snprintf a double.
    link_flags=("--specs=nano.specs", "-nostartfiles", "-u", "_printf_float"),
    linker_script="mps2_an385.ld",
    build_subdir="build-qemu",
    text_sections=(".text", ".ARM.extab", ".ARM.exidx"),
    data_sections=(".data",),
    bss_sections=(".bss",),
    elf_machine=EM_ARM,
    qemu="qemu-system-arm",
    qemu_apt_package="qemu-system-arm",
    machine="mps2-an385",
    qemu_args=(),
    console="serial",
)

# rv32imc/ilp32, the ESP32-C3's ISA. Debian's toolchain has no rv32imc multilib: gcc
# links the rv32im libraries (no compressed instructions in libc, which runs fine). The
# C++ must not name _zicsr/_zifencei in -march (gcc then silently picks the 64-bit
# libraries); only the start-up assembly, which needs CSR instructions, gets zicsr.
# riscv64-unknown-elf-g++ has no libstdc++ headers (the core needs none) and must link
# through the gcc driver. picolibc replaces newlib; its printf handles doubles by default.
RISCV32 = QemuMachine(
    name="qemu-riscv32",
    cpu="RV32IMC (virt)",
    port="qemu_riscv_virt",
    define="MCPGEN_PORT_QEMU_RISCV_VIRT",
    toolchain=Toolchain(
        prefix="riscv64-unknown-elf-",
        prefix_env="MCPGEN_RISCV_PREFIX",
        apt_packages="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf",
        link_driver="gcc",
        required_files=("picolibc.specs",),
    ),
    cpu_flags=("-march=rv32imc", "-mabi=ilp32"),
    asm_flags=("-march=rv32imc_zicsr", "-mabi=ilp32"),
    libc_flags=("--specs=picolibc.specs",),
    link_flags=("-nostartfiles",),
    linker_script="riscv_virt.ld",
    build_subdir="build-qemu-riscv32",
    text_sections=(".text",),
    data_sections=(".data", ".tdata"),
    bss_sections=(".bss", ".tbss"),
    elf_machine=EM_RISCV,
    qemu="qemu-system-riscv32",
    qemu_apt_package="qemu-system-misc",
    machine="virt",
    qemu_args=("-bios", "none"),
    console="semihosting",
)

MACHINES: dict[str, QemuMachine] = {t.name: t for t in (CORTEX_M3, RISCV32)}

MachineLike = Union[str, QemuMachine]


def get_machine(target: MachineLike) -> QemuMachine:
    """A target by its --target name (or the target itself)."""
    if isinstance(target, QemuMachine):
        return target
    try:
        return MACHINES[target]
    except KeyError:
        raise ValueError(f"unknown QEMU target {target!r}; expected one of {', '.join(MACHINES)}") from None


def target_of_elf(elf: Path) -> QemuMachine:
    """The target an image was built for, from the machine field of its ELF header."""
    with open(elf, "rb") as f:
        header = f.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        raise ValueError(f"{elf} is not an ELF image")
    machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    for target in MACHINES.values():
        if target.elf_machine == machine:
            return target
    raise ValueError(f"{elf}: ELF machine {machine} is none of the QEMU targets ({', '.join(MACHINES)})")


__all__ = ["CORTEX_M3", "RISCV32", "MACHINES", "QemuMachine", "Toolchain", "get_machine", "target_of_elf"]
