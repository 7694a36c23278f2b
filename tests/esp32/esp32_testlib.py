"""Helpers of the ESP32 tests: paths and tool availability (skip locally, fail in CI)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLSPEC = REPO / "toolspec"


def require(module: str, what: str) -> None:
    """Skips when ``module`` is not importable, unless CI is set: then the test fails."""
    if importlib.util.find_spec(module) is None:
        msg = f"{what} is not installed (pip install {what})"
        if os.environ.get("CI"):
            pytest.fail(msg + " -- required in CI")
        pytest.skip(msg)
