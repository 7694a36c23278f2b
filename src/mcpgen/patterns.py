"""The ``pattern`` rule both ends share: every JSON Schema ``pattern`` runs on RE2.

A pattern reaches the runtime from a device's ``tools/list`` (any device, a hostile one
too) or from a spec (``codegen check``, the generated bindings), and the text it is
checked against comes from a user or an LLM. Python's ``re`` backtracks: ``^(\\w+\\s?)*$``
against a 46-character sentence blocks the event loop for seconds. RE2 takes time linear
in the text's length whatever the pattern, and refuses what it cannot do that way
(backreferences, lookaround, atomic groups, possessive repeats). :func:`compile_re2` is
the one place a pattern text becomes an RE2 program: ``mcpgen.runtime.core.validate`` builds
its checks on it and ``codegen check`` refuses a spec pattern it refuses, with the same
options, so a spec that passes the check is one the runtime runs.

Imports neither the generator nor the runtime (``.importlinter``).
"""

from __future__ import annotations

import re
from typing import Any

# Google's own binding of RE2 (PyPI `google-re2`): a runtime dependency for this alone.
import re2

#: Longest pattern text compiled (characters); a longer one is refused unread.
MAX_PATTERN_LENGTH = 8192
#: RE2's memory budget per pattern (program and DFA cache); a pattern whose program does
#: not fit (about 10,000 instructions) is refused at compile time ("pattern too large").
#: It also bounds the time a compile takes: RE2 gives up once the budget is spent (about
#: 0.2 s for the costliest texts on a loaded 2-core machine, docs/security.md).
PATTERN_MAX_MEM = 1 << 18
#: Bound on one check's work: the text's length (characters) x the RE2 program's size
#: (instructions). RE2's worst case is proportional to that product (benchmarks/hotpath.py
#: prints the time of a check at the bound): a longer text is refused without running.
MAX_PATTERN_WORK = 1 << 20
#: What RE2's compile time grows with, capped before compiling (the memory budget alone
#: let a 104-character text of eight `[a-z]{1,1000}` compile for about a second): the sum
#: of the counts of all counted repeats, and the number of Unicode class escapes.
MAX_REPEAT_TOTAL = 2000
MAX_UNICODE_CLASSES = 64
# A counted repeat's bounds (`{3}`, `{3,}`, `{3,9}`): no nested quantifier, so linear.
_COUNTED = re.compile(r"\{(\d{1,9})(?:,(\d{0,9}))?\}")
#: Characters of RE2's error text kept in a refusal's reason.
_REASON_LIMIT = 80

_HEX = frozenset("0123456789abcdefABCDEF")


def options() -> Any:
    """RE2's options for every pattern: bounded memory, no captures (a check asks match or
    no match only), errors reported by the caller instead of logged to stderr."""
    opts = re2.Options()
    opts.max_mem = PATTERN_MAX_MEM
    opts.log_errors = False
    opts.never_capture = True
    return opts


_OPTIONS = options()

#: The binding's low-level "unanchored" argument of ``Match`` (a JSON Schema pattern is a
#: search), or None when the binding's internals differ (then its public ``search`` is used).
_LOW = getattr(getattr(re2, "_re2", None), "RE2", None)
UNANCHORED: Any = getattr(getattr(_LOW, "Anchor", None), "UNANCHORED", None)


def ecma_escapes(source: str) -> str:
    """``source`` with JSON Schema's (ECMA-262) ``\\uXXXX`` escapes written as RE2 spells
    them, ``\\x{XXXX}``; one pass over the text, so linear in its length."""
    if "\\u" not in source:
        return source
    out: list[str] = []
    i = 0
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            digits = source[i + 2 : i + 6]
            if source[i + 1] == "u" and len(digits) == 4 and all(d in _HEX for d in digits):
                out.append("\\x{" + digits + "}")
                i += 6
                continue
            out.append(source[i : i + 2])  # an escape pair: `\\u0041` stays a backslash and text
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_re2(source: str) -> Any:
    """``source`` compiled by RE2 (the binding's compiled pattern). Raises ``ValueError``
    whose text says why a pattern is refused: too long, not valid Unicode, or a construct
    RE2 does not have (RE2's own message, e.g. ``invalid perl operator: (?=``)."""
    if len(source) > MAX_PATTERN_LENGTH:
        raise ValueError(f"it is {len(source)} characters long (at most {MAX_PATTERN_LENGTH})")
    repeats = sum(int(m.group(2) or m.group(1)) for m in _COUNTED.finditer(source))
    if repeats > MAX_REPEAT_TOTAL:
        raise ValueError(f"its counted repeats add up to {repeats} (at most {MAX_REPEAT_TOTAL})")
    classes = source.count("\\p") + source.count("\\P")
    if classes > MAX_UNICODE_CLASSES:
        raise ValueError(f"it has {classes} Unicode class escapes (at most {MAX_UNICODE_CLASSES})")
    try:
        return re2.compile(ecma_escapes(source), _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        text = str(detail)
        if len(text) > _REASON_LIMIT:
            text = text[:_REASON_LIMIT] + "..."
        raise ValueError(f"RE2 cannot compile it ({text})") from None
    except UnicodeError:
        raise ValueError("it is not valid Unicode (a lone surrogate)") from None


def program_size(compiled: Any, source: str) -> int:
    """The RE2 program's size in instructions (what a check's worst-case work scales
    with), or the pattern's length when the binding does not say."""
    low = getattr(compiled, "_regexp", None)
    size = getattr(low, "ProgramSize", None)
    return max(int(size()) if size is not None else len(source), 1)


def max_subject(size: int) -> int:
    """The longest text (characters) a pattern of ``size`` instructions is run on."""
    return MAX_PATTERN_WORK // max(size, 1)


def refusal(source: str) -> str:
    """Why RE2 refuses ``source``, or ``""`` when it compiles."""
    try:
        compile_re2(source)
    except ValueError as exc:
        return str(exc)
    return ""


__all__ = [
    "MAX_PATTERN_LENGTH",
    "MAX_PATTERN_WORK",
    "MAX_REPEAT_TOTAL",
    "MAX_UNICODE_CLASSES",
    "PATTERN_MAX_MEM",
    "UNANCHORED",
    "compile_re2",
    "ecma_escapes",
    "max_subject",
    "options",
    "program_size",
    "refusal",
]
