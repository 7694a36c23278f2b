"""Example argument values for a tool, derived from its spec (used by the demo and docs)."""

from __future__ import annotations

from typing import Any

from mcpgen.codegen.spec.model import Param, Tool
from mcpgen.codegen.spec.rules.names import pattern_search

_STRING_CANDIDATES = ("hello from mcpgen", "demo-device", "demo", "a")


def example_value(p: Param) -> Any:
    if p.default is not None:
        return p.default
    if p.type == "boolean":
        return True
    if p.type in ("integer", "number"):
        lo = p.minimum if p.minimum is not None else 0
        hi = p.maximum if p.maximum is not None else lo + 100
        mid = (lo + hi) / 2
        return int(mid) if p.type == "integer" else round(mid, 2)
    if p.enum:
        return p.enum[-1]
    for text in _STRING_CANDIDATES:
        if p.max_length is not None and len(text) > p.max_length:
            continue
        if p.pattern is None or pattern_search(p.pattern, text):
            return text
    return ""


def example_arguments(tool: Tool) -> dict[str, Any]:
    return {p.name: example_value(p) for p in tool.params}
