"""Paths and helpers shared by the device tests (imported by name, not via conftest)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import ModuleType

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import worst_case_page_bytes

REPO = Path(__file__).resolve().parents[2]
TOOLSPEC = REPO / "toolspec"
DEFAULT_SPEC = TOOLSPEC / "default_device.yaml"
LAMP_SPEC = TOOLSPEC / "desk_lamp.yaml"


#: The host simulators this session built, by spec (its path and text): every folder that runs
#: an unchanged spec's simulator (tests/device, tests/e2e, tests/console, tests/mqtt) shares one
#: build instead of each compiling its own. Nothing writes into a build once made.
_HOST_BUILDS: dict[tuple[Path, bytes], Path] = {}


def host_simulator(spec_path: Path, out: Path) -> Path:
    """The host simulator of ``spec_path``, compiled into ``out`` unless this session
    compiled the same spec already (then that executable, wherever it is)."""
    from mcpgen.codegen.targets.host import build_host

    key = (spec_path.resolve(), spec_path.read_bytes())
    if key not in _HOST_BUILDS:
        _HOST_BUILDS[key] = build_host(spec_path, out, log=lambda _m: None)
    return _HOST_BUILDS[key]


#: The bindings modules this session built and imported, by spec and build (compiled or not):
#: tests/e2e, tests/console and tests/mqtt share them (a compiled module cannot be imported
#: twice from one file anyway, so the module object is what is shared).
_BINDINGS: dict[tuple[Path, bytes, bool], ModuleType] = {}


def bindings_module(spec_path: Path, out: Path, *, compile: bool) -> ModuleType:
    """The imported bindings of ``spec_path``, built into ``out`` unless this session built
    the same spec the same way already (then that module)."""
    from mcpgen.codegen.spec.names import device_slug
    from mcpgen.codegen.targets.python import build_bindings, import_bindings

    key = (spec_path.resolve(), spec_path.read_bytes(), compile)
    if key not in _BINDINGS:
        pydir = build_bindings(spec_path, out, log=lambda _m: None, compile=compile)
        _BINDINGS[key] = import_bindings(pydir, f"{device_slug(load_spec(spec_path).device.name)}_tools")
    return _BINDINGS[key]


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
