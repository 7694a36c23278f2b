"""Rules for a tool's ``returns``: a kind, or an object with typed (nested) properties."""

from __future__ import annotations

from typing import Any

import yaml

from mcpgen.codegen.spec.model import (
    FIELD_TYPES,
    ContentItemKind,
    Field,
    Returns,
)
from mcpgen.codegen.spec.rules.base import (
    BAD,
    CheckerBase,
    join_path,
    peek,
    scalar_or_none,
)
from mcpgen.codegen.spec.rules.names import (
    field_name_problem,
)
from mcpgen.codegen.spec.rules.tables import (
    ALL_FIELD_KEYS,
    FIELD_KEYS_BY_TYPE,
    MAX_CONTENT_ITEMS,
    MAX_FIELD_DEPTH,
    RETURNS_KEYS,
    SIMPLE_RETURN_KINDS,
)
from mcpgen.codegen.spec.spec_errors import did_you_mean
from mcpgen.codegen.spec.yaml_source import (
    describe,
)
from mcpgen.protocol import CONTENT_ITEM_KINDS

# What people write for an item kind that MCP names otherwise.
_ITEM_ALIASES = {"string": "text", "str": "text", "blob": "resource", "sound": "audio", "png": "image"}


class ReturnRules(CheckerBase):
    # -- return values ---------------------------------------------------------------------

    def returns(self, node: yaml.Node, path: str) -> Any:
        if isinstance(node, yaml.SequenceNode):
            return self.content_items(node, path)
        if isinstance(node, yaml.ScalarNode):
            value = self.scalar(node, path, "a return kind")
            if value is BAD:
                return BAD
            if value == "object":
                self.error(
                    node,
                    path,
                    "an object return needs its properties",
                    "write `returns: {type: object, properties: {name: {type: string}}}`",
                )
                return BAD
            # a valid kind needs no close-match lookup (the costly step at 100,000 tools)
            near_object = isinstance(value, str) and value not in SIMPLE_RETURN_KINDS
            if near_object and "`object`" in did_you_mean(str(value), (*SIMPLE_RETURN_KINDS, "object")):
                kinds = ", ".join(SIMPLE_RETURN_KINDS)
                hint = "did you mean an object? write `returns: {type: object, properties: {...}}`"
                self.error(
                    node, path, f"expected a return kind (one of {kinds}), got {describe(value)}", hint
                )
                return BAD
            if value in ("content", "text"):
                kinds = ", ".join(SIMPLE_RETURN_KINDS)
                hint = (
                    "several content items are a list of their kinds: `returns: [text, image]`"
                    if value == "content"
                    else "a text result is `returns: string` (`text` names an item of a list: [text, image])"
                )
                got = describe(value)
                self.error(node, path, f"expected a return kind (one of {kinds}), got {got}", hint)
                return BAD
            kind = self.choice(node, path, SIMPLE_RETURN_KINDS, "a return kind")
            return BAD if kind is BAD else Returns(kind=kind)
        declared = peek(node, "type")
        m = self.mapping(
            node,
            path,
            allowed=RETURNS_KEYS,
            required=("type", "properties") if declared in (None, "object") else ("type",),
            missing_hints={"type": "add `type: object`"},
            what="a return kind or an object mapping",
        )
        if m is None:
            return BAD
        ok = True
        if "type" in m:
            tnode = m["type"][1]
            t = self.scalar(tnode, f"{path}.type", "object")
            if t is not BAD and t != "object":
                hint = f"write `returns: {t}`" if t in SIMPLE_RETURN_KINDS else ""
                self.error(
                    tnode, f"{path}.type", f"expected `object` in a returns mapping, got {describe(t)}", hint
                )
                ok = False
            ok &= t is not BAD
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description", nonempty=False)
            ok &= description is not BAD
        props: Any = ()
        if "properties" in m:
            props = self.properties(m["properties"][1], f"{path}.properties")
            ok &= props is not BAD
        if not ok:
            return BAD
        return Returns(kind="object", description=description, properties=props)

    def content_items(self, node: yaml.SequenceNode, path: str) -> Any:
        """``returns: [text, image, ...]``: a result of several MCP content items, in order."""
        kinds = ", ".join(CONTENT_ITEM_KINDS)
        if not node.value:
            self.error(
                node,
                path,
                "expected at least one content kind in the list",
                f"write e.g. `returns: [text, image]` (kinds: {kinds})",
            )
            return BAD
        if len(node.value) > MAX_CONTENT_ITEMS:
            count = len(node.value)
            self.error(
                node,
                path,
                f"expected at most {MAX_CONTENT_ITEMS} content items, got {count}",
                "return fewer items, or put several values in one text or resource item",
            )
            return BAD
        items: list[ContentItemKind] = []
        for i, item in enumerate(node.value):
            ipath = f"{path}[{i}]"
            value = self.scalar(item, ipath, "a content kind")
            if value is BAD:
                return BAD
            if value not in CONTENT_ITEM_KINDS:
                alias = _ITEM_ALIASES.get(str(value))
                hint = f"write `{alias}`" if alias else did_you_mean(str(value), CONTENT_ITEM_KINDS)
                if not hint:
                    hint = f"a list item is one MCP content kind: {kinds}"
                self.error(item, ipath, f"expected a content kind ({kinds}), got {describe(value)}", hint)
                return BAD
            items.append(value)
        return Returns(kind="content", items=tuple(items))

    def properties(self, node: yaml.Node, path: str) -> Any:
        m = self.mapping(node, path, what="a mapping of property name to field")
        if m is None:
            return BAD
        fields = []
        ok = True
        for fname, (knode, vnode) in m.items():
            fpath = join_path(path, fname)
            problem = field_name_problem(fname)
            if problem:
                self.error(
                    knode,
                    fpath,
                    f"property name `{fname}` {problem}",
                    "property names become attributes of typed results; rename it",
                )
                ok = False
            f = self.field(fname, vnode, fpath)
            if f is BAD:
                ok = False
            else:
                fields.append(f)
        return tuple(sorted(fields, key=lambda f: f.name)) if ok else BAD

    def field(self, name: str, node: yaml.Node, path: str) -> Any:
        if path.count(".properties") + path.count(".items") > MAX_FIELD_DEPTH:
            self.error(
                node, path, f"fields nest deeper than {MAX_FIELD_DEPTH} levels", "is an alias recursive?"
            )
            return BAD
        if isinstance(node, yaml.ScalarNode) and scalar_or_none(node) in FIELD_TYPES:
            self.error(
                node,
                path,
                f"expected a field mapping, got {describe(node.value)}",
                f"write `{name or 'items'}: {{type: {node.value}}}`",
            )
            return BAD
        ftype: Any = BAD
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == "type":
                    ftype = self.choice(v, f"{path}.type", FIELD_TYPES, "a field type")
                    break
        allowed = FIELD_KEYS_BY_TYPE[ftype] if ftype is not BAD else ALL_FIELD_KEYS
        key_hint = {
            "properties": "`properties` applies to object fields only",
            "items": "`items` applies to array fields only",
        }
        required = ("type",) + (
            ("properties",) if ftype == "object" else ("items",) if ftype == "array" else ()
        )
        m = self.mapping(
            node,
            path,
            allowed=allowed,
            required=required,
            what="a field mapping",
            key_hint=key_hint,
            missing_hints={"type": "add `type:` " + ", ".join(FIELD_TYPES)},
        )
        if m is None or ftype is BAD:
            return BAD
        ok = True
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description", nonempty=False)
            ok &= description is not BAD
        props: Any = ()
        if "properties" in m:
            props = self.properties(m["properties"][1], f"{path}.properties")
            ok &= props is not BAD
        items: Any = None
        if "items" in m:
            items = self.field("", m["items"][1], f"{path}.items")
            ok &= items is not BAD
        if (
            not ok
            or ("properties" in required and "properties" not in m)
            or ("items" in required and items is None)
        ):
            return BAD
        return Field(name=name, type=ftype, description=description, properties=props, items=items)
