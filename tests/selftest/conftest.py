"""The host simulators of the example specs, built once per session (the fake device and the
fake ESP-IDF tools are in selftest_testlib.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from device_testlib import DEFAULT_SPEC, LAMP_SPEC, small_page_spec

from mcpgen.codegen.targets.host import build_host


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="session")
def default_sim_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(DEFAULT_SPEC, tmp_path_factory.mktemp("selftest_default"), log=_quiet)


@pytest.fixture(scope="session")
def lamp_sim_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(LAMP_SPEC, tmp_path_factory.mktemp("selftest_lamp"), log=_quiet)


@pytest.fixture(scope="session")
def paged_spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """default_device.yaml with the smallest page size every tool fits in (several pages)."""
    return small_page_spec(tmp_path_factory.mktemp("selftest_paged"))
