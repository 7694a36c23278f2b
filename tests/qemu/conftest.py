"""Builds the example specs for each emulated MCU once per session and boots them.

Every image fixture depends on ``qemu_target``, which is parametrized by the QEMU
targets (``qemu``: Cortex-M3, ``qemu-riscv32``: RV32IMC), so each test that boots an
image runs once per target. The fixtures mirror tests/device/conftest.py (same names),
so the host conformance suite runs against QEMU unchanged (see test_qemu_conformance.py).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_testlib import small_page_spec as make_small_page_spec  # noqa: E402
from qemu_uart_driver import DEFAULT_SPEC, LAMP_SPEC, TOOLSPEC, QemuSim, copy_spec  # noqa: E402,F401

from mcpgen.codegen.targets.qemu import build_qemu  # noqa: E402
from mcpgen.codegen.targets.qemu_machines import MACHINES, QemuMachine  # noqa: E402


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="session", params=sorted(MACHINES))
def qemu_target(request: pytest.FixtureRequest) -> QemuMachine:
    return MACHINES[request.param]


@pytest.fixture(scope="session")
def qemu_toolchain(qemu_target: QemuMachine) -> QemuMachine:
    """The target, once its QEMU and cross toolchain are known to be installed: skips
    (locally) or fails (in CI) when one is missing."""
    tools = (qemu_target.qemu, qemu_target.toolchain.prefix + "g++")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        packages = f"{qemu_target.qemu_apt_package} {qemu_target.toolchain.apt_packages}"
        msg = f"{', '.join(missing)} not installed (apt-get install {packages})"
        if os.environ.get("CI"):
            pytest.fail(msg + " -- required in CI")
        pytest.skip(msg)
    return qemu_target


@pytest.fixture(scope="session")
def default_sim_exe(qemu_toolchain: QemuMachine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"{qemu_toolchain.name}_default")
    return build_qemu(DEFAULT_SPEC, out, target=qemu_toolchain, log=_quiet)


@pytest.fixture(scope="session")
def lamp_sim_exe(qemu_toolchain: QemuMachine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"{qemu_toolchain.name}_lamp")
    return build_qemu(LAMP_SPEC, out, target=qemu_toolchain, log=_quiet)


@pytest.fixture(scope="session")
def small_page_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_small_page_spec(tmp_path_factory.mktemp("qemu_small_page_spec"))


@pytest.fixture(scope="session")
def small_page_exe(
    qemu_toolchain: QemuMachine, small_page_spec: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp(f"{qemu_toolchain.name}_small_page")
    return build_qemu(small_page_spec, out, target=qemu_toolchain, log=_quiet)


@pytest.fixture(scope="session")
def tiny_buffers_exe(qemu_toolchain: QemuMachine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = copy_spec(DEFAULT_SPEC, tmp_path_factory.mktemp("qemu_tiny_spec"))
    return build_qemu(
        spec,
        tmp_path_factory.mktemp(f"{qemu_toolchain.name}_tiny"),
        target=qemu_toolchain,
        log=_quiet,
        defines={"MCPGEN_RESPONSE_BUFFER_SIZE": "512", "MCPGEN_REQUEST_BUFFER_SIZE": "256"},
    )


@pytest.fixture
def sim(default_sim_exe: Path, tmp_path: Path) -> Iterator[QemuSim]:
    s = QemuSim(default_sim_exe, tmp_path)
    yield s
    s.close()


@pytest.fixture
def lamp(lamp_sim_exe: Path, tmp_path: Path) -> Iterator[QemuSim]:
    s = QemuSim(lamp_sim_exe, tmp_path)
    yield s
    s.close()
