"""A parameter's constraints as words: the one wording every generated file uses (the C++
header's field comments, the bindings' docstrings, TOOLS.md and the stock xiaozhi
description), so a reader sees the same rule said the same way wherever they look."""

from __future__ import annotations

import json
from typing import Union

from mcpgen.codegen.emit.literals import cpp_comment
from mcpgen.codegen.spec.model import Param


def number_text(v: Union[int, float]) -> str:
    """``5`` for 5 and 5.0, ``0.5`` for 0.5: a spec bound as its author would write it."""
    f = float(v)
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def range_text(p: Param) -> str | None:
    """``0 to 100``, ``>= 0`` or ``<= 100``; None without bounds."""
    if p.minimum is not None and p.maximum is not None:
        return f"{number_text(p.minimum)} to {number_text(p.maximum)}"
    if p.minimum is not None:
        return f">= {number_text(p.minimum)}"
    if p.maximum is not None:
        return f"<= {number_text(p.maximum)}"
    return None


def constraint_phrases(p: Param, *, with_range: bool = True) -> list[str]:
    """The checks on ``p``'s value, in a fixed order: range, accepted values, length, pattern."""
    bits: list[str] = []
    bounds = range_text(p) if with_range else None
    if bounds is not None:
        bits.append(bounds)
    if p.enum:
        bits.append("one of " + ", ".join(p.enum))
    if p.max_length is not None:
        bits.append(f"at most {p.max_length} characters")
    if p.pattern is not None:
        bits.append(f"matching {p.pattern}")
    return bits


def cpp_param_comment(p: Param) -> str:
    """A C++ field comment: type, constraints, default or required, description."""
    bits: list[str] = [p.ref or p.type, *constraint_phrases(p)]
    if p.pattern is not None:
        bits.append("the pattern is not checked on the device")
    if p.default is not None:
        bits.append(f"default {json.dumps(p.default)}")
    else:
        bits.append("required")
    text = "; ".join(bits)
    if p.description:
        text += ". " + p.description
    return cpp_comment(text)
