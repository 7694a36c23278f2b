"""The packages import only downward (docs/architecture.md, "Who may import what"), and
the runtime never imports the generator: the import-linter contracts in ``.importlinter``,
checked here as ``scripts/dev.sh test`` checks them with ``lint-imports``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

REPO = Path(__file__).resolve().parents[2]


def test_every_import_contract_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        code = lint_imports(no_cache=True, no_logo=True)  # reads .importlinter from the working folder
    finally:
        os.chdir(cwd)
    report = capsys.readouterr().out
    assert code == 0, report
    assert "BROKEN" not in report and "KEPT" in report, report
