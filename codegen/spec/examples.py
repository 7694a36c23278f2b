"""Example argument values for a tool, derived from its spec (used by the demo and docs)."""

from __future__ import annotations

from typing import Any

from mcpgen.codegen.spec.model import ObjectType, Param, Tool
from mcpgen.codegen.spec.rules.names import pattern_search

_STRING_CANDIDATES = ("hello from mcpgen", "demo-device", "demo", "a")


def example_value(p: Param, types: tuple[ObjectType, ...] = ()) -> Any:
    if p.ref is not None:  # a named type: an example of each of its fields
        shape = next((t for t in types if t.name == p.ref), None)
        return {} if shape is None else {f.name: example_value(f, types) for f in shape.fields}
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


def example_arguments(tool: Tool, types: tuple[ObjectType, ...] = ()) -> dict[str, Any]:
    """Valid arguments of ``tool``; ``types``: the spec's named types (``Spec.types``)."""
    return {p.name: example_value(p, types) for p in tool.params}


def example_call(tool: Tool, types: tuple[ObjectType, ...] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """``example_arguments`` split as a call takes them: the model's arguments, and the
    values asked of the person (spec ``from_human``), which ``Device.call`` and the bindings
    take only as ``human=``. Whoever runs ``codegen run`` is that person."""
    args = example_arguments(tool, types)
    human = {p.name: args.pop(p.name) for p in tool.params if p.human is not None}
    return args, human
