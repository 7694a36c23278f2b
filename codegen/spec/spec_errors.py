"""Errors found in a spec file, each with its position, field path and a suggested fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SpecError:
    """One problem in a spec file.

    ``line`` and ``column`` are 1-based; 0 means the position is unknown (for example the
    file could not be read). ``path`` is the field path such as
    ``tools[3].params.volume.max`` ("" for problems that are not about one field).
    """

    file: str
    line: int
    column: int
    path: str
    message: str
    hint: str = ""
    excerpt: str = ""  # the source lines around the position, with a caret (see ``excerpt``)

    def format(self) -> str:
        """``file:line:col: path: message``, the excerpt, and an indented ``hint:`` line."""
        where = self.file
        if self.line > 0:
            where += f":{self.line}:{self.column}"
        head = f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
        lines = [head]
        if self.excerpt:
            lines.append(self.excerpt)
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


class SpecErrors(Exception):
    """Raised by ``load_spec`` when a spec is invalid; ``errors`` holds every problem found."""

    def __init__(self, errors: Iterable[SpecError]) -> None:
        self.errors: list[SpecError] = list(errors)
        super().__init__(self.errors)

    def __str__(self) -> str:
        n = len(self.errors)
        head = f"{n} error{'s' if n != 1 else ''} in spec"
        return "\n".join([head, *(e.format() for e in self.errors)])


#: Characters of a source line an excerpt shows at most.
EXCERPT_WIDTH = 120


def excerpt(text: str, line: int, column: int, before: int = 1, after: int = 1) -> str:
    """Lines ``line-before .. line+after`` of ``text`` with numbers, and a caret under ``column``.

    ``line`` and ``column`` are 1-based; "" when ``line`` is outside the text. Tabs are
    shown as one space so the caret lines up with the character it points at.
    """
    rows = text.splitlines()
    if line == len(rows) + 1:  # an error at the very end of the file: just past the last line
        rows.append("")
    if not 1 <= line <= len(rows):
        return ""
    first, last = max(1, line - before), min(len(rows), line + after)
    width = len(str(last))
    # A line longer than EXCERPT_WIDTH (a 5000-digit number, a minified blob) is shown as a
    # window around the column, so an error message stays a few lines long.
    start = 0
    if any(len(rows[n - 1]) > EXCERPT_WIDTH for n in range(first, last + 1)):
        start = max(0, column - 1 - EXCERPT_WIDTH // 2)
    out = []
    for n in range(first, last + 1):
        row = rows[n - 1].replace(chr(9), " ")
        shown = row[start : start + EXCERPT_WIDTH]
        if start > 0 and row:
            shown = "..." + shown
        if len(row) > start + EXCERPT_WIDTH:
            shown += "..."
        out.append(f"  {n:>{width}} | {shown}".rstrip())
        if n == line:
            pad = column - 1 - start + (3 if start > 0 else 0)
            out.append(f"  {'':>{width}} | {' ' * max(0, pad)}^")
    return "\n".join(out)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"did you mean `description`?"`` for the closest candidate, or "" if none is close."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else ""
