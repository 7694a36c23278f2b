"""Paths shared by the spec tests (a uniquely named module: `conftest` is ambiguous)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOLSPEC = REPO / "toolspec"
SCHEMA_PATH = TOOLSPEC / "toolspec.schema.json"
EXAMPLE_SPECS = sorted(TOOLSPEC.glob("*.yaml"))
