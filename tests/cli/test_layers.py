"""The packages import only downward (docs/architecture.md, "Who may import what"), and
the runtime never imports the generator: the import-linter contracts in ``.importlinter``,
checked here as ``scripts/dev.sh test`` checks them with ``lint-imports``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_import_contract_is_kept() -> None:
    # In a child process: import-linter's in-process run leaves the logging module
    # configured (caplog in later tests then captured nothing).
    proc = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports; "
         "raise SystemExit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert "BROKEN" not in report and "KEPT" in report, report
