"""Golden files: the generated output of the example specs, byte for byte.

After an intended change to an emitter, refresh them with
``UPDATE_GOLDEN=1 python -m pytest tests/cli/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import docs as emit_docs
from mcpgen.codegen.emit import python as emit_python
from mcpgen.codegen.spec.loader import load_spec

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
EXAMPLES = ["default_device", "desk_lamp"]


def generated(name: str) -> dict[str, str]:
    # A relative source path, so the banner is the same on every machine.
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        spec = load_spec(Path("toolspec") / f"{name}.yaml")
    finally:
        os.chdir(cwd)
    files: dict[str, str] = {}
    for emitter in (emit_cpp, emit_python, emit_docs):
        files.update(emitter.emit(spec))
    return files


@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_output_matches_golden(name: str) -> None:
    files = generated(name)
    root = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert on_disk == set(files), "generated file set changed; run with UPDATE_GOLDEN=1 and review"
    for rel, text in files.items():
        assert (root / rel).read_text(encoding="utf-8") == text, f"{name}/{rel} differs from golden"


@pytest.mark.parametrize("name", EXAMPLES)
def test_generation_is_deterministic(name: str) -> None:
    assert generated(name) == generated(name)
