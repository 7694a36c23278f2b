"""What every rule family shares: reporting an error at a node's position, and reading
mappings, lists and typed scalars with one message per mistake.

Every check reports a ``SpecError`` and carries on, so one run lists every problem of a
file.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, Optional, Union

import yaml

from mcpgen.codegen.spec.model import (
    SourcePos,
)
from mcpgen.codegen.spec.rules.tables import (
    KEY_ALIASES,
    MISSING_HINTS,
    TYPE_ALIASES,
)
from mcpgen.codegen.spec.spec_errors import SpecError, did_you_mean
from mcpgen.codegen.spec.yaml_source import (
    TAG_MAP,
    TAG_SEQ,
    BadScalar,
    UnsupportedTag,
    describe,
    describe_node,
    scalar_value,
)

BAD: Any = object()  # sentinel: the value was invalid (an error has been recorded)


def article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def fmt_num(x: Union[int, float]) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def join_path(base: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_\-]+", key):
        return f"{base}.{key}" if base else key
    return f"{base}[{json.dumps(key)}]"


# `"\0"` is a valid YAML escape, but every string of a spec ends up in C++ string literals
# and C strings, where a NUL cuts it short.
NUL_MESSAGE = "the text contains a NUL character (`\\0`), which C++ strings cannot hold"
NUL_HINT = "remove the `\\0` escape"


class CheckerBase:
    """Walks the node tree of one file; ``errors`` collects every problem."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.errors: list[SpecError] = []
        self.page_size: Optional[int] = None  # known once device.page_size validated
        self.response_buffer: Optional[int] = None  # likewise device.response_buffer

    # -- reporting -------------------------------------------------------------------------

    def error(self, node: Optional[yaml.Node], path: str, message: str, hint: str = "") -> None:
        if node is None:
            line, column = 1, 1
        else:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
        self.errors.append(SpecError(self.file, line, column, path, message, hint))

    def pos(self, node: yaml.Node) -> SourcePos:
        return SourcePos(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    # -- structure -------------------------------------------------------------------------

    def mapping(
        self,
        node: yaml.Node,
        path: str,
        *,
        allowed: Optional[Sequence[str]] = None,
        required: Sequence[str] = (),
        what: str = "a mapping",
        key_hint: Optional[dict[str, str]] = None,
        missing_hints: Optional[dict[str, str]] = None,
    ) -> Optional[dict[str, tuple[yaml.Node, yaml.Node]]]:
        """Check ``node`` is a mapping with string keys; report duplicates, unknown and missing keys.

        Returns ``key -> (key node, value node)`` of the first occurrence of each valid key,
        or None if the node is not a mapping.
        """
        if not isinstance(node, yaml.MappingNode) or node.tag != TAG_MAP:
            hint = ""
            if isinstance(node, yaml.ScalarNode) and node.value == "" and node.tag != TAG_MAP:
                hint = "the value is empty; indent the keys below it"
            self.error(node, path, f"expected {what}, got {describe_node(node)}", hint)
            return None
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        suggested: set[str] = set()
        for key_node, value_node in node.value:
            key = self.key(key_node, path)
            if key is None:
                continue
            key_path = join_path(path, key)
            if key in entries:
                first = entries[key][0].start_mark.line + 1
                self.error(
                    key_node,
                    key_path,
                    f"duplicate key `{key}` (first defined on line {first})",
                    "YAML keeps only one of them; remove or rename one",
                )
                continue
            if allowed is not None and key not in allowed:
                hint = (key_hint or {}).get(key, "")
                if not hint and KEY_ALIASES.get(key) in allowed:
                    hint = f"did you mean `{KEY_ALIASES[key]}`?"
                if not hint:
                    hint = did_you_mean(key, allowed)
                if not hint:
                    hint = "allowed keys: " + ", ".join(allowed)
                self.error(key_node, key_path, f"unknown key `{key}`", hint)
                suggested.update(k for k in allowed if f"`{k}`" in hint)
                continue
            entries[key] = (key_node, value_node)
        for key in required:
            if key not in entries and key not in suggested:  # a misspelt key already points at it
                hint = (missing_hints or {}).get(key) or MISSING_HINTS.get(key, "")
                self.error(node, path, f"missing required key `{key}`", hint)
        return entries

    def key(self, node: yaml.Node, path: str) -> Optional[str]:
        if isinstance(node, yaml.ScalarNode):
            try:
                value = scalar_value(node)
            except BadScalar as e:
                self.error(node, path, str(e), e.hint if not isinstance(e, UnsupportedTag) else "")
                return None
            if isinstance(value, str) and "\0" in value:
                self.error(node, path, NUL_MESSAGE, NUL_HINT)
                return None
            if value == "<<" and node.style is None:
                self.error(
                    node,
                    path,
                    "YAML merge keys (`<<`) are not supported",
                    "write the keys out (anchors `&a` and aliases `*a` do work)",
                )
                return None
            if isinstance(value, str) and value:
                return value
            shown = describe(value)
            self.error(node, path, f"expected a string key, got {shown}", f'quote it: "{node.value}"')
            return None
        self.error(node, path, f"expected a string key, got {describe_node(node)}")
        return None

    def sequence(self, node: yaml.Node, path: str, what: str = "a list") -> Optional[list[yaml.Node]]:
        if not isinstance(node, yaml.SequenceNode) or node.tag != TAG_SEQ:
            self.error(node, path, f"expected {what}, got {describe_node(node)}", "write it as a YAML list")
            return None
        return list(node.value)

    def scalar(self, node: yaml.Node, path: str, expected: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            self.error(node, path, f"expected {expected}, got {describe_node(node)}")
            return BAD
        try:
            value = scalar_value(node)
        except BadScalar as e:
            self.error(node, path, str(e), e.hint)
            return BAD
        if isinstance(value, str) and "\0" in value:
            self.error(node, path, NUL_MESSAGE, NUL_HINT)
            return BAD
        return value

    # -- typed scalars ---------------------------------------------------------------------

    def string(self, node: yaml.Node, path: str, *, nonempty: bool = True) -> Any:
        value = self.scalar(node, path, "a string")
        if value is BAD:
            return BAD
        if not isinstance(value, str):
            hint = f'quote it: "{node.value}"' if value is not None else "write a value after the colon"
            self.error(node, path, f"expected a string, got {describe(value)}", hint)
            return BAD
        if nonempty and not value.strip():
            self.error(node, path, "expected a non-empty string")
            return BAD
        return value

    def boolean(self, node: yaml.Node, path: str) -> Any:
        value = self.scalar(node, path, "a boolean")
        if value is BAD:
            return BAD
        if not isinstance(value, bool):
            hint = "write true or false"
            if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off", "y", "n"):
                hint = "specs are YAML 1.2: only true and false are booleans"
            self.error(node, path, f"expected true or false, got {describe(value)}", hint)
            return BAD
        return value

    def integer(self, node: yaml.Node, path: str, what: str = "an integer") -> Any:
        value = self.scalar(node, path, what)
        if value is BAD:
            return BAD
        if isinstance(value, bool) or not isinstance(value, int):
            hint = ""
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                hint = f"write {int(value)}"
            elif isinstance(value, str) and re.fullmatch(r"[-+]?[0-9]+", value.strip()):
                hint = "remove the quotes"
            self.error(node, path, f"expected {what}, got {describe(value)}", hint)
            return BAD
        return value

    def number(self, node: yaml.Node, path: str, what: str = "a number") -> Any:
        value = self.scalar(node, path, what)
        if value is BAD:
            return BAD
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = "remove the quotes" if isinstance(value, str) and looks_numeric(value) else ""
            self.error(node, path, f"expected {what}, got {describe(value)}", hint)
            return BAD
        if isinstance(value, float) and not math.isfinite(value):
            self.error(node, path, f"expected a finite number, got {describe(value)}")
            return BAD
        return value

    def choice(self, node: yaml.Node, path: str, choices: Sequence[str], what: str) -> Any:
        value = self.scalar(node, path, what)
        if value is BAD:
            return BAD
        if not isinstance(value, str) or value not in choices:
            hint = ""
            if isinstance(value, str):
                alias = TYPE_ALIASES.get(value.lower())
                if alias in choices:
                    hint = f"did you mean `{alias}`?"
                else:
                    hint = did_you_mean(value, choices)
            shown = ", ".join(choices)
            self.error(node, path, f"expected {what} (one of {shown}), got {describe(value)}", hint)
            return BAD
        return value


# -- reusable checks (also used by the starter and the CLI) ---------------------------------


def peek(node: yaml.Node, key: str) -> Any:
    """The plain value of ``key`` in a mapping node, without reporting anything (None if absent)."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.ScalarNode):
                return scalar_or_none(v)
    return None


def scalar_or_none(node: yaml.ScalarNode) -> Any:
    try:
        return scalar_value(node)
    except BadScalar:
        return BAD


def looks_numeric(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True
