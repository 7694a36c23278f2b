"""Fixtures of the web console tests: the real simulators (built as tests/e2e builds them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The simulators are built by the end-to-end tests' helper (one definition of "build a device").
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from e2e_testlib import REPO, Built, build  # noqa: E402


@pytest.fixture(scope="session")
def built_default(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(
        "default_device", REPO / "toolspec" / "default_device.yaml", tmp_path_factory.mktemp("default")
    )


@pytest.fixture(scope="session")
def built_lamp(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build("desk_lamp", REPO / "toolspec" / "desk_lamp.yaml", tmp_path_factory.mktemp("lamp"))
