"""Python bindings of the spec's resources: ``device.resources.<name>.read(...)``.

Each resource gets a ``ResourceReader`` subclass (runtime.session.resources) with a typed
``read``: no arguments for a fixed URI, the template's variables as keyword arguments
(validated like tool arguments, by a generated ``args_resource_<name>``) for a template;
it returns ``str`` for text content and ``bytes`` for binary. ``python.context`` adds
``resources`` (views) and ``resources_class`` via ``add_resource_context``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcpgen.codegen.emit.literals import py_doc_text, py_ident
from mcpgen.codegen.spec.model import Param, Resource, Spec
from mcpgen.codegen.spec.names import camel


@dataclass
class ResourceView:
    name: str
    attr: str
    class_name: str
    args_fn: str
    params: list[Any]  # python.ParamView
    uri: str
    binary: bool
    returns: str  # "str" or "bytes"
    summary: str
    updates: bool  # a fixed URI with subscribe: true (``.updates()``)


# Builds the template view of one required parameter: emit.python's, passed in so this
# module stays below the emitter that uses it (.importlinter "emitters").
ParamViewer = Callable[[Param], Any]


def _view(r: Resource, cls: str, param_view: ParamViewer) -> ResourceView:
    params = [param_view(p) for p in r.params]
    uri = r.uri if r.uri is not None else r.uri_template
    assert uri is not None
    first = " ".join(r.description.split()).rstrip(".")
    return ResourceView(
        name=r.name,
        attr=py_ident(r.name),
        class_name=f"{cls}Resource{camel(r.name)}",
        args_fn=f"args_resource_{r.name}",
        params=params,
        uri=uri,
        binary=r.content == "binary",
        returns="bytes" if r.content == "binary" else "str",
        summary=py_doc_text(first + "."),
        updates=r.subscribe and r.uri is not None,
    )


def add_resource_context(ctx: dict[str, Any], spec: Spec, param_view: ParamViewer) -> None:
    """Adds ``resources`` (views) and ``resources_class`` to the template context."""
    views = [_view(r, ctx["cls"], param_view) for r in spec.resources]
    ctx["resources"] = views
    ctx["resources_class"] = ctx["cls"] + "Resources" if views else ""
    if not views:
        return
    taken = set(ctx["exports"])
    for name in [v.class_name for v in views] + [ctx["resources_class"]]:
        if name in taken:
            raise ValueError(
                f"generated class {name} of a resource collides with another; rename the resource"
            )
        taken.add(name)
    ctx["exports"] = list(ctx["exports"]) + [ctx["resources_class"]]
    ctx["uses_literal"] = ctx["uses_literal"] or any(p.enum for r in spec.resources for p in r.params)
    ctx["uses_patterns_in_resources"] = any(p.pattern for r in spec.resources for p in r.params)
