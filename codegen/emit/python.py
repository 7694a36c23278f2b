"""Emits the typed Python bindings of a spec (``python/<slug>_tools/``).

Files (relative to the output directory):

* ``python/<slug>_tools/_bindings.py`` + ``_bindings.pxd`` -- Cython pure-Python mode:
  compiled by ``codegen.targets.python`` (or the generated ``setup.py``), and the same
  ``.py`` runs as plain Python. One class per device (``codegen.spec.names.device_class``)
  wrapping a ``runtime.Device``, one namespace class per dotted prefix, one keyword-only
  ``async`` method per tool with the spec's defaults, inline validation with the
  device's ranges / enums / max_length / pattern, and typed results. Per tool also a
  synchronous ``args_<handler>(...)`` that validates and builds the arguments dict.
* ``python/<slug>_tools/_bindings.pyi`` -- the signatures for editors and mypy.
* ``python/<slug>_tools/__init__.py``, ``py.typed``, ``python/pyproject.toml`` and ``python/setup.py``.

Every file starts with ``codegen.emit.header.generated_header(spec, "#")``; output is a pure
function of the spec.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, cast

import mcpgen
from mcpgen.codegen.emit.events_py import add_event_context
from mcpgen.codegen.emit.header import generated_header
from mcpgen.codegen.emit.literals import PY_LINE, py_ident, py_literal
from mcpgen.codegen.emit.literals import py_doc_text as _doc_text
from mcpgen.codegen.emit.literals import py_str_literal as _str_literal
from mcpgen.codegen.emit.param_text import constraint_phrases
from mcpgen.codegen.emit.python_checks import SCALAR_TYPES as _SCALAR_TYPES
from mcpgen.codegen.emit.python_checks import param_annotation
from mcpgen.codegen.emit.python_checks import param_checks as _param_checks
from mcpgen.codegen.emit.resources_py import add_resource_context
from mcpgen.codegen.emit.templating import TEMPLATES_ROOT, environment
from mcpgen.codegen.spec.history import Release
from mcpgen.codegen.spec.mcp_json import DEFS_REF, input_schema, object_schema, output_schema, used_types
from mcpgen.codegen.spec.model import Field, Param, Spec, Tool
from mcpgen.codegen.spec.names import PYTHON_RESERVED, camel, device_class, device_slug, python_path
from mcpgen.protocol import RETURN_KINDS

TEMPLATE_DIR = TEMPLATES_ROOT / "python"

# The C-level constant of each return kind (runtime/core/wire.pxd; the bindings declare their own).
_KIND_CONST = {kind: f"_K_{kind.upper()}" for kind in RETURN_KINDS}
# The runtime's classes of the rich results (mcpgen.runtime.wire), and of each item of a
# `returns: [...]` list (its Python value: a tuple of these, in order).
_MEDIA_TYPES = {"image": "Image", "audio": "Audio", "resource": "EmbeddedResource"}
_ITEM_TYPES = {"text": "str", **_MEDIA_TYPES}
# Return kinds whose KIND_* constant the bindings import only when a tool uses them (so
# the bindings of specs without them stay as they were).
RICH_KINDS = ("audio", "resource", "content")
# Attributes of the generated classes that tools must not shadow.
_CLASS_RESERVED = frozenset({"FINGERPRINT", "SPEC", "DEVICE_NAME", "DEVICE_VERSION", "device", "fanout"})
_VERSION_RE = re.compile(r"^\d+(\.\d+)*$")


def _wrap(text: str, width: int, indent: str) -> list[str]:
    words = text.split()
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(indent + cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(indent + cur)
    return lines


# -- views handed to the templates -----------------------------------------------------------


@dataclass
class ParamView:
    name: str  # as in the spec and on the wire
    ident: str  # Python argument name
    annotation: str
    default: Optional[str]  # Python source of the default, None when required
    checks: list[str]  # source lines validating (and normalizing) the argument
    doc: str
    # What the method passes to the args builder: the argument itself, or, for a value
    # asked of the person (spec `from_human`), its entry of the method's `human` mapping.
    value: str = ""
    human: bool = False

    def __post_init__(self) -> None:
        self.value = self.value or self.ident


@dataclass
class TypedDictView:
    name: str
    fields: list[tuple[str, str]]  # (key, annotation)

    @property
    def identifier_keys(self) -> bool:
        return all(k.isidentifier() and k not in PYTHON_RESERVED for k, _ in self.fields)


@dataclass
class ToolView:
    name: str
    attr: str  # method name
    handler: str
    args_fn: str
    params: list[ParamView]
    kind_const: str
    returns: str  # return annotation
    doc: list[str]  # docstring lines (without quotes), indented for a method body
    summary: str  # one line for the stubs
    user_only: bool
    # The tool reports progress (spec `progress: true`): the method takes on_progress.
    progress: bool = False
    # Bindings of an older release: a tool only the newest version has (the method raises
    # NotSupported), and the newest version's parameters this release lacks (the same).
    unsupported: bool = False
    absent_params: list[ParamView] = field(default_factory=list)
    # Values asked of the person: never keyword arguments of the method, only entries of its
    # keyword-only `human` mapping (`human_type`, required when `human_required`).
    human_type: str = ""
    human_required: bool = False
    human_names: tuple[str, ...] = ()
    human_required_names: tuple[str, ...] = ()

    @property
    def model_params(self) -> list[ParamView]:
        """The method's own keyword arguments (everything not asked of the person)."""
        return [p for p in self.params if not p.human]


@dataclass
class NamespaceView:
    class_name: str
    path: tuple[str, ...]
    tools: list[ToolView] = field(default_factory=list)
    children: list[tuple[str, str]] = field(default_factory=list)  # (attribute, class name)


def _param_doc(p: Param) -> str:
    bits: list[str] = [p.ref or p.type, *constraint_phrases(p)]
    if p.default is not None:
        bits.append(f"default {p.default!r}")
    desc = p.description.strip()
    return (desc + " " if desc else "") + "(" + "; ".join(bits) + ")"


def _required_param_view(p: Param) -> ParamView:
    """A parameter without default (a resource template's variable)."""
    ident = py_ident(p.name)
    return ParamView(
        name=p.name,
        ident=ident,
        annotation=param_annotation(p),
        default=None,
        checks=_param_checks(p, ident),
        doc=_param_doc(p),
    )


def _field_annotation(f: Field, owner: str, dicts: list[TypedDictView]) -> str:
    if f.type in _SCALAR_TYPES:
        return _SCALAR_TYPES[f.type]
    if f.type == "object":
        name = owner + camel(f.name) if f.name else owner + "Item"
        return _typed_dict(name, f.properties, dicts)
    if f.type == "array":
        if f.items is None:
            return "list[Any]"
        return f"list[{_field_annotation(f.items, owner + camel(f.name) if f.name else owner, dicts)}]"
    return "Any"


def _typed_dict(name: str, props: tuple[Field, ...], dicts: list[TypedDictView]) -> str:
    if not props:
        return "dict[str, Any]"
    fields = [(f.name, _field_annotation(f, name, dicts)) for f in props]
    taken = {d.name for d in dicts}
    final = name
    i = 2
    while final in taken:
        final = f"{name}{i}"
        i += 1
    dicts.append(TypedDictView(final, fields))
    return final


def _returns(tool: Tool, dicts: list[TypedDictView]) -> str:
    kind = tool.returns.kind
    if kind in _SCALAR_TYPES:
        return _SCALAR_TYPES[kind]
    if kind == "none":
        return "None"
    if kind in _MEDIA_TYPES:
        return _MEDIA_TYPES[kind]
    if kind == "content":
        return "tuple[" + ", ".join(_ITEM_TYPES[k] for k in tool.returns.items) + "]"
    return _typed_dict(camel(tool.handler) + "Result", tool.returns.properties, dicts)


def _media_types(spec: Spec) -> list[str]:
    """The runtime classes the bindings' annotations name besides ``Image`` of an image
    return (imported on their own, so the bindings of older specs do not change)."""
    names = {_ITEM_TYPES[k] for t in spec.tools for k in _items_of(t)} - {"str"}
    if any(t.returns.kind == "image" for t in spec.tools):
        names.discard("Image")
    return sorted(names)


def _items_of(tool: Tool) -> tuple[str, ...]:
    """The content kinds a tool's result carries (one for audio / resource)."""
    if tool.returns.kind in ("audio", "resource"):
        return (tool.returns.kind,)
    return tool.returns.items


def _tool_view(tool: Tool, attr: str, dicts: list[TypedDictView]) -> ToolView:
    params: list[ParamView] = []
    seen: set[str] = set()
    for p in tool.params:
        ident = py_ident(p.name)
        if ident in seen or ident == "self":
            raise ValueError(f"tool {tool.name}: parameter {p.name!r} collides with another as {ident!r}")
        seen.add(ident)
        default = None if p.default is None else py_literal(p.default)
        value = ""
        if p.human is not None:
            key = _str_literal(p.name)
            value = f"_h[{key}]" if default is None else f"_h.get({key}, {default})"
        params.append(
            ParamView(
                name=p.name,
                ident=ident,
                annotation=param_annotation(p),
                default=default,
                checks=_param_checks(p, ident),
                doc=_param_doc(p),
                value=value,
                human=p.human is not None,
            )
        )
    returns = _returns(tool, dicts)
    human = [p for p in tool.params if p.human is not None]
    human_type = ""
    if human:
        fields = tuple(Field(name=p.name, type=p.type) for p in human)
        human_type = _typed_dict(camel(tool.handler) + "Human", fields, dicts)
        # an enum's Literal, as the method's own arguments have it
        view = next(d for d in dicts if d.name == human_type)
        view.fields = [(p.name, param_annotation(p)) for p in human]
    desc = " ".join(tool.description.split())
    doc = _wrap(_doc_text(desc), 88, "") or [_doc_text(tool.name)]
    first = desc.split(". ")[0].rstrip(".")
    summary = _doc_text((first[:97] + "...") if len(first) > 100 else first + ".") if desc else tool.name
    if tool.title:
        doc = [_doc_text(tool.title), ""] + doc
    doc.append("")
    doc.append(f"MCP tool ``{_doc_text(tool.name)}``" + (" (user-only)." if tool.user_only else "."))
    if tool.confirm is not None:
        doc.append("")
        doc += _wrap(
            "Asks the person first (the bridge and the console do): "
            + _doc_text(repr(tool.confirm))
            + "; a backend calling it directly asks them itself.",
            88,
            "",
        )
    if params:
        doc.append("")
        doc.append("Args:")
        for pv in params:
            if not pv.human:
                doc += _wrap(f"{pv.ident}: {_doc_text(pv.doc)}", 88, "    ")
        if human:
            doc += _wrap(
                "human: the values asked of the person (spec from_human), never the model's: "
                + "; ".join(
                    f"{_doc_text(repr(p.name))}: {_doc_text(_param_doc(p))}"
                    + (f" asked as {_doc_text(repr(p.human))}" if p.human else "")
                    for p in human
                ),
                88,
                "    ",
            )
    if tool.progress:
        doc += ([] if params else ["", "Args:"]) + _wrap(
            "on_progress: ``on_progress(progress, total, message)`` (plain or async) for each "
            "progress report of the call (the tool reports progress; total and message may be None)",
            88,
            "    ",
        )
    rdesc = tool.returns.description.strip()
    doc.append("")
    shown = "[" + ", ".join(tool.returns.items) + "]" if tool.returns.kind == "content" else tool.returns.kind
    doc.append(f"Returns: {shown}" + (f" -- {_doc_text(rdesc)}" if rdesc else ""))
    return ToolView(
        name=tool.name,
        attr=attr,
        handler=tool.handler,
        args_fn="args_" + py_ident(tool.handler).rstrip("_"),
        params=params,
        kind_const=_KIND_CONST[tool.returns.kind],
        returns=returns,
        doc=doc,
        summary=summary,
        user_only=tool.user_only,
        progress=tool.progress,
        human_type=human_type,
        human_required=any(p.required for p in human),
        human_names=tuple(p.name for p in human),
        human_required_names=tuple(p.name for p in human if p.required),
    )


def _namespaces(
    spec: Spec, root_class: str, dicts: list[TypedDictView], newest: Optional[Spec] = None
) -> list[NamespaceView]:
    """Namespace classes, parents before children; the first is the device class.

    With ``newest`` (the bindings of an older release) the classes have the newest version's
    shape: its tools and parameters this release lacks are there too, and raise NotSupported.
    """
    root = NamespaceView(root_class, ())
    by_path: dict[tuple[str, ...], NamespaceView] = {(): root}
    order = [root]
    leaves: dict[tuple[str, ...], str] = {}
    args_fns: dict[str, str] = {}
    own = {t.name for t in spec.tools}
    extra = [t for t in newest.tools if t.name not in own] if newest is not None else []
    for tool in list(spec.tools) + extra:
        path = tuple(py_ident(part) for part in python_path(tool.name))
        if not path:
            raise ValueError(f"tool {tool.name}: no Python name")
        if path in leaves:
            raise ValueError(f"tools {leaves[path]} and {tool.name} map to the same method {'.'.join(path)}")
        if path in by_path:
            raise ValueError(f"tool {tool.name}: {'.'.join(path)} is also a namespace of other tools")
        leaves[path] = tool.name
        for depth in range(1, len(path)):
            prefix = path[:depth]
            if prefix in leaves:
                raise ValueError(f"tool {tool.name}: {'.'.join(prefix)} is also the tool {leaves[prefix]}")
            if prefix not in by_path:
                ns = NamespaceView(camel("_".join(prefix)) + "Tools", prefix)
                by_path[prefix] = ns
                order.append(ns)
                by_path[prefix[:-1]].children.append((prefix[-1], ns.class_name))
        parent = by_path[path[:-1]]
        view = _tool_view(tool, path[-1], [] if tool.name not in own else dicts)
        if tool.name not in own:
            view.unsupported = True
            parent.tools.append(view)
            continue
        if newest is not None and tool.name in {t.name for t in newest.tools}:
            # The newest version's signature: on_progress too (this release may send none).
            view.progress = view.progress or newest.tool(tool.name).progress
            mine = {p.name for p in tool.params}
            later = [p for p in newest.tool(tool.name).params if p.name not in mine and p.default is not None]
            view.absent_params = _tool_view(dataclasses.replace(tool, params=tuple(later)), "_", []).params
        if view.args_fn in args_fns:
            raise ValueError(f"tools {args_fns[view.args_fn]} and {tool.name} have the same handler name")
        args_fns[view.args_fn] = tool.name
        parent.tools.append(view)
    for name in list(root.children) + [(t.attr, "") for t in root.tools]:
        if name[0] in _CLASS_RESERVED:
            raise ValueError(f"{name[0]!r} is reserved in the bindings class; rename the tool")
    classes = {ns.class_name for ns in order[1:]}
    if root_class in classes or len(classes) != len(order) - 1:
        raise ValueError("namespace class names collide; rename the tools")
    td_names = {d.name for d in dicts}
    clash = td_names & (classes | {root_class, root_class + "Fanout"})
    if clash:
        raise ValueError(f"generated names collide: {sorted(clash)}")
    return order


def _spec_table(spec: Spec) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for t in spec.tools:
        entry: dict[str, Any] = {
            "name": t.name,
            "python_path": tuple(py_ident(p) for p in python_path(t.name)),
            "description": t.description,
            "title": t.title,
            "returns": t.returns.kind,
            "user_only": t.user_only,
            "input_schema": input_schema(t, spec.types),
            "output_schema": output_schema(t),
        }
        table[t.name] = entry
    return table


def _defs_of(spec: Spec, name: str) -> dict[str, Any]:
    """The ``$defs`` a named type's checks need: it and every type it uses."""
    probe = (Param(name="_", type="object", ref=name),)
    return {t.name: object_schema(t.fields, t.description) for t in used_types(probe, spec.types)}


def context(spec: Spec, newest: Optional[Spec] = None) -> dict[str, Any]:
    """The template context (exposed for tests and other emitters); with ``newest``, of the
    bindings module of an older release (``spec``) inside the newest version's package."""
    slug = device_slug(spec.device.name)
    cls = device_class(spec.device.name)
    dicts: list[TypedDictView] = []
    namespaces = _namespaces(spec, cls, dicts, newest)
    patterns = sorted(
        {p.pattern for t in spec.tools for p in t.params if p.pattern is not None}
        | {p.pattern for r in spec.resources for p in r.params if p.pattern is not None}
    )
    views = {t.name: t for ns in namespaces for t in ns.tools}
    tools = [views[t.name] for t in spec.tools]
    exports = [cls] + [ns.class_name for ns in namespaces[1:]] + [d.name for d in dicts]
    version = spec.device.version if _VERSION_RE.match(spec.device.version) else "0.0.0"
    desc = spec.device.description.strip()
    ctx = {
        "spec": spec,
        "header": generated_header(spec, "#"),
        "package": f"{slug}_tools",
        "dist_name": f"{slug.replace('_', '-')}-tools",
        "dist_version": version,
        "mcpgen_version": _release(mcpgen.__version__),
        "mcpgen_next_minor": _next_minor(mcpgen.__version__),
        "cls": cls,
        "device_name": spec.device.name,
        "device_version": spec.device.version,
        "protocol_version": spec.device.protocol_version,
        "device_doc": _doc_text(desc) if desc else f"Device {spec.device.name}.",
        "fingerprint": spec.fingerprint,
        "root": namespaces[0],
        "namespaces": namespaces[1:],
        "all_namespaces": namespaces,
        "typed_dicts": dicts,
        "tools": tools,
        "patterns": patterns,
        "object_types": {
            t.name: py_literal({"$ref": DEFS_REF + t.name, "$defs": _defs_of(spec, t.name)})
            for t in spec.types
        },
        "spec_table": py_literal(_spec_table(spec)),
        "kinds": {t.name: t.returns.kind for t in spec.tools},
        "exports": exports,
        "uses_image": any(t.returns.kind == "image" for t in spec.tools),
        # The runtime classes the annotations name beside Image, and the rich KIND_* used.
        "media_types": _media_types(spec),
        "rich_kinds": [k for k in RICH_KINDS if any(t.returns.kind == k for t in spec.tools)],
        "uses_literal": any(p.enum for t in spec.tools for p in t.params),
        "uses_progress": any(t.progress for t in spec.tools),
        "uses_human": any(p.human is not None for t in spec.tools for p in t.params),
    }
    add_event_context(ctx, spec)
    own_events = {e.name for e in spec.events}
    ctx["absent_events"] = [e.name for e in newest.events if e.name not in own_events] if newest else []
    if ctx["absent_events"] and not ctx["events_class"]:
        ctx["events_class"] = cls + "Events"
    ctx["supported"] = py_literal({t.name: tuple(p.name for p in t.params) for t in spec.tools})
    ctx["releases"] = {}
    ctx["older"] = []
    ctx["release_of"] = newest.fingerprint if newest is not None else ""
    add_resource_context(ctx, spec, _required_param_view)
    # An older release still has the newest version's ``resources`` attribute (the .pyi
    # declares it): a resource only a newer version serves raises NotSupported, nothing sent.
    own_resources = {r.name for r in spec.resources}
    later = newest.resources if newest is not None else ()
    ctx["absent_resources"] = [(py_ident(r.name), r.name) for r in later if r.name not in own_resources]
    if ctx["absent_resources"] and not ctx["resources_class"]:
        ctx["resources_class"] = cls + "Resources"
    # Only the helpers the module's code uses: the return kinds of its tools, and _INF for a
    # number check without a bound.
    ctx["kind_consts"] = sorted({t.kind_const for ns in namespaces for t in ns.tools})
    checked: list[Any] = [*tools, *cast("list[Any]", ctx.get("resources", []))]
    lines = [line for v in checked for p in v.params for line in p.checks]
    lines += [line for e in cast("list[Any]", ctx.get("events", [])) for f in e.fields for line in f.checks]
    ctx["uses_inf"] = any("_INF" in line for line in lines)
    ctx["uses_not_supported"] = bool(
        ctx["absent_events"]
        or ctx["absent_resources"]
        or any(t.unsupported or t.absent_params for ns in namespaces for t in ns.tools)
    )
    return ctx


def _clip(text: str, width: int) -> str:
    """A one-line docstring ``text`` cut to ``width`` characters (ending in ``...``), so its
    line stays within the project's line-length."""
    if len(text) <= width:
        return text
    return text[: width - 3].rstrip(" .\\") + "..."


def _split_top(text: str) -> list[str]:
    """``text`` split at its commas outside brackets and string literals."""
    parts: list[str] = []
    depth = 0
    quote = ""
    cur = ""
    for ch in text:
        if quote:
            quote = "" if ch == quote and not cur.endswith("\\") else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def wrap_defs(text: str) -> str:
    """Every ``def`` line longer than the project's line-length split as ruff format splits
    it: the parameters on one line of their own if they fit there, else one per line with a
    trailing comma (so the generated Python is already in the project's format)."""
    out: list[str] = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if len(line) <= PY_LINE or not stripped.startswith(("def ", "async def ")):
            out.append(line)
            continue
        indent = line[: len(line) - len(stripped)]
        open_at = line.index("(")
        depth = 0
        close_at = open_at
        for i in range(open_at, len(line)):
            depth += line[i] in "([{"
            depth -= line[i] in ")]}"
            if depth == 0:
                close_at = i
                break
        head, body, tail = line[: open_at + 1], line[open_at + 1 : close_at], line[close_at:]
        inner = indent + "    "
        if len(inner) + len(body) <= PY_LINE:
            out += [head, inner + body, indent + tail]
        else:
            out += [head] + [f"{inner}{p}," for p in _split_top(body)] + [indent + tail]
    return "\n".join(out)


def release_module(version: str) -> str:
    """The module of an older release's bindings: ``_release_0_3_1`` for 0.3.1."""
    return "_release_" + re.sub(r"[^A-Za-z0-9]", "_", version)


def _release(version: str) -> str:
    """``0.2.0`` of ``0.2.0``, ``0.2.0.dev3`` or ``0.2.0+local``."""
    match = re.match(r"\d+(\.\d+)*", version)
    return match.group(0) if match else "0"


def _next_minor(version: str) -> str:
    """The first release that may break the bindings' runtime API: ``0.3`` for ``0.2.x``."""
    parts = [int(x) for x in _release(version).split(".")] + [0, 0]
    return f"{parts[0]}.{parts[1] + 1}"


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON string escapes are valid TOML)."""
    return json.dumps(text, ensure_ascii=False)


def emit(spec: Spec, releases: Sequence[Release] = ()) -> dict[str, str]:
    """Relative path -> content of every bindings file.

    ``releases`` (the history beside the spec, which ``BuildContext`` reads: emitters touch
    no disk) become one module each, so the bindings serve a device of any released
    version typed by its own version.
    """
    env = environment(
        TEMPLATE_DIR, {"lit": py_literal, "strlit": _str_literal, "tomlstr": _toml_string, "clip": _clip}
    )
    ctx = context(spec)
    pkg = f"python/{ctx['package']}"
    older = [r for r in releases if r.fingerprint != spec.fingerprint]
    ctx["releases"] = {r.fingerprint: r.version for r in older} | {spec.fingerprint: spec.device.version}
    ctx["older"] = [(release_module(r.version), r.fingerprint) for r in older]
    out: dict[str, str] = {}
    for r in older:
        octx = context(r.spec, newest=spec)
        octx["header"] = ctx["header"] + f"# Released version {r.version} (fingerprint {r.fingerprint}).\n"
        name = release_module(r.version)
        out[f"{pkg}/{name}.py"] = wrap_defs(env.get_template("bindings.py.j2").render(**octx))
        out[f"{pkg}/{name}.pxd"] = env.get_template("bindings.pxd.j2").render(**octx)
    files = {
        f"{pkg}/_bindings.py": "bindings.py.j2",
        f"{pkg}/_bindings.pxd": "bindings.pxd.j2",
        f"{pkg}/_bindings.pyi": "bindings.pyi.j2",
        f"{pkg}/__init__.py": "init.py.j2",
        f"{pkg}/py.typed": "py.typed.j2",
        "python/setup.py": "setup.py.j2",
        "python/pyproject.toml": "pyproject.toml.j2",
    }
    for path, tpl in files.items():
        text = env.get_template(tpl).render(**ctx)
        out[path] = wrap_defs(text) if path.endswith((".py", ".pyi")) else text
    return out


__all__ = ["emit", "context", "param_annotation", "py_literal", "py_ident", "TEMPLATE_DIR"]
