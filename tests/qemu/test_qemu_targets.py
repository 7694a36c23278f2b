"""The QEMU target table without building anything: targets from ELF headers, and the one
line that names the apt package when a toolchain or an emulator is missing."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from qemu_uart_driver import DEFAULT_SPEC, copy_spec

from mcpgen.codegen import cli
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.run.console import runnable_targets
from mcpgen.codegen.run.run_qemu import QemuError, run_qemu_session, start
from mcpgen.codegen.targets.qemu import build_qemu
from mcpgen.codegen.targets.qemu_machines import CORTEX_M3, MACHINES, RISCV32, get_machine, target_of_elf


def _elf_header(path: Path, machine: int) -> Path:
    """The first 20 bytes of a little-endian ELF32 executable for ``machine``."""
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)  # ELFCLASS32, little-endian, version 1
    header = ident + (2).to_bytes(2, "little") + machine.to_bytes(2, "little")  # ET_EXEC, e_machine
    path.write_bytes(header + bytes(64))
    return path


def test_cli_offers_every_qemu_target() -> None:
    from mcpgen.codegen.targets import registry

    assert set(MACHINES) <= set(registry.names())
    assert set(MACHINES) <= set(runnable_targets())
    args = cli.build_parser().parse_args(["run", "spec.yaml", "--target", "qemu-riscv32"])
    assert args.target == "qemu-riscv32"


def test_target_comes_from_the_elf_header(tmp_path: Path) -> None:
    assert target_of_elf(_elf_header(tmp_path / "a.elf", 40)) is CORTEX_M3
    assert target_of_elf(_elf_header(tmp_path / "r.elf", 243)) is RISCV32
    with pytest.raises(ValueError, match="ELF machine 62 is none of the QEMU targets"):
        target_of_elf(_elf_header(tmp_path / "x86.elf", 62))
    (tmp_path / "text.elf").write_text("not an image at all")
    with pytest.raises(ValueError, match="is not an ELF image"):
        target_of_elf(tmp_path / "text.elf")
    with pytest.raises(ValueError, match="expected one of qemu, qemu-riscv32"):
        get_machine("qemu-mips")


@pytest.mark.parametrize("target", sorted(MACHINES))
def test_missing_toolchain_is_one_line_naming_the_packages(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = MACHINES[target]
    monkeypatch.setenv(t.toolchain.prefix_env, "no-such-prefix-")
    spec = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    with pytest.raises(BuildError) as info:
        build_qemu(spec, tmp_path / "out", target=target, log=lambda _: None)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("no-such-prefix-g++ not found")
    assert f"apt-get install {t.toolchain.apt_packages}" in message and t.toolchain.prefix_env in message


def test_missing_emulator_is_one_line_naming_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elf = _elf_header(tmp_path / "fw.elf", 243)
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing to find
    with pytest.raises(QemuError) as info:
        start(elf, workdir=tmp_path / "run")
    assert str(info.value) == (
        "qemu-system-riscv32 not found: install it (Debian/Ubuntu: apt-get install qemu-system-misc)"
    )
    out: list[str] = []
    assert run_qemu_session(DEFAULT_SPEC, tmp_path / "out", target="qemu-riscv32", log=out.append) == 1
    assert out == ["error: " + str(info.value)]


@pytest.mark.parametrize("target", sorted(MACHINES))
def test_missing_c_library_is_one_line_naming_the_packages(target: str, tmp_path: Path) -> None:
    t = MACHINES[target]
    if shutil.which(t.toolchain.prefix + "gcc") is None:
        pytest.skip(f"{t.toolchain.prefix}gcc not installed")
    t.toolchain.check_libraries()  # the real library is there: no error
    # The same toolchain asking for a specs file no package installs.
    toolchain = dataclasses.replace(t.toolchain, required_files=("nosuchlib.specs",))
    broken = dataclasses.replace(t, toolchain=toolchain)
    spec = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    with pytest.raises(BuildError) as info:
        build_qemu(spec, tmp_path / "out", target=broken, log=lambda _: None)
    assert str(info.value) == (
        f"nosuchlib.specs not found by {t.toolchain.prefix}gcc: install the C library "
        f"(Debian/Ubuntu: apt-get install {t.toolchain.apt_packages})"
    )
