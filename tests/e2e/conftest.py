"""End-to-end fixtures: the real C++ simulator, the generated bindings, the runtime gateway."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator

import pytest
from e2e_testlib import REPO, Built, build


@pytest.fixture(scope="session")
def built_default(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(
        "default_device", REPO / "toolspec" / "default_device.yaml", tmp_path_factory.mktemp("default")
    )


@pytest.fixture(scope="session")
def built_lamp(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build("desk_lamp", REPO / "toolspec" / "desk_lamp.yaml", tmp_path_factory.mktemp("lamp"))


@pytest.fixture(scope="session")
def built_small_pages(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The default device with pages so small that tools/list needs several."""
    work = tmp_path_factory.mktemp("pages")
    text = (REPO / "toolspec" / "default_device.yaml").read_text()
    spec_path = work / "paged_device.yaml"
    spec_path.write_text(
        text.replace("page_size: 8000", "page_size: 1200").replace("name: xiaozhi-sim", "name: paged-sim")
    )
    shutil.copy(REPO / "toolspec" / "default_device_handlers.cpp", work / "paged_device_handlers.cpp")
    return build("paged", spec_path, work / "out")


@pytest.fixture
def token() -> str:
    return secrets.token_hex(8)


@pytest.fixture(autouse=True)
def _compiled_build_really_used() -> Iterator[None]:
    """CI sets MCPGEN_EXPECT_COMPILED: the suite must run on the build it claims."""
    expect = os.environ.get("MCPGEN_EXPECT_COMPILED")
    if expect is not None:
        from mcpgen import runtime

        assert runtime.COMPILED == (expect == "1"), f"runtime.COMPILED={runtime.COMPILED}, expected {expect}"
    yield
