"""Paths and helpers shared by the device tests (imported by name, not via conftest)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import worst_case_page_bytes

REPO = Path(__file__).resolve().parents[2]
TOOLSPEC = REPO / "toolspec"
DEFAULT_SPEC = TOOLSPEC / "default_device.yaml"
LAMP_SPEC = TOOLSPEC / "desk_lamp.yaml"


def copy_spec(src: Path, dest_dir: Path, text_edit=None) -> Path:
    """Copies a spec and its handlers file into dest_dir (optionally editing the YAML)."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    text = src.read_text(encoding="utf-8")
    if text_edit is not None:
        text = text_edit(text)
    dest = dest_dir / src.name
    dest.write_text(text, encoding="utf-8")
    handlers = src.parent / f"{src.stem}_handlers.cpp"
    shutil.copy(handlers, dest_dir / handlers.name)
    return dest


def small_page_spec(dest_dir: Path) -> Path:
    """default_device.yaml with page_size as small as every tool allows (>= 3 pages)."""
    spec = load_spec(DEFAULT_SPEC)
    page = max(worst_case_page_bytes(t, spec) for t in spec.tools)
    return copy_spec(
        DEFAULT_SPEC, dest_dir, lambda text: re.sub(r"page_size: \d+", f"page_size: {page}", text)
    )
