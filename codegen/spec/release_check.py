"""The spec against its last release: what ``codegen check`` and ``codegen release`` enforce.

A breaking change since the last released version is an error unless ``device.version``'s
major number was raised (semver; ESPHome's API major does the same): devices in the field
keep the old version, and the major number is how backends and people tell them apart.
"""

from __future__ import annotations

from pathlib import Path

from mcpgen.codegen.spec.evolution import LocatedChange, diff_specs, locate_changes
from mcpgen.codegen.spec.history import Release, major
from mcpgen.codegen.spec.locate import SpecLocator, read_text
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.spec_errors import SpecError, excerpt


def next_major(version: str) -> str:
    return f"{major(version) + 1}.0.0"


def changes_since(spec: Spec, spec_path: str | Path, last: Release) -> list[LocatedChange]:
    """Every change from ``last`` to ``spec``, located in the spec file."""
    return locate_changes(diff_specs(last.spec, spec), SpecLocator(str(spec_path), read_text(str(spec_path))))


def breaking_errors(spec: Spec, spec_path: str | Path, last: Release) -> list[SpecError]:
    """One located error per breaking change since ``last``; [] when there is none or when
    ``device.version``'s major number is above the release's."""
    if major(spec.device.version) > major(last.version):
        return []
    text = read_text(str(spec_path))
    errors = []
    for lc in changes_since(spec, spec_path, last):
        if not lc.change.breaking:
            continue
        c = lc.change
        hint = (
            f"raise device.version's major number ({spec.device.version} -> "
            f"{next_major(last.version)}) to release a breaking version, or undo the change"
            + (f"; {c.hint}" if c.hint else "")
        )
        errors.append(
            SpecError(
                lc.file,
                lc.line,
                lc.column,
                c.path,
                f"breaking change since release {last.version}: {c.what} ({c.reason})",
                hint,
                excerpt(text, lc.line, lc.column),
            )
        )
    return errors


__all__ = ["breaking_errors", "changes_since", "next_major"]
