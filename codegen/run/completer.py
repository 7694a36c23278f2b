"""Tab completion and "did you mean" for the interactive console (``codegen run -i``).

Completion is readline's (the console already edits lines with it); this module only
decides the candidates, so it is tested without a terminal:

* the first word: the console's commands and the device's tool names;
* after ``call`` or ``schema``: tool names;
* after a tool name (``NAME`` or ``call NAME``): its parameters as ``name=``, those not
  yet given.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional

from mcpgen.codegen.spec.spec_errors import did_you_mean

COMMANDS = ("tools", "schema", "call", "ping", "log", "help", "quit")
TAKES_A_TOOL = ("call", "schema")
# Tool names hold dots and dashes: only whitespace separates words for completion.
DELIMITERS = " \t\n"


def suggestion(word: str, names: Iterable[str]) -> str:
    """``"; did you mean `x`?"`` for the closest name, or "" when none is close."""
    hint = did_you_mean(word, names)
    return f"; {hint}" if hint else ""


class ConsoleCompleter:
    """Candidates for the word being typed. ``params`` maps each tool to its parameter names;
    ``update`` replaces it when the device (re)connects."""

    def __init__(self, params: Optional[Mapping[str, Sequence[str]]] = None) -> None:
        self.params: dict[str, tuple[str, ...]] = {}
        self._matches: list[str] = []
        self.update(params or {})

    def update(self, params: Mapping[str, Sequence[str]]) -> None:
        self.params = {name: tuple(p) for name, p in params.items()}

    @classmethod
    def for_tools(cls, tools: Iterable[Any]) -> ConsoleCompleter:
        """From the runtime's tool objects (``name``, ``input_schema``)."""
        return cls({t.name: sorted(t.input_schema.get("properties", {})) for t in tools})

    def candidates(self, line: str) -> list[str]:
        """What may replace the last (partial) word of ``line``, sorted."""
        try:
            words = shlex.split(line)
        except ValueError:  # an open quote: inside a value, nothing to offer
            return []
        if line and not line[-1].isspace() and words:
            prefix, done = words[-1], words[:-1]
        else:
            prefix, done = "", words
        if not done:
            pool: Iterable[str] = [*COMMANDS, *self.params]
        elif len(done) == 1 and done[0] in TAKES_A_TOOL:
            pool = self.params
        else:
            tool = done[1] if done[0] == "call" and len(done) > 1 else done[0]
            given = {w.split("=", 1)[0] for w in done[1:] if "=" in w}
            pool = [f"{p}=" for p in self.params.get(tool, ()) if p not in given]
        return sorted(c for c in pool if c.startswith(prefix))

    def complete(self, text: str, state: int) -> Optional[str]:
        """readline's completer protocol: the ``state``-th candidate for ``text``."""
        if state == 0:
            import readline

            # Python's readline appends nothing to a completion: a finished word gets its
            # space here; `name=` is left open for the value.
            found = self.candidates(readline.get_line_buffer()[: readline.get_endidx()])
            self._matches = [c if c.endswith("=") else c + " " for c in found]
        return self._matches[state] if state < len(self._matches) else None
