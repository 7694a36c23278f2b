"""Where the data that ships inside the package lives: firmware sources and the spec format.

The wheel installs the repository's ``firmware_template/`` and ``toolspec/`` folders as
``mcpgen/firmware_template`` and ``mcpgen/toolspec``; an editable install links them to
the same places. Paths are taken from the package location without resolving symlinks,
so the editable link tree works as the installed copy does.
"""

from __future__ import annotations

import os
from pathlib import Path

# mcpgen.codegen and the data beside it come from the `mcpgen` distribution; the
# `mcpgen` package itself may be found first on another sys.path entry (mcpgen-runtime).
PACKAGE_ROOT = Path(__file__).parent.parent


def firmware_template() -> Path:
    """The firmware tree (core, ports, PlatformIO templates); ``MCPGEN_FIRMWARE_TEMPLATE`` overrides it."""
    override = os.environ.get("MCPGEN_FIRMWARE_TEMPLATE")
    return Path(override) if override else PACKAGE_ROOT / "firmware_template"


def toolspec_dir() -> Path:
    """The spec format: JSON Schema, reference and example specs with their handlers."""
    return PACKAGE_ROOT / "toolspec"


def spec_schema() -> Path:
    """``toolspec.schema.json``, the editor schema of the YAML format."""
    return toolspec_dir() / "toolspec.schema.json"


def example_spec(name: str) -> Path:
    """An example spec that ships with the package, by file stem (``default_device``)."""
    return toolspec_dir() / f"{name}.yaml"
