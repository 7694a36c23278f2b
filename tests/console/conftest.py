"""Fixtures of the web console tests: the real simulators (built as tests/e2e builds them)."""

from __future__ import annotations

import pytest

# The simulators are built by the end-to-end tests' helper (one definition of "build a
# device"; pytest.ini puts tests/e2e on the path).
from e2e_testlib import REPO, Built, build


@pytest.fixture(scope="session")
def built_default(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(
        "default_device", REPO / "toolspec" / "default_device.yaml", tmp_path_factory.mktemp("default")
    )


@pytest.fixture(scope="session")
def built_lamp(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build("desk_lamp", REPO / "toolspec" / "desk_lamp.yaml", tmp_path_factory.mktemp("lamp"))
