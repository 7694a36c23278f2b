"""The ``types:`` section of a spec: named object shapes, written once and used by name.

::

    types:
      Color:
        description: An RGB colour.
        fields:
          r: {type: integer, min: 0, max: 255}
          g: {type: integer, min: 0, max: 255}
          b: {type: integer, min: 0, max: 255}
    tools:
      - name: self.light.set_color
        params:
          color: {type: Color}

A type's ``fields`` follow the rules of tool parameters (``ParamRules``: same scalar types,
ranges, enums, lengths, patterns, defaults and messages), and a field may itself name
another type. A parameter or field of a named type is always required. A type may not
contain itself, directly or through others: the device decodes into fixed C++ structs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import yaml

from mcpgen.codegen.spec.model import ObjectType, Param
from mcpgen.codegen.spec.names import CPP_KEYWORDS, PYTHON_RESERVED
from mcpgen.codegen.spec.rules.base import join_path
from mcpgen.codegen.spec.spec_errors import SpecError

if TYPE_CHECKING:  # the checker imports this module
    from mcpgen.codegen.spec.rules.top import SpecChecker

TYPE_KEYS = ("description", "fields")
# CamelCase, as a C++ struct: the name is the struct's name on the device and the key of
# `$defs` in the published schema.
TYPE_NAME_RE = re.compile(r"^[A-Z][A-Za-z0-9]{0,62}$")


def _suggest(name: str) -> str:
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    out = "".join(p[:1].upper() + p[1:] for p in parts)
    return out if out[:1].isalpha() else "T" + out or "MyType"


def type_name_problem(name: str) -> Optional[tuple[str, str]]:
    """(problem, hint) when ``name`` cannot name a type, else None."""
    if not TYPE_NAME_RE.match(name):
        return (
            "is not a CamelCase name (a capital letter, then letters and digits, at most 63)",
            f"types become C++ structs; write it like `{_suggest(name)}`",
        )
    if name.endswith("Args"):
        return ("ends with `Args`", "the generated argument structs end with `Args`; choose another name")
    if name in CPP_KEYWORDS or name in PYTHON_RESERVED:
        return ("is reserved in C++ or Python", "choose another name")
    return None


def collect_type_names(checker: SpecChecker, node: yaml.Node) -> dict[str, yaml.Node]:
    """The declared type names (-> key node), read before tools so a parameter can name one;
    a bad name is reported here."""
    m = checker.mapping(node, "types", what="a mapping of type name to `{description, fields}`")
    names: dict[str, yaml.Node] = {}
    for name, (knode, _vnode) in (m or {}).items():
        problem = type_name_problem(name)
        if problem:
            checker.error(knode, join_path("types", name), f"type name `{name}` {problem[0]}", problem[1])
            continue
        names[name] = knode
    return names


def check_types(checker: SpecChecker, node: yaml.Node) -> tuple[ObjectType, ...]:
    """The model of ``types:`` (declared order); errors go to ``checker``."""
    m = checker.mapping(node, "types", what="a mapping of type name to `{description, fields}`")
    out: list[ObjectType] = []
    for name, (knode, vnode) in (m or {}).items():
        if name not in checker.type_names:
            continue  # its name was refused
        path = join_path("types", name)
        t = checker.mapping(
            vnode,
            path,
            allowed=TYPE_KEYS,
            required=("fields",),
            what="a type mapping with `fields`",
            key_hint={"params": "a type's members are its `fields`", "properties": "write `fields`"},
            missing_hints={"fields": "add `fields:` mapping each field name to `{type: ...}`"},
        )
        if t is None:
            continue
        description = ""
        if "description" in t:
            description = checker.string(t["description"][1], f"{path}.description", nonempty=False)
        fields: tuple[Param, ...] = ()
        if "fields" in t:
            fields = checker.params(t["fields"][1], f"{path}.fields", named_types=True)
            if not fields and "fields" in t:
                checker.error(t["fields"][1], f"{path}.fields", "expected at least one field", "add a field")
        out.append(ObjectType(name=name, description=description, fields=fields, pos=checker.pos(knode)))
    _check_cycles(checker, out)
    return tuple(out)


def _check_cycles(checker: SpecChecker, types: list[ObjectType]) -> None:
    """A type that contains itself (``A.b: B``, ``B.a: A``) is an error at the field that
    closes the loop."""
    by_name = {t.name: t for t in types}
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in done or name not in by_name:
            return
        stack = [*trail, name]
        for f in by_name[name].fields:
            if f.ref is None:
                continue
            if f.ref in stack:
                loop = " -> ".join([*stack[stack.index(f.ref) :], f.ref])
                checker.errors.append(
                    SpecError(
                        checker.file,
                        f.pos.line if f.pos else 1,
                        f.pos.column if f.pos else 1,
                        f"types.{name}.fields.{f.name}",
                        f"type `{f.ref}` contains itself ({loop})",
                        "a device decodes into fixed structs: break the loop (a type cannot hold itself)",
                    )
                )
                continue
            visit(f.ref, stack)
        done.add(name)

    for t in types:
        visit(t.name, [])
