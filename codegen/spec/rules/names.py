"""Which names the spec may use: C++ and Python identifiers, device names, regexes.

Also used outside the checker (``codegen new`` checks the device name it is given).
"""

from __future__ import annotations

import re
import warnings

from mcpgen import patterns
from mcpgen.codegen.spec.names import (
    CPP_KEYWORDS,
    IDENTIFIER_RE,
    PYTHON_RESERVED,
    device_class,
)


def cpp_identifier_problem(name: str) -> str:
    """Why ``name`` cannot be a C++ function name, or "" if it can."""
    if not IDENTIFIER_RE.match(name):
        return "is not a valid C++ identifier"
    if name in CPP_KEYWORDS:
        return "is a C++ keyword"
    if "__" in name or re.match(r"_[A-Z]", name):
        return "is reserved in C++ (contains `__` or starts with `_` and a capital)"
    return ""


def param_name_problem(name: str) -> tuple[str, str] | None:
    """(problem, hint) if ``name`` cannot be a parameter name, else None."""
    if not IDENTIFIER_RE.match(name):
        return (
            "is not a valid identifier",
            "parameter names become C++ struct fields and Python keyword arguments: "
            "use letters, digits and `_`, not starting with a digit",
        )
    if name in CPP_KEYWORDS:
        return ("is a C++ keyword", f"rename it, e.g. `{name}_value`")
    if name in PYTHON_RESERVED:
        return ("is a reserved word in Python", f"rename it, e.g. `{name}_value`")
    if "__" in name or re.match(r"_[A-Z]", name):
        return ("is reserved in C++ (contains `__` or starts with `_` and a capital)", "rename it")
    return None


def field_name_problem(name: str) -> str:
    if not IDENTIFIER_RE.match(name):
        return "is not a valid identifier"
    if name in PYTHON_RESERVED or name in CPP_KEYWORDS:
        return "is a reserved word in Python or C++"
    return ""


def device_name_problem(name: str) -> tuple[str, str] | None:
    """(problem, hint) if ``name`` cannot be a device name, else None."""
    if not re.search(r"[A-Za-z0-9]", name):
        return (
            f"device name {name!r} has no letters or digits",
            "it names the Python package and class; use something like `desk-lamp`",
        )
    if any(c in name for c in "\r\n\t") or any(ord(c) < 0x20 for c in name):
        return (f"device name {name!r} contains control characters", "use a single-line name")
    cls = device_class(name)
    if cls in PYTHON_RESERVED or not IDENTIFIER_RE.match(cls):
        return (
            f"device name {name!r} gives the Python class name `{cls}`, a reserved word",
            "add a word, e.g. `my-" + name + "`",
        )
    return None


def regex_problem(pattern: str) -> str:
    """Why ``pattern`` cannot be a spec pattern, or "": RE2, which the runtime runs every
    pattern on (``mcpgen.patterns``), must compile it, and so must Python's ``re`` without
    warnings (the syntax MCP clients' own validators share)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(pattern)
        except re.error as e:
            return str(e)
        except (FutureWarning, DeprecationWarning, SyntaxWarning) as w:
            return str(w)
    return patterns.refusal(pattern)


def pattern_search(pattern: str, text: str) -> bool:
    """Whether ``text`` contains a match of ``pattern`` (one :func:`regex_problem` passed) as
    the runtime decides it: on RE2, whose ``\\w``, ``\\d`` and ``$`` are JSON Schema's."""
    return patterns.compile_re2(pattern).search(text) is not None


def pattern_length_problem(pattern: str, max_length: int | None) -> str:
    """Why values of up to ``max_length`` characters cannot all be checked against
    ``pattern`` within the runtime's work bound (``mcpgen.patterns.MAX_PATTERN_WORK``), or ""."""
    if max_length is None:
        return ""
    size = patterns.program_size(patterns.compile_re2(pattern), pattern)
    longest = patterns.max_subject(size)
    if max_length > longest:
        return (
            f"the pattern (an RE2 program of {size} instructions) is checked on values of at most "
            f"{longest} characters, but max_length is {max_length}"
        )
    return ""
