"""C++ of the spec's events: one typed, allocation-free emitter per event.

``mcp_tools.h`` declares ``mcpgen::EventStatus mcpgen::events::emit_<name>(...)`` (the
parameters in the spec's order by name, typed like tool arguments: bool, int64_t,
double, const char*); ``mcp_tools.cpp`` defines it: it checks the arguments against the
spec (ranges, enums, max_length; finite numbers) and hands a params writer to the core's
``mcpgen::emit_event`` (firmware_template/core/mcpgen/events.h), which frames and sends
the notification under the port's lock. ``emit_cpp`` adds ``event_views(spec)`` to its
template context.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpgen.codegen.emit.literals import (
    CPP_LINE,
    cpp_comment,
    cpp_double,
    cpp_field_name,
    cpp_int,
    cpp_string,
)
from mcpgen.codegen.emit.param_text import cpp_param_comment
from mcpgen.codegen.spec.model import Event, Param, Spec

_CPP_TYPE = {"boolean": "bool", "integer": "int64_t", "number": "double", "string": "const char*"}
_WRITE = {"boolean": "boolean", "integer": "integer", "number": "number", "string": "string"}


@dataclass(frozen=True)
class EventParamView:
    name: str
    field: str
    cpp_type: str
    comment: str
    write: str  # JsonWriter method


@dataclass(frozen=True)
class EventView:
    name: str
    method_literal: str
    comment: str
    struct: str
    params: tuple[EventParamView, ...]
    checks: tuple[str, ...]  # C++ lines, each returning kInvalidArgument on a broken rule
    signature: str  # "int64_t count, const char* source"


def _checks(p: Param, field: str) -> list[str]:
    bad = "return mcpgen::EventStatus::kInvalidArgument;"
    out: list[str] = []
    if p.type == "integer":
        if p.minimum is not None:
            out.append(f"if ({field} < {cpp_int(int(p.minimum))}) {bad}")
        if p.maximum is not None:
            out.append(f"if ({field} > {cpp_int(int(p.maximum))}) {bad}")
    elif p.type == "number":
        # Written this way, NaN fails every comparison; infinities are not JSON numbers.
        lo = cpp_double(p.minimum) if p.minimum is not None else "-1.7976931348623157e308"
        hi = cpp_double(p.maximum) if p.maximum is not None else "1.7976931348623157e308"
        out.append(f"if (!({field} >= {lo} && {field} <= {hi})) {bad}")
    elif p.type == "string":
        out.append(f"if ({field} == nullptr) {bad}")
        if p.max_length is not None:
            out.append(f"if (mcpgen::event_text_length({field}) > {p.max_length}u) {bad}")
        if p.enum:
            conds = " && ".join(f"strcmp({field}, {cpp_string(v)}) != 0" for v in p.enum)
            out.append(f"if ({conds}) {bad}")
    # The template indents each line by 2: one too long for the column limit returns on a
    # line of its own, as clang-format writes it.
    return [line if len(line) + 2 <= CPP_LINE else line.replace(f") {bad}", f")\n    {bad}") for line in out]


def _view(event: Event) -> EventView:
    params = []
    checks: list[str] = []
    for p in event.params:
        field = cpp_field_name(p.name)
        params.append(
            EventParamView(
                name=cpp_string(p.name),
                field=field,
                cpp_type=_CPP_TYPE[p.type],
                comment=cpp_param_comment(p).replace("; required", ""),
                write=_WRITE[p.type],
            )
        )
        checks += _checks(p, field)
    return EventView(
        name=event.name,
        method_literal=cpp_string(event.method),
        comment=cpp_comment(event.description),
        struct=f"EventArgs_{event.name}",
        params=tuple(params),
        checks=tuple(checks),
        signature=", ".join(f"{v.cpp_type} {v.field}" for v in params),
    )


def event_views(spec: Spec) -> list[EventView]:
    return [_view(e) for e in spec.events]
