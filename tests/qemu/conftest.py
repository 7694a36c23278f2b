"""Builds the example specs for the emulated Cortex-M3 once per session and boots them.

The fixtures mirror tests/device/conftest.py (same names), so the host conformance
suite runs against QEMU unchanged (see test_qemu_conformance.py).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_testlib import small_page_spec as make_small_page_spec  # noqa: E402
from qemu_uart_driver import DEFAULT_SPEC, LAMP_SPEC, TOOLSPEC, QemuSim, copy_spec  # noqa: E402,F401

from mcpgen.codegen.build_qemu import build_qemu  # noqa: E402

REQUIRED_TOOLS = ("qemu-system-arm", "arm-none-eabi-g++")


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="session")
def qemu_toolchain() -> None:
    """Skips (locally) or fails (in CI) when QEMU or the Arm toolchain is missing."""
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        msg = (
            f"{', '.join(missing)} not installed (apt-get install qemu-system-arm gcc-arm-none-eabi "
            "libstdc++-arm-none-eabi-newlib)"
        )
        if os.environ.get("CI"):
            pytest.fail(msg + " -- required in CI")
        pytest.skip(msg)


@pytest.fixture(scope="session")
def default_sim_exe(qemu_toolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qemu(DEFAULT_SPEC, tmp_path_factory.mktemp("qemu_default"), log=_quiet)


@pytest.fixture(scope="session")
def lamp_sim_exe(qemu_toolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qemu(LAMP_SPEC, tmp_path_factory.mktemp("qemu_lamp"), log=_quiet)


@pytest.fixture(scope="session")
def small_page_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_small_page_spec(tmp_path_factory.mktemp("qemu_small_page_spec"))


@pytest.fixture(scope="session")
def small_page_exe(qemu_toolchain, small_page_spec: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qemu(small_page_spec, tmp_path_factory.mktemp("qemu_small_page"), log=_quiet)


@pytest.fixture(scope="session")
def tiny_buffers_exe(qemu_toolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = copy_spec(DEFAULT_SPEC, tmp_path_factory.mktemp("qemu_tiny_spec"))
    return build_qemu(
        spec,
        tmp_path_factory.mktemp("qemu_tiny"),
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
