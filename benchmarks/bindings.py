"""The generated Python bindings of desk-lamp, as the benchmarks use them.

``codegen.targets.python.build_bindings`` generates the ``desk_lamp_tools`` package into
``build/benchmarks/bindings/python`` and compiles it; the per-tool argument builder
``args_light_set_rgb(b, g, r)`` (what ``DeskLamp(device).light.set_rgb(...)`` runs before
``Device.invoke``) is the validator that is timed. The pure-Python copy comes from the
same ``.py`` through :func:`benchmarks.purepy.import_pure`. If the bindings generator is
unavailable, an equivalent validator is assembled from the runtime's ``check_int`` and
the report says so.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

from benchmarks.purepy import is_compiled

Log = Callable[[str], None]
# Parameters in spec order (sorted by name): b, g, r.
Validator = Callable[[Any, Any, Any], dict]
PACKAGE = "desk_lamp_tools"
MODULE = "desk_lamp_tools._bindings"
REPO = Path(__file__).resolve().parent.parent


@dataclass
class Bindings:
    set_rgb_validator: Validator
    validator_label: str
    module: Optional[ModuleType] = None
    compiled: bool = False

    def describe(self) -> dict[str, Any]:
        return {
            "validator": self.validator_label,
            "module": getattr(self.module, "__file__", None) if self.module else None,
            "compiled": self.compiled,
        }


def fallback(validate_mod: ModuleType) -> Bindings:
    check_int = validate_mod.check_int

    def set_rgb(b: Any, g: Any, r: Any) -> dict:
        return {
            "b": check_int("b", b, 0, 255),
            "g": check_int("g", g, 0, 255),
            "r": check_int("r", r, 0, 255),
        }

    return Bindings(set_rgb, "runtime.core.validate.check_int x3 (generated bindings not available)")


def from_module(mod: ModuleType) -> Bindings:
    compiled = is_compiled(mod)
    label = f"generated `{PACKAGE}.args_light_set_rgb` ({'compiled' if compiled else 'pure Python'})"
    return Bindings(mod.args_light_set_rgb, label, mod, compiled)


def build(log: Log, build_root: Optional[Path] = None) -> Optional[Path]:
    """Generates and compiles the desk-lamp bindings; returns the directory to import from."""
    try:
        from mcpgen.codegen.targets.python import build_bindings
    except ImportError:
        return None
    outdir = (build_root or REPO / "build" / "benchmarks" / "bindings").resolve()
    spec = REPO / "toolspec" / "desk_lamp.yaml"
    try:
        return Path(build_bindings(spec, outdir, log=lambda m: None, compile=True))
    except Exception as exc:  # noqa: BLE001 - the fallback validator is used and reported
        log(f"  WARNING: building the desk-lamp bindings failed: {exc}")
        return None


def load_compiled(log: Log) -> tuple[Optional[ModuleType], Bindings, Optional[Path]]:
    pydir = build(log)
    if pydir is None:
        return None, fallback(importlib.import_module("mcpgen.runtime.core.validate")), None
    if str(pydir) not in sys.path:
        sys.path.insert(0, str(pydir))
    mod = importlib.import_module(MODULE)
    return mod, from_module(mod), pydir
