"""Each prompt of a spec as plain JSON data: what ``codegen bridge --spec`` hands the bridge
(``mcpgen.runtime.bridge.prompts``), which serves it without the generator.

Per prompt: ``name``, ``title`` (when set), ``description``, ``arguments`` (each with its
JSON Schema, as a tool parameter's, and ``required``) and ``messages`` in MCP's shape, whose
text and URIs still hold their ``{{...}}`` placeholders.
"""

from __future__ import annotations

from typing import Any

from mcpgen.codegen.spec.mcp_json import param_schema
from mcpgen.codegen.spec.model import Prompt, PromptContent, Spec


def _content(c: PromptContent) -> dict[str, Any]:
    if c.kind == "text":
        return {"type": "text", "text": c.text}
    if c.kind == "image":
        return {"type": "image", "data": c.data, "mimeType": c.mime_type}
    return {"type": "resource", "resource": {"uri": c.uri, "mimeType": c.mime_type, "text": c.text}}


def prompt_json(p: Prompt) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name}
    if p.title:
        out["title"] = p.title
    out["description"] = p.description
    out["arguments"] = [
        {"name": a.name, "required": a.required, "schema": param_schema(a)} for a in p.arguments
    ]
    out["messages"] = [{"role": m.role, "content": _content(m.content)} for m in p.messages]
    return out


def prompts_json(spec: Spec) -> list[dict[str, Any]]:
    return [prompt_json(p) for p in spec.prompts]
