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

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import mcpgen
from mcpgen.codegen.emit.events_py import add_event_context
from mcpgen.codegen.emit.header import generated_header
from mcpgen.codegen.emit.resources_py import add_resource_context
from mcpgen.codegen.emit.templating import TEMPLATES_ROOT, environment
from mcpgen.codegen.spec.mcp_json import input_schema, output_schema
from mcpgen.codegen.spec.model import Field, Param, Spec, Tool
from mcpgen.codegen.spec.names import PYTHON_RESERVED, camel, device_class, device_slug, python_path
from mcpgen.protocol import RETURN_KINDS

TEMPLATE_DIR = TEMPLATES_ROOT / "python"

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# The codec's C-level constant of each return kind (runtime/codec.pxd).
_KIND_CONST = {kind: f"_K_{kind.upper()}" for kind in RETURN_KINDS}
_SCALAR_TYPES = {"boolean": "bool", "integer": "int", "number": "float", "string": "str"}
# Attributes of the generated classes that tools must not shadow.
_CLASS_RESERVED = frozenset({"FINGERPRINT", "SPEC", "DEVICE_NAME", "DEVICE_VERSION", "device"})
_VERSION_RE = re.compile(r"^\d+(\.\d+)*$")


# -- Python literals and identifiers ---------------------------------------------------------


def py_literal(value: Any, indent: int = 0) -> str:
    """Deterministic Python source for JSON-like data (dict order kept)."""
    pad = " " * (indent + 4)
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            raise ValueError(f"non-finite number {value!r} in spec")
        return repr(value)
    if isinstance(value, str):
        return _str_literal(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return "()" if isinstance(value, tuple) else "[]"
        items = [py_literal(v, indent + 4) for v in value]
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ",\n".join(
            f"{pad}{_str_literal(str(k))}: {py_literal(v, indent + 4)}" for k, v in value.items()
        )
        return "{\n" + inner + ",\n" + " " * indent + "}"
    raise TypeError(f"cannot write {type(value).__name__} as a Python literal")


def _str_literal(s: str) -> str:
    """A double-quoted string literal (repr, but stable in quote choice)."""
    body = s.replace("\\", "\\\\").replace('"', '\\"')
    out = []
    for ch in body:
        code = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def py_ident(name: str) -> str:
    """A Python identifier for a spec name (keywords get a trailing ``_``)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not ident:
        ident = "_"
    if ident[0].isdigit():
        ident = "n" + ident
    if ident in PYTHON_RESERVED:
        ident += "_"
    return ident


def _doc_text(text: str) -> str:
    """Text safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip()


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


@dataclass
class NamespaceView:
    class_name: str
    path: tuple[str, ...]
    tools: list[ToolView] = field(default_factory=list)
    children: list[tuple[str, str]] = field(default_factory=list)  # (attribute, class name)


def _num(v: Any) -> str:
    return repr(v)


def _param_checks(p: Param, ident: str) -> list[str]:
    n = _str_literal(p.name)
    if p.type == "boolean":
        return [
            f"if {ident} is not True and {ident} is not False:",
            f"    {ident} = _v.check_bool({n}, {ident})",
        ]
    if p.type == "integer":
        lo = p.minimum if p.minimum is not None else INT64_MIN
        hi = p.maximum if p.maximum is not None else INT64_MAX
        if isinstance(lo, float):
            lo = math.ceil(lo)
        if isinstance(hi, float):
            hi = math.floor(hi)
        return [
            f"if type({ident}) is not int or {ident} < {_num(lo)} or {ident} > {_num(hi)}:",
            f"    {ident} = _v.check_int({n}, {ident}, {_num(lo)}, {_num(hi)})",
        ]
    if p.type == "number":
        lo_c = f"{_num(p.minimum)} <= {ident}" if p.minimum is not None else f"-_INF < {ident}"
        hi_c = f"{ident} <= {_num(p.maximum)}" if p.maximum is not None else f"{ident} < _INF"
        lo_a = _num(p.minimum) if p.minimum is not None else "None"
        hi_a = _num(p.maximum) if p.maximum is not None else "None"
        return [
            f"if (type({ident}) is not float and type({ident}) is not int) or not ({lo_c} and {hi_c}):",
            f"    {ident} = _v.check_number({n}, {ident}, {lo_a}, {hi_a})",
        ]
    # string
    conds = [f"type({ident}) is not str"]
    ml = "None"
    en = "None"
    pat = "None"
    if p.max_length is not None:
        conds.append(f"len({ident}) > {p.max_length}")
        ml = str(p.max_length)
    if p.enum:
        en = py_literal(tuple(p.enum))
        conds.append(f"{ident} not in {en}")
    if p.pattern is not None:
        pat = f"_PATTERNS[{_str_literal(p.pattern)}]"
        conds.append(f"{pat}.search({ident}) is None")
    return [
        f"if {' or '.join(conds)}:",
        f"    {ident} = _v.check_str({n}, {ident}, {ml}, {en}, {pat})",
    ]


def param_annotation(p: Param) -> str:
    """The Python type of an argument: ``Literal["a", "b"]`` for an enum, so mypy catches typos."""
    if p.enum:
        return "Literal[" + ", ".join(_str_literal(v) for v in p.enum) + "]"
    return _SCALAR_TYPES[p.type]


def _param_doc(p: Param) -> str:
    bits: list[str] = [p.type]
    if p.minimum is not None or p.maximum is not None:
        lo = "" if p.minimum is None else _num(p.minimum)
        hi = "" if p.maximum is None else _num(p.maximum)
        bits.append(f"{lo}..{hi}")
    if p.max_length is not None:
        bits.append(f"at most {p.max_length} characters")
    if p.enum:
        bits.append("one of " + ", ".join(p.enum))
    if p.pattern is not None:
        bits.append(f"matching {p.pattern}")
    if p.default is not None:
        bits.append(f"default {p.default!r}")
    desc = p.description.strip()
    return (desc + " " if desc else "") + "(" + "; ".join(bits) + ")"


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
    if kind == "image":
        return "Image"
    return _typed_dict(camel(tool.handler) + "Result", tool.returns.properties, dicts)


def _tool_view(tool: Tool, attr: str, dicts: list[TypedDictView]) -> ToolView:
    params: list[ParamView] = []
    seen: set[str] = set()
    for p in tool.params:
        ident = py_ident(p.name)
        if ident in seen or ident == "self":
            raise ValueError(f"tool {tool.name}: parameter {p.name!r} collides with another as {ident!r}")
        seen.add(ident)
        params.append(
            ParamView(
                name=p.name,
                ident=ident,
                annotation=param_annotation(p),
                default=None if p.default is None else py_literal(p.default),
                checks=_param_checks(p, ident),
                doc=_param_doc(p),
            )
        )
    returns = _returns(tool, dicts)
    desc = " ".join(tool.description.split())
    doc = _wrap(_doc_text(desc), 88, "") or [_doc_text(tool.name)]
    first = desc.split(". ")[0].rstrip(".")
    summary = _doc_text((first[:97] + "...") if len(first) > 100 else first + ".") if desc else tool.name
    if tool.title:
        doc = [_doc_text(tool.title), ""] + doc
    doc.append("")
    doc.append(f"MCP tool ``{_doc_text(tool.name)}``" + (" (user-only)." if tool.user_only else "."))
    if params:
        doc.append("")
        doc.append("Args:")
        for pv in params:
            doc += _wrap(f"{pv.ident}: {_doc_text(pv.doc)}", 88, "    ")
    rdesc = tool.returns.description.strip()
    doc.append("")
    doc.append(f"Returns: {tool.returns.kind}" + (f" -- {_doc_text(rdesc)}" if rdesc else ""))
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
    )


def _namespaces(spec: Spec, root_class: str, dicts: list[TypedDictView]) -> list[NamespaceView]:
    """Namespace classes, parents before children; the first is the device class."""
    root = NamespaceView(root_class, ())
    by_path: dict[tuple[str, ...], NamespaceView] = {(): root}
    order = [root]
    leaves: dict[tuple[str, ...], str] = {}
    args_fns: dict[str, str] = {}
    for tool in spec.tools:
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
        view = _tool_view(tool, path[-1], dicts)
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
    clash = td_names & (classes | {root_class})
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
            "input_schema": input_schema(t),
            "output_schema": output_schema(t),
        }
        table[t.name] = entry
    return table


def context(spec: Spec) -> dict[str, Any]:
    """The template context (exposed for tests and other emitters)."""
    slug = device_slug(spec.device.name)
    cls = device_class(spec.device.name)
    dicts: list[TypedDictView] = []
    namespaces = _namespaces(spec, cls, dicts)
    patterns = sorted(
        {p.pattern for t in spec.tools for p in t.params if p.pattern is not None}
        | {p.pattern for r in spec.resources for p in r.params if p.pattern is not None}
    )
    for pat in patterns:
        re.compile(pat)
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
        "spec_table": py_literal(_spec_table(spec)),
        "kinds": {t.name: t.returns.kind for t in spec.tools},
        "exports": exports,
        "uses_image": any(t.returns.kind == "image" for t in spec.tools),
        "uses_literal": any(p.enum for t in spec.tools for p in t.params),
    }
    add_event_context(ctx, spec)
    add_resource_context(ctx, spec)
    return ctx


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


def emit(spec: Spec) -> dict[str, str]:
    """Relative path -> content of every bindings file."""
    env = environment(TEMPLATE_DIR, {"lit": py_literal, "strlit": _str_literal, "tomlstr": _toml_string})
    ctx = context(spec)
    pkg = f"python/{ctx['package']}"
    files = {
        f"{pkg}/_bindings.py": "bindings.py.j2",
        f"{pkg}/_bindings.pxd": "bindings.pxd.j2",
        f"{pkg}/_bindings.pyi": "bindings.pyi.j2",
        f"{pkg}/__init__.py": "init.py.j2",
        f"{pkg}/py.typed": "py.typed.j2",
        "python/setup.py": "setup.py.j2",
        "python/pyproject.toml": "pyproject.toml.j2",
    }
    return {path: env.get_template(tpl).render(**ctx) for path, tpl in files.items()}


__all__ = ["emit", "context", "param_annotation", "py_literal", "py_ident", "TEMPLATE_DIR"]
