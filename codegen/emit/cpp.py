"""Emits the device side of a spec: ``firmware/generated/mcp_tools.{h,cpp}``.

The header declares one typed args struct and one handler prototype per tool; the
source holds the descriptor tables the portable core (``firmware_template/core``)
dispatches on: ParamDesc arrays, each tool's exact ``tools/list`` entry as a string
constant, thunks from the untyped core call to the typed handler, the ToolDesc table,
the tool indices sorted by name (the core's binary search) and the SpecDesc.
``starter_handlers`` is the text of the user-owned handlers file (written once, by
``targets/user_handlers.py``), ``handler_stubs`` what that module appends to it for new tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from mcpgen.codegen.emit.events_cpp import event_views
from mcpgen.codegen.emit.header import generated_header, spec_file_name
from mcpgen.codegen.emit.literals import (
    cpp_comment,
    cpp_double,
    cpp_field_name,
    cpp_fill,
    cpp_int,
    cpp_string,
    cpp_wrap_comment,
)
from mcpgen.codegen.emit.param_text import cpp_param_comment as _param_comment
from mcpgen.codegen.emit.resources_cpp import resource_views
from mcpgen.codegen.emit.templating import TEMPLATES_ROOT, environment
from mcpgen.codegen.spec.mcp_json import list_entry_json
from mcpgen.codegen.spec.model import DEFAULT_RESPONSE_BUFFER, Field, Param, Spec, Tool
from mcpgen.codegen.spec.names import cpp_args_struct
from mcpgen.codegen.spec.ota import is_builtin
from mcpgen.protocol import RETURN_KINDS

# Must equal MCPGEN_CORE_VERSION in firmware_template/core/mcpgen/mcp_core.h (a test reads
# the header and compares): the generated header refuses to compile against another core.
CORE_VERSION = 6
HEADER_PATH = "firmware/generated/mcp_tools.h"
SOURCE_PATH = "firmware/generated/mcp_tools.cpp"
TEMPLATE_DIR = TEMPLATES_ROOT / "cpp"


# A 1x1 transparent PNG: the placeholder image of starter handlers.
PLACEHOLDER_PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

# An empty WAV file (8 kHz, 8-bit mono, no samples): the placeholder clip of starter handlers.
PLACEHOLDER_WAV = (
    b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00"
    b"\x40\x1f\x00\x00\x01\x00\x08\x00data\x00\x00\x00\x00"
)

_CPP_PARAM_TYPE = {"boolean": "bool", "integer": "int64_t", "number": "double", "string": "const char*"}
_PARAM_TYPE_ENUM = {
    "boolean": "mcpgen::ParamType::kBoolean",
    "integer": "mcpgen::ParamType::kInteger",
    "number": "mcpgen::ParamType::kNumber",
    "string": "mcpgen::ParamType::kString",
    "object": "mcpgen::ParamType::kObject",
}
# mcpgen::ReturnKind (mcp_core.h) names each kind k<Kind>.
RETURN_KIND_ENUM = {kind: f"mcpgen::ReturnKind::k{kind.capitalize()}" for kind in RETURN_KINDS}
# An item of a `returns: [...]` list as the core's ReturnKind (a text item is kString).
ITEM_KIND_ENUM = {
    "text": "mcpgen::ReturnKind::kString",
    "image": "mcpgen::ReturnKind::kImage",
    "audio": "mcpgen::ReturnKind::kAudio",
    "resource": "mcpgen::ReturnKind::kResource",
}
# A starter handler's placeholder item of each kind, with ContentItems (`items`).
_ITEM_PLACEHOLDER = {
    "text": 'items.text("");',
    "image": 'items.image("image/png", kPlaceholderPng);',
    "audio": 'items.audio("audio/wav", kPlaceholderWav, sizeof kPlaceholderWav);',
    "resource": "items.resource({uri});",
}


# What the templates need of one tool and its params for the generated ToolDesc / ParamDesc
# tables (emit/xiaozhi.py has views of its own for the stock McpServer registrations).
@dataclass(frozen=True)
class _ParamDescView:
    name: str
    field: str
    cpp_type: str
    comment: str
    initializer: str  # the ParamDesc aggregate


@dataclass(frozen=True)
class _ToolDescView:
    index: int
    name: str
    name_comment: str
    handler: str
    struct: str
    params: tuple[_ParamDescView, ...]
    enum_arrays: tuple[tuple[str, list[str]], ...]  # (array name, its values as C++ literals)
    entry_literal: str
    entry_len: int
    user_only: bool
    builtin: bool  # implemented by the port (codegen.spec.ota), not in the user's handlers
    returns_enum: str
    returns: str
    placeholder: str  # starter handler body
    items: tuple[str, ...] = ()  # `returns: [...]`: the items' ReturnKind enumerators


def _param_initializer(p: Param, struct: str, field: str, enum_array: Optional[str]) -> str:
    is_int = p.type == "integer"
    is_num = p.type == "number"
    has_min = p.minimum is not None and (is_int or is_num)
    has_max = p.maximum is not None and (is_int or is_num)
    int_min = cpp_int(int(p.minimum)) if is_int and p.minimum is not None else "0LL"
    int_max = cpp_int(int(p.maximum)) if is_int and p.maximum is not None else "0LL"
    num_min = cpp_double(p.minimum) if is_num and p.minimum is not None else "0.0"
    num_max = cpp_double(p.maximum) if is_num and p.maximum is not None else "0.0"
    max_length = f"{p.max_length}u" if p.type == "string" and p.max_length else "0u"
    d = p.default
    default_bool = "true" if (p.type == "boolean" and d is True) else "false"
    default_int = cpp_int(int(d)) if is_int and d is not None and not isinstance(d, bool) else "0LL"
    default_num = cpp_double(float(d)) if is_num and d is not None and not isinstance(d, bool) else "0.0"
    default_str = cpp_string(str(d), " " * 5) if p.type == "string" and d is not None else "nullptr"
    required = "true" if p.required else "false"
    items = [
        cpp_string(p.name, " " * 5),
        _PARAM_TYPE_ENUM[p.type],
        f"/*required=*/{required}",
        f"static_cast<uint16_t>(offsetof({struct}, {field}))",
        f"/*has_min=*/{'true' if has_min else 'false'}",
        f"/*has_max=*/{'true' if has_max else 'false'}",
        f"/*int=*/{int_min}",
        int_max,
        f"/*number=*/{num_min}",
        num_max,
        f"/*max_length=*/{max_length}",
        f"/*enum=*/{enum_array or 'nullptr'}",
        f"{len(p.enum)}u" if enum_array else "0u",
        f"/*default=*/{default_bool}",
        default_int,
        default_num,
        default_str,
        f"/*object=*/{'&kType_' + p.ref if p.ref else 'nullptr'}",
    ]
    # The template puts it 4 columns in, followed by a comma.
    return cpp_fill("    {", items, "},", " " * 5)[4:-1]


def _cpp_type(p: Param) -> str:
    """The C++ member type of a parameter: a scalar, or a named type's struct."""
    return p.ref if p.ref is not None else _CPP_PARAM_TYPE[p.type]


@dataclass(frozen=True)
class _TypeView:
    """A named type (the spec's ``types:``): its struct, and its fields' ParamDesc table."""

    name: str
    comment: str
    fields: tuple[_ParamDescView, ...]
    enum_arrays: tuple[tuple[str, list[str]], ...]


def _type_views(spec: Spec) -> list[_TypeView]:
    """Every named type, each after the types its fields use (C++ declares before use)."""
    by_name = {t.name: t for t in spec.types}
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order or name not in by_name:
            return
        for f in by_name[name].fields:
            if f.ref is not None:
                visit(f.ref)
        order.append(name)

    for t in spec.types:
        visit(t.name)
    views = []
    for name in order:
        t = by_name[name]
        fields, enums = _param_views(t.fields, name, f"kEnum_{name}", f"type {name}")
        text = t.description or f"the spec's type {name}"
        views.append(_TypeView(name, cpp_comment(text), fields, enums))
    return views


def _param_views(
    params: tuple[Param, ...], struct: str, enum_prefix: str, owner: str
) -> tuple[tuple[_ParamDescView, ...], tuple[tuple[str, list[str]], ...]]:
    out: list[_ParamDescView] = []
    enums: list[tuple[str, list[str]]] = []
    fields_seen: dict[str, str] = {}
    for p in params:
        field = cpp_field_name(p.name)
        if field in fields_seen:
            raise ValueError(
                f"{owner}: parameters {fields_seen[field]!r} and {p.name!r} "
                f"both map to the C++ member {field!r}"
            )
        fields_seen[field] = p.name
        enum_array = None
        if p.enum:
            enum_array = f"{enum_prefix}_{field}"
            enums.append((enum_array, [cpp_string(v, " " * 4) for v in p.enum]))
        out.append(
            _ParamDescView(
                name=p.name,
                field=field,
                cpp_type=_cpp_type(p),
                comment=_param_comment(p),
                initializer=_param_initializer(p, struct, field, enum_array),
            )
        )
    return tuple(out), tuple(enums)


def _placeholder_value(lines: list[str], f: Field, indent: str) -> None:
    """Writes a zero value of a declared return field with the JsonWriter ``w``."""
    if f.name:
        lines.append(f"{indent}w.key({cpp_string(f.name)});")
    if f.type == "object":
        lines.append(f"{indent}w.begin_object();")
        for c in f.properties:
            _placeholder_value(lines, c, indent)
        lines.append(f"{indent}w.end_object();")
    elif f.type == "array":
        lines.append(f"{indent}w.begin_array();")
        lines.append(f"{indent}w.end_array();")
    elif f.type == "boolean":
        lines.append(f"{indent}w.boolean(false);")
    elif f.type == "integer":
        lines.append(f"{indent}w.integer(0);")
    elif f.type == "number":
        lines.append(f"{indent}w.number(0.0);")
    else:
        lines.append(f'{indent}w.string("");')


def _placeholder_uri(spec: Spec) -> str:
    """The URI a starter handler embeds: the spec's first fixed resource (or first template)."""
    fixed = [r.uri for r in spec.resources if r.uri]
    templates = [r.uri_template for r in spec.resources if r.uri_template]
    return cpp_string((fixed or templates or [""])[0])


def _placeholder(tool: Tool, spec: Spec) -> str:
    kind = tool.returns.kind
    ind = "  "
    if kind == "boolean":
        return f"{ind}return mcpgen::Result::Bool(true);"
    if kind == "integer":
        return f"{ind}return mcpgen::Result::Int(0);"
    if kind == "number":
        return f"{ind}return mcpgen::Result::Number(0.0);"
    if kind == "string":
        return f'{ind}return mcpgen::Result::Text("");'
    if kind == "image":
        return f'{ind}return mcpgen::Result::Image("image/png", kPlaceholderPng);'
    if kind == "audio":
        clip = "kPlaceholderWav, sizeof kPlaceholderWav"
        return f'{ind}return mcpgen::Result::Audio(ctx, "audio/wav", {clip});'
    if kind == "resource":
        return f"{ind}return mcpgen::Result::Resource(ctx, {_placeholder_uri(spec)});"
    if kind == "content":
        uri = _placeholder_uri(spec)
        adds = " ".join(_ITEM_PLACEHOLDER[k].format(uri=uri) for k in tool.returns.items)
        body = ("mcpgen::ContentItems& items = ctx.items();", adds, "return mcpgen::Result::Items(ctx);")
        return "\n".join(ind + line for line in body)
    if kind == "object":
        lines = [f"{ind}mcpgen::JsonWriter& w = ctx.object();"]
        _placeholder_value(lines, Field(name="", type="object", properties=tool.returns.properties), ind)
        lines.append(f"{ind}return mcpgen::Result::Object();")
        return "\n".join(lines)
    return f"{ind}return mcpgen::Result::None();"


def _tool_view(index: int, tool: Tool, spec: Spec) -> _ToolDescView:
    struct = cpp_args_struct(tool.handler)
    params, enums = _param_views(tool.params, struct, f"kEnum_{tool.handler}", f"tool {tool.name}")
    entry = list_entry_json(tool, spec.types)
    return _ToolDescView(
        index=index,
        name=tool.name,
        name_comment=cpp_comment(tool.name),
        handler=tool.handler,
        struct=struct,
        params=params,
        enum_arrays=enums,
        entry_literal=cpp_string(entry),
        entry_len=len(entry.encode("utf-8")),
        user_only=tool.user_only,
        builtin=is_builtin(spec, tool),
        returns_enum=RETURN_KIND_ENUM[tool.returns.kind],
        returns=tool.returns.kind,
        placeholder=_placeholder(tool, spec),
        items=tuple(ITEM_KIND_ENUM[k] for k in tool.returns.items),
    )


def _context(spec: Spec) -> dict[str, object]:
    tools = [_tool_view(i, t, spec) for i, t in enumerate(spec.tools)]
    for t in tools:
        if t.entry_len > 0xFFFF:
            raise ValueError(f"tool {t.name}: tools/list entry of {t.entry_len} bytes exceeds 65535")
    # The core finds a tool (tools/call, a tools/list cursor) by binary search of this
    # order: names compared as UTF-8 bytes, like the core's strncmp.
    by_name = sorted(range(len(tools)), key=lambda i: tools[i].name.encode("utf-8"))
    return {
        "spec": spec,
        "tools": tools,
        "types": _type_views(spec),
        "by_name": by_name,
        "core_version": CORE_VERSION,
        "fingerprint": spec.fingerprint,
        "device_name": cpp_string(spec.device.name),
        "device_version": cpp_string(spec.device.version),
        "protocol_version": cpp_string(spec.device.protocol_version),
        "fingerprint_literal": cpp_string(spec.fingerprint),
        "page_size": spec.device.page_size,
        "spec_name": cpp_comment(spec_file_name(spec)),
        "device_comment": cpp_comment(spec.device.name),
        "placeholder_png": cpp_string(PLACEHOLDER_PNG_BASE64),
        "needs_png": any(t.returns == "image" or ITEM_KIND_ENUM["image"] in t.items for t in tools),
        "needs_wav": any(t.returns == "audio" or ITEM_KIND_ENUM["audio"] in t.items for t in tools),
        "placeholder_wav": ", ".join(f"0x{b:02x}" for b in PLACEHOLDER_WAV),
        "cpp_string": cpp_string,
        "cpp_fill": cpp_fill,
        "cpp_wrap_comment": cpp_wrap_comment,
        "events": event_views(spec),
        "resources": resource_views(spec, _param_initializer),
        "any_subscribe": any(r.subscribe for r in spec.resources),
        # A tool returns an embedded resource: the table links resource_embed (else null,
        # so a firmware that embeds none leaves it out).
        "embeds_resources": any(
            t.returns.kind == "resource" or "resource" in t.returns.items for t in spec.tools
        ),
        "jsonrpc_argument_errors": spec.device.errors == "jsonrpc",
        "ota": spec.device.ota,
        "ota_public_key": _c_bytes(spec.ota_signing.public_key) if spec.ota_signing else "",
        "ota_secure_version": spec.ota_signing.secure_version if spec.ota_signing else 0,
        # A spec that says its build has a larger reply buffer than the core's default (its
        # resources were checked against it): the header makes a build without it fail.
        "response_buffer": (
            spec.device.response_buffer
            if spec.resources and spec.device.response_buffer != DEFAULT_RESPONSE_BUFFER
            else None
        ),
    }


def _c_bytes(data: bytes) -> str:
    """A brace initializer of ``data``: ``{0x4c, 0x7d, ...}`` (the OTA verification key)."""
    return "{" + ", ".join(f"0x{b:02x}" for b in data) + "}"


def emit(spec: Spec) -> dict[str, str]:
    """Relative path -> content of the generated device files (deterministic)."""
    env = environment(TEMPLATE_DIR)
    ctx = _context(spec)
    banner = generated_header(spec, "//")
    return {
        HEADER_PATH: banner + env.get_template("mcp_tools.h.j2").render(**ctx),
        SOURCE_PATH: banner + env.get_template("mcp_tools.cpp.j2").render(**ctx),
    }


def starter_handlers(spec: Spec, spec_filename: str) -> str:
    """A compilable handlers file for the user to fill in (written once, never overwritten)."""
    env = environment(TEMPLATE_DIR)
    ctx = _context(spec)
    ctx["spec_name"] = cpp_comment(spec_filename)
    return env.get_template("handlers.cpp.j2").render(**ctx)


def handler_stubs(tools: Sequence[Tool], spec_filename: str) -> str:
    """The block ``codegen build --add-missing-handlers`` appends to the user's handlers file
    (``targets/user_handlers.py`` appends it): a compilable stub per tool that reports "not
    implemented" until filled in."""
    block = ["", f"// Added by `codegen build --add-missing-handlers` for new tools of {spec_filename}."]
    block += ["namespace tools {", ""]
    for tool in tools:
        struct = cpp_args_struct(tool.handler)
        message = json.dumps(f"{tool.name} is not implemented yet")  # ASCII JSON is a valid C++ literal
        block.append(
            f"// {tool.name}\n"
            f"mcpgen::Result {tool.handler}([[maybe_unused]] const {struct}& args, "
            "[[maybe_unused]] mcpgen::Context& ctx) {\n"
            f"  // TODO: implement {tool.name}.\n"
            f"  return mcpgen::Result::Error({message});\n"
            "}\n"
        )
    block.append("}  // namespace tools\n")
    return "\n".join(block)
