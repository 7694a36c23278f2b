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

    def format(self) -> str:
        """``file:line:col: path: message`` plus an indented ``hint:`` line when there is one."""
        where = self.file
        if self.line > 0:
            where += f":{self.line}:{self.column}"
        head = f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
        return f"{head}\n  hint: {self.hint}" if self.hint else head

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


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"did you mean `description`?"`` for the closest candidate, or "" if none is close."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else ""
