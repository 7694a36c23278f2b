"""The packages import only downward (docs/architecture.md, "Who may import what"), and
the runtime never imports the generator: the import-linter contracts in ``.importlinter``,
checked here as ``scripts/dev.sh test`` checks them with ``lint-imports``."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_import_contract_is_kept() -> None:
    # In a child process: import-linter's in-process run leaves the logging module
    # configured (caplog in later tests then captured nothing).
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports; "
            "raise SystemExit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert "BROKEN" not in report and "KEPT" in report, report


def _contract_layers(name: str) -> set[str]:
    """The module names a layers contract of ``.importlinter`` lists (``a | b`` counts both)."""
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter")
    section = parser[f"importlinter:contract:{name}"]
    rows = section["layers"].split("\n")
    return {part.strip() for row in rows for part in row.split("|") if part.strip()}


def _modules(folder: Path) -> set[str]:
    """Every module and package under ``folder``, dotted and relative to it (``core.wire``)."""
    found = set()
    for path in folder.rglob("*.py"):
        parts = path.relative_to(folder).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and parts[-1] != "__main__":
            found.add(".".join(parts))
    return found


def _covered(module: str, layers: set[str]) -> bool:
    """A module is placed when it, or a package above it, is a layer."""
    parts = module.split(".")
    return any(".".join(parts[:i]) in layers for i in range(1, len(parts) + 1))


def test_every_runtime_module_is_on_a_layer() -> None:
    layers = _contract_layers("runtime-layers")
    # the floors: their modules are the layers
    folders = {"core", "session", "links", "links.websocket", "links.mqtt"}
    unplaced = sorted(m for m in _modules(REPO / "runtime") - folders if not _covered(m, layers))
    assert not unplaced, f"put these on a layer of runtime-layers in .importlinter: {unplaced}"


def test_every_generator_module_is_on_a_layer() -> None:
    layers = _contract_layers("generator-layers")
    unplaced = sorted(m for m in _modules(REPO / "codegen") if not _covered(m, layers))
    assert not unplaced, f"put these on a layer of generator-layers in .importlinter: {unplaced}"


def test_every_emitter_is_on_a_layer() -> None:
    layers = _contract_layers("emitters")
    unplaced = sorted(m for m in _modules(REPO / "codegen" / "emit") if not _covered(m, layers))
    assert not unplaced, f"put these on a layer of emitters in .importlinter: {unplaced}"
