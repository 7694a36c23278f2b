"""The fenced code blocks of README.md and docs/*.md, and how a test runs them.

Every fence names its language. Blocks in ``sh``, ``console`` and ``python`` are run by
``test_doc_commands.py``; an HTML comment on the line right before a fence changes how:

* ``<!-- doc-test: skip (REASON) -->``: not run (real hardware, PlatformIO downloads, a
  fragment of a larger program); the reason is shown in the test report.
* ``<!-- doc-test: server (WHAT) -->``: the block's last command (for ``python``, the
  whole script) serves until stopped: it passes when it is still running, without a
  traceback, a few seconds after it started; the commands before it must succeed.
* ``[EXTRA]`` at the end of a marker (``<!-- doc-test: [bridge] -->``,
  ``<!-- doc-test: server (WHAT) [console] -->``): the block needs that pip extra
  (pyproject.toml). It runs as above, and once more as a pip user without it (the extra's
  modules hidden): then it must end in the one-line "install the extra" message of
  ``mcpgen.extras``, never a traceback.

A ``console`` block is a transcript: ``$ COMMAND`` lines are run, ``mcp> LINE`` lines
are fed to the command's standard input, every other line is expected output, in order
and in full, where a line ``...`` stands for any number of lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_LANGS = frozenset({"sh", "console", "python"})
MARKER_KINDS = frozenset({"skip", "server"})

_FENCE = re.compile(r"^(\s*)```(.*)$")
_MARKER = re.compile(
    r"^\s*<!--\s*doc-test:\s*(?:([a-z]+)\s*(?:\((.*)\))?)?\s*(?:\[([a-z0-9_-]+)\])?\s*-->\s*$"
)
_ANY_MARKER = re.compile(r"^\s*<!--\s*doc-test:")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text (dedented) and its marker."""

    file: str  # relative to the repository, as the docs name each other
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: str = ""  # "", "skip" or "server"
    reason: str = ""
    extra: str = ""  # the pip extra the block needs ("" for none)

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def parse(path: Path) -> tuple[list[Block], list[str]]:
    """The blocks of one markdown file and the problems found (unclosed fences, stray or
    malformed markers), each problem as ``file:line: what``."""
    rel = path.relative_to(REPO).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            if _ANY_MARKER.search(lines[i]) and not (i + 1 < len(lines) and _FENCE.match(lines[i + 1])):
                problems.append(f"{rel}:{i + 1}: a doc-test marker must be the line right before a fence")
            i += 1
            continue
        indent, lang = fence.group(1), fence.group(2).strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            problems.append(f"{rel}:{i + 1}: fence never closed")
            break
        body = [
            text[len(indent) :] if text.startswith(indent) else text.lstrip() for text in lines[i + 1 : end]
        ]
        marker, reason, extra = "", "", ""
        if i > 0 and _ANY_MARKER.search(lines[i - 1]):
            m = _MARKER.match(lines[i - 1])
            plain_extra = m is not None and m.group(1) is None and m.group(3) is not None
            if (
                m is None
                or not plain_extra
                and (m.group(1) not in MARKER_KINDS or not (m.group(2) or "").strip())
            ):
                problems.append(
                    f"{rel}:{i}: expected `<!-- doc-test: skip (REASON) -->`, "
                    f"`<!-- doc-test: server (WHAT) -->` or `<!-- doc-test: [EXTRA] -->` "
                    f"(an [EXTRA] may end the first two), got {lines[i - 1].strip()!r}"
                )
            else:
                marker, reason, extra = m.group(1) or "", (m.group(2) or "").strip(), m.group(3) or ""
        blocks.append(Block(rel, i + 1, lang, "\n".join(body) + "\n", marker, reason, extra))
        i = end + 1
    return blocks, problems


def all_blocks() -> list[Block]:
    return [block for path in doc_files() for block in parse(path)[0]]


def commands(script: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, blank and comment lines dropped."""
    out: list[str] = []
    pending = ""
    for raw in script.splitlines():
        pending += raw
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        if pending.strip() and not pending.lstrip().startswith("#"):
            out.append(pending.strip())
        pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


@dataclass(frozen=True)
class Step:
    """One ``$ COMMAND`` of a console transcript: its input lines and expected output."""

    command: str
    stdin: list[str]
    expected: list[str]


def transcript(text: str) -> list[Step]:
    steps: list[Step] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append(Step(line[2:].strip(), [], []))
        elif not steps:
            raise ValueError(f"a console block starts with `$ COMMAND`, not {line!r}")
        elif line.startswith("mcp> "):
            steps[-1].stdin.append(line[len("mcp> ") :])
        else:
            steps[-1].expected.append(line.rstrip())
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` is ``expected`` line for line, a ``...`` line matching any run of lines."""
    # Glob matching over lines (``...`` is ``*``), iterative with one backtrack point.
    e = a = 0
    star_e, star_a = -1, 0
    while a < len(actual):
        if e < len(expected) and expected[e] == "...":
            star_e, star_a = e, a
            e += 1
        elif e < len(expected) and expected[e] == actual[a].rstrip():
            e += 1
            a += 1
        elif star_e >= 0:
            star_a += 1
            e, a = star_e + 1, star_a
        else:
            return False
    while e < len(expected) and expected[e] == "...":
        e += 1
    return e == len(expected)
