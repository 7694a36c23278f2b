"""The generator's packages import only downward (docs/architecture.md, "Who may import what"),
and the runtime never imports the generator."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# package folder -> imports it must not make (anywhere in a module, or only at module level)
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "codegen/spec": ("mcpgen.codegen.emit", "mcpgen.codegen.targets", "mcpgen.codegen.run",
                     "mcpgen.codegen.cli", "mcpgen.runtime"),
    "codegen/emit": ("mcpgen.codegen.targets", "mcpgen.codegen.run", "mcpgen.codegen.cli", "mcpgen.runtime"),
    "codegen/targets": ("mcpgen.codegen.cli",),
    "codegen/run": ("mcpgen.codegen.cli",),
    "runtime": ("mcpgen.codegen",),
}
# Imports a package may make only inside a function (a target boots itself through run/).
LAZY_ONLY: dict[str, tuple[str, ...]] = {"codegen/targets": ("mcpgen.codegen.run",)}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module imported, at module level?) for every import of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(f"{node.module}.{alias.name}", id(node) in top) for alias in node.names]
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_packages_import_only_downward(package: str) -> None:
    bad = []
    for path in sorted((REPO / package).rglob("*.py")):
        for name, module_level in _imports(path):
            refused = FORBIDDEN[package] + (LAZY_ONLY.get(package, ()) if module_level else ())
            if any(name == f or name.startswith(f + ".") for f in refused):
                bad.append(f"{path.relative_to(REPO)} imports {name}")
    assert not bad, "\n".join(bad)
