"""Upstream rows of the device section: placeholder until the shimmed build lands."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def run(root: Path, scales: Sequence[int], log: Callable[[str], None]) -> dict[str, Any]:
    return {"skipped": "not implemented yet"}
