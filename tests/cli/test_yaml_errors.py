"""`codegen check` on YAML with syntax mistakes: the line of the mistake, an excerpt with a
caret under it, and a hint (PyYAML alone points at the line after some mistakes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_testlib import codegen

GOOD = "device:\n  name: lamp\n  version: '1'\ntools:\n  - name: self.on\n    description: On.\n"


@pytest.mark.parametrize(
    ("broken", "bad_line", "caret_col", "hint"),
    [
        # A key without its colon: PyYAML notices on the next line.
        (GOOD.replace("  version: '1'", "  version '1'"), "  version '1'", 3, "add the colon"),
        # A quote opened and never closed: noticed at the end of the file.
        (
            GOOD.replace("description: On.", "description: 'On."),
            "    description: 'On.",
            18,
            "close the quote",
        ),
        # An unclosed flow mapping: noticed on the next line.
        (
            GOOD.replace("description: On.", "params: {x: {type: integer}\n    description: On."),
            "    params: {x: {type: integer}",
            13,
            "close the `{`",
        ),
        # A line indented one space too little: PyYAML is right here, and we keep it.
        (
            GOOD.replace("    description: On.", "   description: On."),
            "   description: On.",
            4,
            "indentation",
        ),
    ],
    ids=["no-colon", "open-quote", "open-brace", "bad-indent"],
)
def test_syntax_error_points_at_the_mistake_with_an_excerpt(
    tmp_path: Path, broken: str, bad_line: str, caret_col: int, hint: str
) -> None:
    spec = tmp_path / "lamp.yaml"
    spec.write_text(broken)
    line = broken.splitlines().index(bad_line) + 1
    proc = codegen("check", str(spec))
    assert proc.returncode == 1
    err = proc.stderr
    assert f"{spec}:{line}:{caret_col}: YAML syntax error" in err, err
    rows = err.splitlines()
    source_row = next(i for i, r in enumerate(rows) if r.startswith(f"  {line} | "))
    assert rows[source_row] == f"  {line} | {bad_line}"
    caret = rows[source_row + 1]
    assert caret.endswith("^") and caret.index("^") == len(f"  {line} | ") + caret_col - 1, err
    assert f"  {line - 1} | " in err, "the line before is shown too"
    assert "hint:" in err and hint in err
    assert "Traceback" not in err
