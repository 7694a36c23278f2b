"""The MCP ``tools/list`` JSON of a tool, computed once from the model.

The device stores exactly these bytes as constants, ``tools.json`` holds the same
objects, and page-size validation measures them: one definition, no drift.
"""

from __future__ import annotations

import json
from typing import Any

from mcpgen.codegen.spec.model import Field, Param, Spec, Tool
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


def param_schema(p: Param) -> dict[str, Any]:
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


def input_schema(tool: Tool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: param_schema(p) for p in tool.params},
    }
    required = [p.name for p in tool.params if p.required]
    if required:
        schema["required"] = required
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


def list_entry(tool: Tool) -> dict[str, Any]:
    """The tool as MCP ``tools/list`` returns it (key order is part of the bytes)."""
    entry: dict[str, Any] = {"name": tool.name}
    if tool.title:
        entry["title"] = tool.title
    entry["description"] = tool.description
    entry["inputSchema"] = input_schema(tool)
    out = output_schema(tool)
    if out is not None:
        entry["outputSchema"] = out
    ann = tool_annotations(tool)
    if ann is not None:
        entry["annotations"] = ann
    if tool.progress:
        entry["_meta"] = {PROGRESS_META_KEY: True}
    return entry


def list_entry_json(tool: Tool) -> str:
    return dumps_compact(list_entry(tool))


def worst_case_page_bytes(tool: Tool, spec: Spec) -> int:
    """Bytes of a page that holds only ``tool`` and a next-page cursor."""
    return (
        len(PAGE_PREFIX)
        + len(list_entry_json(tool).encode("utf-8"))
        + len(PAGE_SUFFIX_MORE)  # ends with the cursor's opening quote
        + CURSOR_LEN
        + 2  # '"}'
    )


def tools_list(spec: Spec, with_user_tools: bool = True) -> list[dict[str, Any]]:
    return [list_entry(t) for t in spec.tools if with_user_tools or not t.user_only]
