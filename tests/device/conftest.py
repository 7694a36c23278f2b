"""Builds the example specs' simulators once per session (host g++ build via build_host)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from device_sim_driver import StdioSim  # noqa: E402
from device_testlib import DEFAULT_SPEC, LAMP_SPEC, REPO, TOOLSPEC, copy_spec, host_simulator  # noqa: E402,F401
from device_testlib import small_page_spec as make_small_page_spec  # noqa: E402

from mcpgen.codegen.targets.host import build_host  # noqa: E402


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="session")
def default_sim_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return host_simulator(DEFAULT_SPEC, tmp_path_factory.mktemp("build_default"))


@pytest.fixture(scope="session")
def lamp_sim_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return host_simulator(LAMP_SPEC, tmp_path_factory.mktemp("build_lamp"))


@pytest.fixture(scope="session")
def small_page_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_small_page_spec(tmp_path_factory.mktemp("small_page_spec"))


@pytest.fixture(scope="session")
def small_page_exe(small_page_spec: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(small_page_spec, tmp_path_factory.mktemp("build_small_page"), log=_quiet)


@pytest.fixture(scope="session")
def tiny_buffers_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default device with a 512-byte response buffer and 256-byte request buffer."""
    spec = copy_spec(DEFAULT_SPEC, tmp_path_factory.mktemp("tiny_spec"))
    return build_host(
        spec,
        tmp_path_factory.mktemp("build_tiny"),
        log=_quiet,
        extra_flags=("-DMCPGEN_RESPONSE_BUFFER_SIZE=512", "-DMCPGEN_REQUEST_BUFFER_SIZE=256"),
    )


@pytest.fixture
def sim(default_sim_exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(default_sim_exe, tmp_path)
    yield s
    s.close()


@pytest.fixture
def lamp(lamp_sim_exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(lamp_sim_exe, tmp_path)
    yield s
    s.close()
