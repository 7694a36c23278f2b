"""C++ of the spec's resources: typed read handlers and the core's ResourceTable.

``mcp_tools.h`` declares ``mcpgen::ReadStatus resources::read_<name>(...)`` (with a
``const ResourceArgs_<name>&`` first when the URI is a template: its variables typed like
tool arguments); ``mcp_tools.cpp`` holds each resource's ParamDesc array, its exact
list entry, a thunk, the ResourceDesc table and the ResourceTable the SpecDesc points to
(firmware_template/core/mcpgen/resources.h). ``emit_cpp`` adds ``resource_views(spec)``
to its template context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from mcpgen.codegen.emit.literals import cpp_comment, cpp_field_name, cpp_string
from mcpgen.codegen.emit.param_text import cpp_param_comment
from mcpgen.codegen.spec.model import Param, Resource, Spec
from mcpgen.codegen.spec.resource_json import list_entry_json

_CPP_TYPE = {"boolean": "bool", "integer": "int64_t", "number": "double", "string": "const char*"}


@dataclass(frozen=True)
class ResourceParamView:
    field: str
    cpp_type: str
    comment: str
    initializer: str


@dataclass(frozen=True)
class ResourceView:
    index: int
    name: str
    handler: str
    struct: str
    comment: str
    uri_literal: str
    uri_comment: str
    mime_literal: str
    name_literal: str
    is_template: bool
    binary: bool
    subscribe: bool
    content: str
    max_size: int
    params: tuple[ResourceParamView, ...]
    enum_arrays: tuple[tuple[str, list[str]], ...]
    entry_literal: str
    entry_len: int
    signature: str


# Builds a ParamDesc initializer (param, struct, field, enum array): emit.cpp's, passed in
# so this module stays below the emitter that uses it (.importlinter "emitters").
ParamInitializer = Callable[[Param, str, str, Optional[str]], str]


def _view(index: int, r: Resource, param_initializer: ParamInitializer) -> ResourceView:
    struct = f"ResourceArgs_{r.name}"
    params = []
    enums: list[tuple[str, list[str]]] = []
    for p in r.params:
        field = cpp_field_name(p.name)
        enum_array = None
        if p.enum:
            enum_array = f"kEnum_resource_{r.name}_{field}"
            enums.append((enum_array, [cpp_string(v, " " * 4) for v in p.enum]))
        params.append(
            ResourceParamView(
                field=field,
                cpp_type=_CPP_TYPE[p.type],
                comment=cpp_param_comment(p),
                initializer=param_initializer(p, struct, field, enum_array),
            )
        )
    entry = list_entry_json(r)
    uri = r.uri if r.uri is not None else r.uri_template
    assert uri is not None
    args = f"const {struct}& args, " if r.params else ""
    return ResourceView(
        index=index,
        name=r.name,
        handler=r.handler,
        struct=struct,
        comment=cpp_comment(r.description),
        uri_literal=cpp_string(uri),
        uri_comment=cpp_comment(uri),
        mime_literal=cpp_string(r.mime_type),
        name_literal=cpp_string(r.name),
        is_template=r.uri_template is not None,
        binary=r.content == "binary",
        subscribe=r.subscribe,
        content=r.content,
        max_size=r.max_size or 0,
        params=tuple(params),
        enum_arrays=tuple(enums),
        entry_literal=cpp_string(entry),
        entry_len=len(entry.encode("utf-8")),
        signature=f"{args}mcpgen::ResourceWriter& out, mcpgen::Context& ctx",
    )


def resource_views(spec: Spec, param_initializer: ParamInitializer) -> list[ResourceView]:
    views = [_view(i, r, param_initializer) for i, r in enumerate(spec.resources)]
    for v in views:
        if v.entry_len > 0xFFFF:
            raise ValueError(f"resource {v.name}: list entry of {v.entry_len} bytes exceeds 65535")
    return views
