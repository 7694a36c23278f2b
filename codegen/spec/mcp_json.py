"""The MCP ``tools/list`` JSON of a tool, computed once from the model.

The device stores exactly these bytes as constants, ``tools.json`` holds the same
objects, and page-size validation measures them: one definition, no drift.
"""

from __future__ import annotations

import json
from typing import Any

from mcpgen.codegen.spec.model import Field, ObjectType, Param, Spec, Tool
from mcpgen.human import META_HUMAN
from mcpgen.protocol import PROGRESS_META_KEY

# Bytes the core adds around the entries of one page:
#   {"tools":[ e1 , e2 ],"nextCursor":"<12-character cursor>"}
PAGE_PREFIX = '{"tools":['
PAGE_SUFFIX_MORE = '],"nextCursor":"'  # + cursor + '"}'
# The device's tools/list cursor is always this many ASCII characters (the index of the
# next page's first tool plus a check; kCursorLen in the core's paging.h).
CURSOR_LEN = 12


def dumps_compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


DEFS_REF = "#/$defs/"


def param_schema(p: Param) -> dict[str, Any]:
    if p.ref is not None:  # a named type: written once under $defs (JSON Schema 2020-12)
        ref: dict[str, Any] = {"$ref": DEFS_REF + p.ref}
        if p.description:
            ref["description"] = p.description  # 2020-12 allows keywords beside $ref
        return ref
    s: dict[str, Any] = {"type": p.type}
    if p.description:
        s["description"] = p.description
    if p.enum:
        s["enum"] = list(p.enum)
    if p.minimum is not None:
        s["minimum"] = p.minimum
    if p.maximum is not None:
        s["maximum"] = p.maximum
    if p.max_length is not None:
        s["maxLength"] = p.max_length
    if p.pattern is not None:
        s["pattern"] = p.pattern
    if p.default is not None:
        s["default"] = p.default
    return s


def object_schema(params: tuple[Param, ...], description: str = "") -> dict[str, Any]:
    """An object of these parameters (a tool's arguments, a named type's fields).
    ``additionalProperties: false`` because the device core refuses a key the object does
    not declare, at every level ("unknown argument", ``decode_fields`` in
    firmware_template/core/mcpgen/arguments.cpp), so the schema says what the device does."""
    schema: dict[str, Any] = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = {p.name: param_schema(p) for p in params}
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def used_types(params: tuple[Param, ...], types: tuple[ObjectType, ...]) -> list[ObjectType]:
    """The named types these parameters use, directly or through other types, in the
    spec's order (the spec check refuses loops)."""
    by_name = {t.name: t for t in types}
    seen: set[str] = set()
    todo = [p.ref for p in params if p.ref is not None]
    while todo:
        name = todo.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        todo += [f.ref for f in by_name[name].fields if f.ref is not None]
    return [t for t in types if t.name in seen]


def input_schema(tool: Tool, types: tuple[ObjectType, ...] = ()) -> dict[str, Any]:
    """The tool's ``inputSchema``: its arguments, and under ``$defs`` each named type they
    use (JSON Schema 2020-12, referenced as ``{"$ref": "#/$defs/Color"}``)."""
    schema = object_schema(tool.params)
    defs = used_types(tool.params, types)
    if defs:
        schema["$defs"] = {t.name: object_schema(t.fields, t.description) for t in defs}
    return schema


def field_schema(f: Field) -> dict[str, Any]:
    s: dict[str, Any] = {"type": f.type}
    if f.description:
        s["description"] = f.description
    if f.type == "object":
        s["properties"] = {c.name: field_schema(c) for c in f.properties}
    if f.type == "array" and f.items is not None:
        s["items"] = field_schema(f.items)
    return s


def output_schema(tool: Tool) -> dict[str, Any] | None:
    if tool.returns.kind != "object":
        return None
    return {
        "type": "object",
        "properties": {f.name: field_schema(f) for f in tool.returns.properties},
    }


def tool_annotations(tool: Tool) -> dict[str, Any] | None:
    a: dict[str, Any] = {}
    if tool.title:
        a["title"] = tool.title
    if tool.read_only is not None:
        a["readOnlyHint"] = tool.read_only
    if tool.destructive is not None:
        a["destructiveHint"] = tool.destructive
    if tool.idempotent is not None:
        a["idempotentHint"] = tool.idempotent
    if tool.user_only:
        # What the reference firmware marks user-only tools with.
        a["audience"] = ["user"]
    return a or None


def list_entry(tool: Tool, types: tuple[ObjectType, ...] = ()) -> dict[str, Any]:
    """The tool as MCP ``tools/list`` returns it (key order is part of the bytes);
    ``types``: the spec's named types (``Spec.types``), for the ``$defs`` it uses."""
    entry: dict[str, Any] = {"name": tool.name}
    if tool.title:
        entry["title"] = tool.title
    entry["description"] = tool.description
    entry["inputSchema"] = input_schema(tool, types)
    out = output_schema(tool)
    if out is not None:
        entry["outputSchema"] = out
    ann = tool_annotations(tool)
    if ann is not None:
        entry["annotations"] = ann
    meta: dict[str, Any] = {}
    if tool.progress:
        meta[PROGRESS_META_KEY] = True
    human = human_meta(tool)
    if human is not None:
        meta[META_HUMAN] = human
    if meta:
        entry["_meta"] = meta
    return entry


def human_meta(tool: Tool) -> dict[str, Any] | None:
    """What the tool asks of the person (``mcpgen.human``): its confirmation text and the
    question of each ``from_human`` parameter; None when it asks nothing."""
    if not tool.asks_human:
        return None
    out: dict[str, Any] = {}
    if tool.confirm is not None:
        out["confirm"] = tool.confirm
    if tool.human_params:
        out["params"] = {p.name: p.human for p in tool.human_params}
    return out


def list_entry_json(tool: Tool, types: tuple[ObjectType, ...] = ()) -> str:
    return dumps_compact(list_entry(tool, types))


def worst_case_page_bytes(tool: Tool, spec: Spec) -> int:
    """Bytes of a page that holds only ``tool`` and a next-page cursor."""
    return (
        len(PAGE_PREFIX)
        + len(list_entry_json(tool, spec.types).encode("utf-8"))
        + len(PAGE_SUFFIX_MORE)  # ends with the cursor's opening quote
        + CURSOR_LEN
        + 2  # '"}'
    )


def tools_list(spec: Spec, with_user_tools: bool = True) -> list[dict[str, Any]]:
    return [list_entry(t, spec.types) for t in spec.tools if with_user_tools or not t.user_only]
