"""docs/benchmarks.md is what the renderer makes of docs/benchmarks.json and the hand-kept
section files (benchmarks/*.md): text added to the page alone would be lost by the next
``python -m benchmarks`` run or ``--render``."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import report

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_page_is_the_rendered_report() -> None:
    data = json.loads((DOCS / "benchmarks.json").read_text())
    rendered = report.render(data).rstrip("\n").splitlines()
    page = (DOCS / "benchmarks.md").read_text().rstrip("\n").splitlines()
    missing = [line for line in page if line not in set(rendered)]
    assert not missing, (
        f"{len(missing)} line(s) of docs/benchmarks.md come from no source (first: {missing[0]!r}); "
        "put hand-kept text in its benchmarks/*.md section file and run `python -m benchmarks --render`"
    )
    assert rendered == page
