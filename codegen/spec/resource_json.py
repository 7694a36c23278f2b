"""The MCP ``resources/list`` and ``resources/templates/list`` JSON of a resource, computed
once from the model: the device stores exactly these bytes, the bindings and the bridge
read the same objects, and the page-size check measures them."""

from __future__ import annotations

from typing import Any

from mcpgen.codegen.spec.mcp_json import CURSOR_LEN, dumps_compact
from mcpgen.codegen.spec.model import Resource


def list_entry(r: Resource) -> dict[str, Any]:
    """The entry of a fixed-URI resource (resources/list) or of a template
    (resources/templates/list); key order is part of the bytes."""
    entry: dict[str, Any] = {"uri": r.uri} if r.uri is not None else {"uriTemplate": r.uri_template}
    entry["name"] = r.name
    entry["description"] = r.description
    entry["mimeType"] = r.mime_type
    return entry


def list_entry_json(r: Resource) -> str:
    return dumps_compact(list_entry(r))


def worst_case_page_bytes(r: Resource) -> int:
    """Bytes of a page that holds only ``r`` and a next-page cursor."""
    head = '{"resources":[' if r.uri is not None else '{"resourceTemplates":['
    return len(head) + len(list_entry_json(r).encode("utf-8")) + len('],"nextCursor":"') + CURSOR_LEN + 2
