"""Emits ``tools.json`` (exactly what ``tools/list`` returns) and a Markdown reference."""

from __future__ import annotations

import json

from mcpgen.codegen.emit.header import generated_header
from mcpgen.codegen.emit.param_text import constraint_phrases
from mcpgen.codegen.spec.mcp_json import tools_list
from mcpgen.codegen.spec.model import Param, PromptContent, Spec, Tool


def emit(spec: Spec) -> dict[str, str]:
    return {"tools.json": tools_json(spec), "TOOLS.md": tools_markdown(spec)}


def tools_json(spec: Spec) -> str:
    """JSON has no comments, so the banner lives in a ``_generated`` key, first."""
    banner = generated_header(spec, "").replace("\n ", " ").strip()
    doc = {
        "_generated": banner,
        "device": {"name": spec.device.name, "version": spec.device.version},
        "fingerprint": spec.fingerprint,
        "tools": tools_list(spec),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _rule(p: Param) -> str:
    return "; ".join(constraint_phrases(p)) or "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _tool_section(t: Tool) -> list[str]:
    flags = [
        f
        for f, on in (
            ("user-only", t.user_only),
            ("read-only", t.read_only),
            ("destructive", t.destructive),
            ("idempotent", t.idempotent),
            ("reports progress", t.progress),
        )
        if on
    ]
    out = [f"## `{t.name}`", ""]
    if t.title:
        out += [f"**{t.title}**", ""]
    out += [t.description, ""]
    python = "device." + ".".join(t.path) + ("(human={...})" if t.human_params else "()")
    meta = f"Returns: `{_returns_text(t)}`. Handler: `tools::{t.handler}`. Python: `{python}`."
    if flags:
        meta += " Flags: " + ", ".join(flags) + "."
    out += [meta, ""]
    if t.asks_human:
        out += [_human_line(t), ""]
    if t.params:
        out += [
            "| parameter | type | required | default | allowed | description |",
            "|---|---|---|---|---|---|",
        ]
        out += _param_rows(t.params)
    return out


def _param_rows(params: tuple[Param, ...]) -> list[str]:
    rows = []
    for p in params:
        default = "" if p.default is None else f"`{json.dumps(p.default)}`"
        kind = f"[`{p.ref}`](#type-{p.ref.lower()})" if p.ref else p.type
        rows.append(
            f"| `{p.name}` | {kind} | {'yes' if p.required else 'no'} | {default} | "
            f"{_cell(_rule(p))} | {_cell(_param_text(p))} |"
        )
    return [*rows, ""]


def _types_section(spec: Spec) -> list[str]:
    """The named types (`types:`): each written once, as `$defs` in the schemas that use it."""
    if not spec.types:
        return []
    out = [
        "## Types",
        "",
        "Named object shapes of the spec, published once per tool schema under `$defs` and "
        'referenced as `{"$ref": "#/$defs/<Name>"}`. Like a tool, a type refuses a field '
        "it does not list.",
        "",
    ]
    for ty in spec.types:
        out += [f"### type {ty.name}", ""]
        if ty.description:
            out += [ty.description, ""]
        out += [
            "| field | type | required | default | allowed | description |",
            "|---|---|---|---|---|---|",
            *_param_rows(ty.fields),
        ]
    return out


def _human_line(t: Tool) -> str:
    """What a call asks of the person (spec ``confirm`` / ``from_human``) before it is sent."""
    parts = []
    if t.confirm is not None:
        parts.append(f"confirms “{_cell(t.confirm)}”")
    names = [f"`{p.name}`" for p in t.human_params]
    if names:
        parts.append("asks for " + ", ".join(names))
    text = "**Asks the person first** (MCP elicitation from the bridge, a dialog in the console): "
    text += " and ".join(parts) + "."
    if names:
        text += " The model never supplies those values; Python takes them only as `human={...}`."
    return text


def _param_text(p: Param) -> str:
    if p.human is None:
        return p.description
    asked = f"asked of the person: “{p.human}”" if p.human else "asked of the person"
    return f"{asked}. {p.description}".strip() if p.description else asked


def _returns_text(t: Tool) -> str:
    """The return kind as the spec writes it: a list of content items as `[text, image]`."""
    return "[" + ", ".join(t.returns.items) + "]" if t.returns.kind == "content" else t.returns.kind


def tools_markdown(spec: Spec) -> str:
    banner = generated_header(spec, "").strip().replace("\n ", " ")
    lines = [f"<!-- {banner} -->", "", f"# {spec.device.name} {spec.device.version}: MCP tools", ""]
    if spec.device.description:
        lines += [spec.device.description, ""]
    lines += [
        f"Spec fingerprint `{spec.fingerprint}`, MCP protocol `{spec.device.protocol_version}`, "
        f"`tools/list` pages of at most {spec.device.page_size} bytes.",
        "",
        "A tool refuses an argument it does not list (every `inputSchema` says "
        "`additionalProperties: false`).",
        "",
        "| tool | returns | summary |",
        "|---|---|---|",
    ]
    for t in spec.tools:
        summary = t.description.split(". ")[0].rstrip(".")
        returns = _cell(_returns_text(t))
        lines.append(f"| [`{t.name}`](#{t.name.replace('.', '')}) | {returns} | {_cell(summary)} |")
    lines.append("")
    for t in spec.tools:
        lines += _tool_section(t)
    lines += _types_section(spec)
    lines += _events_section(spec)
    lines += _resources_section(spec)
    lines += _prompts_section(spec)
    return "\n".join(lines).rstrip() + "\n"


def _resources_section(spec: Spec) -> list[str]:
    """Resources the device serves (``resources/read``)."""
    if not spec.resources:
        return []
    out = ["## Resources", ""]
    out += ["| resource | URI | content | MIME type | description |", "|---|---|---|---|---|"]
    for r in spec.resources:
        uri = r.uri if r.uri is not None else r.uri_template
        content = r.content + (f", at most {r.max_size} bytes" if r.max_size else "")
        content += ", subscribe" if r.subscribe else ""
        out.append(f"| `{r.name}` | `{uri}` | {content} | `{r.mime_type}` | {_cell(r.description)} |")
    out.append("")
    for r in spec.resources:
        if r.params:
            out += [f"Variables of `{r.name}`:", ""]
            out += ["| variable | type | allowed | description |", "|---|---|---|---|"]
            for p in r.params:
                out.append(f"| `{p.name}` | {p.type} | {_cell(_rule(p))} | {_cell(p.description)} |")
            out.append("")
    return out


def _events_section(spec: Spec) -> list[str]:
    """Events the device sends (``notifications/events/<name>``); every parameter is sent."""
    if not spec.events:
        return []
    out = ["## Events", ""]
    for e in spec.events:
        out += [f"### `{e.name}`", "", e.description, ""]
        out += [
            f"Sent as `{e.method}`. C++: `mcpgen::events::emit_{e.name}()`. "
            f"Python: `device.events.{e.name}()`, `device.on_{e.name}(callback)`.",
            "",
        ]
        if e.params:
            out += ["| parameter | type | allowed | description |", "|---|---|---|---|"]
            for p in e.params:
                out.append(f"| `{p.name}` | {p.type} | {_cell(_rule(p))} | {_cell(p.description)} |")
            out.append("")
    return out


def _prompts_section(spec: Spec) -> list[str]:
    """Prompts the bridge serves (``prompts/list``, ``prompts/get``); not the device."""
    if not spec.prompts:
        return []
    out = [
        "## Prompts",
        "",
        "Served by the bridge (`codegen bridge --spec` with this spec: `prompts/list`, `prompts/get`); "
        "the device does not serve them. In the messages, `{{name}}` is an argument, `{{tool:NAME}}` and "
        "`{{resource:URI}}` become the tool's name and the resource's URI as the bridge serves them.",
        "",
    ]
    for p in spec.prompts:
        out += [f"### `{p.name}`", ""]
        if p.title:
            out += [f"**{p.title}**", ""]
        out += [p.description, ""]
        if p.arguments:
            out += [
                "| argument | type | required | default | allowed | description |",
                "|---|---|---|---|---|---|",
            ]
            for a in p.arguments:
                default = "" if a.default is None else f"`{json.dumps(a.default)}`"
                out.append(
                    f"| `{a.name}` | {a.type} | {'yes' if a.required else 'no'} | {default} | "
                    f"{_cell(_rule(a))} | {_cell(a.description)} |"
                )
            out.append("")
        out += [f"{i}. {m.role}: {_content_words(m.content)}" for i, m in enumerate(p.messages, 1)]
        out.append("")
    return out


def _content_words(c: PromptContent) -> str:
    if c.kind == "text":
        return _cell(c.text)
    if c.kind == "image":
        return f"image (`{c.mime_type}`, {len(c.data) * 3 // 4 - c.data[-2:].count('=')} bytes)"
    return f"embedded resource `{c.uri}` (`{c.mime_type}`)"
