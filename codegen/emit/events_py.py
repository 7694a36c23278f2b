"""Python bindings of the spec's events (added to ``emit_python``'s template context).

Per event: a ``NamedTuple`` payload class (``ButtonPressedEvent``, fields typed like
tool arguments, ``Literal`` for enums), a decoder that checks a notification's params
with the same generated checks as tool arguments (``python_checks.param_checks``) and
returns the payload, ``device.events.<name>()`` (an ``EventStream``) and
``device.on_<name>(callback)``. The runtime side is ``mcpgen.runtime.session.events``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpgen.codegen.emit.literals import py_doc_text, py_ident, py_literal
from mcpgen.codegen.emit.python_checks import param_annotation, param_checks
from mcpgen.codegen.spec.model import Event, Spec
from mcpgen.codegen.spec.names import camel


@dataclass(frozen=True)
class EventFieldView:
    name: str  # as on the wire
    ident: str
    annotation: str
    checks: tuple[str, ...]


@dataclass(frozen=True)
class EventPyView:
    name: str
    class_name: str
    decode_fn: str
    keys_const: str
    keys_literal: str
    fields: tuple[EventFieldView, ...]
    summary: str
    doc: str


def _view(event: Event) -> EventPyView:
    fields = []
    for p in event.params:
        ident = py_ident(p.name)
        fields.append(
            EventFieldView(
                name=p.name,
                ident=ident,
                annotation=param_annotation(p),
                checks=tuple(param_checks(p, ident)),
            )
        )
    desc = " ".join(event.description.split())
    first = desc.split(". ")[0].rstrip(".")
    return EventPyView(
        name=event.name,
        class_name=camel(event.name) + "Event",
        decode_fn=f"_decode_event_{event.name}",
        keys_const=f"_EVENT_KEYS_{event.name}",
        keys_literal="frozenset(" + py_literal(tuple(p.name for p in event.params)) + ")",
        fields=tuple(fields),
        summary=py_doc_text(first[:97] + "..." if len(first) > 100 else first + "."),
        doc=py_doc_text(desc),
    )


def add_event_context(ctx: dict[str, Any], spec: Spec) -> None:
    """Adds ``events`` (views), ``events_class`` and the payload exports to ``ctx``."""
    views = [_view(e) for e in spec.events]
    ctx["events"] = views
    ctx["events_class"] = ctx["cls"] + "Events" if views else ""
    if not views:
        return
    taken = set(ctx["exports"])
    for name in [v.class_name for v in views] + [ctx["events_class"]]:
        if name in taken:
            raise ValueError(f"generated class {name} of an event collides with another; rename the event")
        taken.add(name)
    ctx["exports"] = list(ctx["exports"]) + [ctx["events_class"]] + [v.class_name for v in views]
    ctx["uses_literal"] = ctx["uses_literal"] or any(p.enum for e in spec.events for p in e.params)
