"""Read a spec's YAML into position-carrying nodes, with YAML 1.2 core-schema scalars.

PyYAML implements YAML 1.1, where ``on``, ``yes`` and ``off`` are booleans, ``1:30`` is
the integer 90 and ``2024-11-05`` is a date. Specs follow YAML 1.2 (the core schema):
only ``true``/``false`` are booleans, and dates, sexagesimal numbers and ``<<`` merge keys
do not exist. We compose the document into ``yaml.Node`` objects (not Python values) so
every value keeps its line and column and duplicate mapping keys stay visible.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Union

import yaml

# PyYAML built with libyaml (its wheels are) has a C parser; without, the Python one reads.
_CParser: Any = getattr(yaml, "CParser", None) or getattr(getattr(yaml, "cyaml", None), "CParser", None)

TAG_NULL = "tag:yaml.org,2002:null"
TAG_BOOL = "tag:yaml.org,2002:bool"
TAG_INT = "tag:yaml.org,2002:int"
TAG_FLOAT = "tag:yaml.org,2002:float"
TAG_STR = "tag:yaml.org,2002:str"
TAG_MAP = "tag:yaml.org,2002:map"
TAG_SEQ = "tag:yaml.org,2002:seq"
# `!secret NAME` (ESPHome's tag): composed like any local tag; only `firmware:` values take
# it (codegen.spec.rules.firmware resolves it), anywhere else it is refused.
TAG_SECRET = "!secret"

# YAML 1.2.2, section 10.3.2 (core schema tag resolution).
_NULL_RE = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT_RE = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class Yaml12Resolver(yaml.resolver.Resolver):
    """Plain scalars resolve per the YAML 1.2 core schema; everything else is a string."""


Yaml12Resolver.yaml_implicit_resolvers = {}
Yaml12Resolver.add_implicit_resolver(TAG_BOOL, _BOOL_RE, list("tTfF"))
Yaml12Resolver.add_implicit_resolver(TAG_NULL, _NULL_RE, ["~", "n", "N", ""])
Yaml12Resolver.add_implicit_resolver(TAG_INT, _INT_RE, list("-+0123456789"))
Yaml12Resolver.add_implicit_resolver(TAG_FLOAT, _FLOAT_RE, list("-+.0123456789"))


#: Deepest nesting of mappings and lists a spec may have. PyYAML composes nodes
#: recursively, so a spec of 10,000 `[` ran out of stack ("unexpected RecursionError");
#: a result object nested MAX_FIELD_DEPTH (32) levels takes about 64.
MAX_NESTING = 100
#: Most digits of an integer literal: far above any 64-bit value, and far below where
#: Python refuses to convert (4300 decimal digits) or printing one costs time.
MAX_INTEGER_DIGITS = 100


class Yaml12Composer(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    Yaml12Resolver,
):
    """Enough of a PyYAML loader to compose nodes (no constructor: we never build objects)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        Yaml12Resolver.__init__(self)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """PyYAML's, with the nesting counted: too deep is a located error, not a crash."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                mark = self.peek_event().start_mark
                raise YamlSyntaxError(
                    mark.line + 1,
                    mark.column + 1,
                    f"the YAML is nested more than {MAX_NESTING} levels deep here",
                    _NESTING_HINT,
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


@dataclass(frozen=True)
class YamlSyntaxError(Exception):
    """The YAML could not be parsed; ``line``/``column`` are 1-based and point at the mistake."""

    line: int
    column: int
    message: str
    hint: str = ""


# PyYAML reports some mistakes where it *noticed* them, which is the next token, often on
# the next line: a key without its colon ("while scanning a simple key"), a quote never
# closed, a ``{``/``[`` never closed. For those the context mark (where the key, quote or
# bracket started) is where the user must look. Other errors' problem mark is right.
_CONTEXT_IS_THE_MISTAKE = (
    "while scanning a simple key",
    "while scanning a quoted scalar",
    "while parsing a flow mapping",
    "while parsing a flow sequence",
)

_HINTS = (
    ("could not find expected ':'", "a mapping entry is `key: value`: add the colon (and a space after it)"),
    ("while scanning a quoted scalar", "close the quote that starts here"),
    ("expected ',' or '}'", "close the `{` that starts here with `}`, or separate its entries with commas"),
    ("expected ',' or ']'", "close the `[` that starts here with `]`, or separate its items with commas"),
    ("'\\t'", "YAML indents with spaces, not tabs"),
    (
        "unknown escape character",
        "in double quotes a backslash starts an escape: write \\\\ for a backslash, or use single quotes",
    ),
    (
        "mapping values are not allowed here",
        "check the indentation of this line, or quote a value that contains ': '",
    ),
    ("expected <block end>", "check the indentation: this line is not aligned with the entries around it"),
)


def _hint(text: str) -> str:
    return next((hint for needle, hint in _HINTS if needle in text), "")


def _compose_with_libyaml(text: str) -> yaml.Node | None:
    """The nodes of one document, from libyaml's events (PyYAML's C parser, about ten
    times faster than its pure-Python one) composed here without recursion, so nesting is
    counted as it goes. Raises any YAML error as it comes: :func:`compose` then reads the
    text again with the pure-Python parser, whose messages and positions it explains."""
    parser = _CParser(text)
    resolver = Yaml12Resolver()
    try:
        parser.get_event()  # stream start
        if parser.check_event(yaml.StreamEndEvent):
            return None
        parser.get_event()  # document start
        anchors: dict[str, yaml.Node] = {}
        stack: list[yaml.Node] = []
        keys: list[Any] = []  # per open mapping: its pending key node (None: none yet)
        root: yaml.Node | None = None
        while True:
            ev: Any = parser.get_event()
            cls = type(ev)  # (compared by identity: the events carry libyaml's Marks, not PyYAML's)
            node: yaml.Node
            if cls is yaml.SequenceEndEvent or cls is yaml.MappingEndEvent:
                done = stack.pop()
                done.end_mark = ev.end_mark
                if isinstance(done, yaml.MappingNode):
                    keys.pop()
                if not stack:
                    root = done
                continue
            elif cls is yaml.DocumentEndEvent:
                break
            elif cls is yaml.AliasEvent:
                if ev.anchor not in anchors:
                    raise yaml.composer.ComposerError(None, None, "found undefined alias", ev.start_mark)
                node = anchors[ev.anchor]
            elif cls is yaml.ScalarEvent:
                tag = ev.tag
                if tag is None or tag == "!":
                    tag = resolver.resolve(yaml.ScalarNode, ev.value, ev.implicit)
                node = yaml.ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style or None)
                _anchor(anchors, ev, node)
            elif cls is yaml.SequenceStartEvent or cls is yaml.MappingStartEvent:
                if len(stack) >= MAX_NESTING:
                    raise YamlSyntaxError(
                        ev.start_mark.line + 1,
                        ev.start_mark.column + 1,
                        f"the YAML is nested more than {MAX_NESTING} levels deep here",
                        _NESTING_HINT,
                    )
                tag = ev.tag
                is_seq = cls is yaml.SequenceStartEvent
                kind = yaml.SequenceNode if is_seq else yaml.MappingNode
                if tag is None or tag == "!":
                    tag = resolver.resolve(kind, None, ev.implicit)
                node = kind(tag, [], ev.start_mark, None, flow_style=ev.flow_style)
                _anchor(anchors, ev, node)
                _attach(stack, keys, node)
                stack.append(node)
                if not is_seq:
                    keys.append(None)
                continue
            else:
                what = f"unexpected {cls.__name__}"
                raise yaml.composer.ComposerError(None, None, what, ev.start_mark)
            if not stack:
                root = node
            else:
                _attach(stack, keys, node)
        if not parser.check_event(yaml.StreamEndEvent):
            raise yaml.composer.ComposerError(None, None, "expected a single document", None)
        return root
    finally:
        parser.dispose()


def _anchor(anchors: dict[str, yaml.Node], ev: Any, node: yaml.Node) -> None:
    if ev.anchor is None:
        return
    if ev.anchor in anchors:  # PyYAML's composer refuses it: let it say so
        raise yaml.composer.ComposerError(None, None, "found duplicate anchor", ev.start_mark)
    anchors[ev.anchor] = node


def _attach(stack: list[yaml.Node], keys: list[Any], node: yaml.Node) -> None:
    """Adds ``node`` to the collection being composed (a mapping takes key, then value)."""
    if not stack:
        return
    parent = stack[-1]
    if isinstance(parent, yaml.SequenceNode):
        parent.value.append(node)
    elif keys[-1] is None:
        keys[-1] = node
    else:
        parent.value.append((keys[-1], node))
        keys[-1] = None


_NESTING_HINT = (
    "a spec needs far fewer levels: look for brackets `[`/`{` that are never closed "
    "or a generated file gone wrong"
)


#: The last text composed and its nodes: ``codegen diff`` composes the NEW spec to check it
#: and again to locate its changes (nodes are never changed after composing).
_last_composed: tuple[str, yaml.Node | None] = ("", None)


def compose(text: str) -> yaml.Node | None:
    """Parse one YAML document into nodes; ``None`` for an empty document."""
    global _last_composed
    if text and _last_composed[0] == text:
        return _last_composed[1]
    if _CParser is not None:
        try:
            root = _compose_with_libyaml(text)
            _last_composed = (text, root)
            return root
        except YamlSyntaxError:
            raise
        except (yaml.YAMLError, ValueError):
            pass  # read again below, for PyYAML's own message and position
    composer = None
    try:
        # (the reader checks every character when it is made: a NUL byte raises here)
        composer = Yaml12Composer(text)
        return composer.get_single_node()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        if e.context in _CONTEXT_IS_THE_MISTAKE and e.context_mark is not None:
            mark = e.context_mark
        parts = [p for p in (e.problem, e.context) if p]
        message = "YAML syntax error: " + parts[0] + (f" ({parts[1]})" if len(parts) > 1 else "")
        hint = _hint(" ".join(parts))
        if mark is None:
            raise YamlSyntaxError(0, 0, message, hint) from None
        raise YamlSyntaxError(mark.line + 1, mark.column + 1, message, hint) from None
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        what = "a NUL byte" if e.character in (0, "\0") else f"character {_char(e.character)}"
        raise YamlSyntaxError(
            line,
            column,
            f"YAML syntax error: {what} is not allowed in YAML text",
            "remove the character or save the file as plain UTF-8 text",
        ) from None
    except RecursionError:  # a last resort: the nesting limit above comes first
        raise YamlSyntaxError(0, 0, "the YAML is nested too deeply to read", "flatten the spec") from None
    finally:
        if composer is not None:
            composer.dispose()


def _char(c: Any) -> str:
    """A character PyYAML refused, for a message: ``U+0007`` and its repr."""
    code = c if isinstance(c, int) else ord(c)
    return f"U+{code:04X} {chr(code)!r}"


Scalar = Union[None, bool, int, float, str]


class BadScalar(ValueError):
    """A scalar that has no value under the spec's rules; ``hint`` says how to fix it."""

    hint = ""


class UnsupportedTag(BadScalar):
    """A scalar with an explicit tag we do not support (``!!binary``, ``!custom``...)."""

    hint = "remove the tag"


class IntegerTooLong(BadScalar):
    """An integer literal of more than :data:`MAX_INTEGER_DIGITS` digits."""

    hint = "a 64-bit integer has at most 19 digits; quote it if it is meant as text"


def _integer(text: str, base: int) -> int:
    digits = len(text.lstrip("+-")) - (2 if base != 10 else 0)
    if digits > MAX_INTEGER_DIGITS:
        raise IntegerTooLong(f"an integer of {digits} digits: expected at most {MAX_INTEGER_DIGITS}")
    body = text[2:] if base != 10 else text
    return int(body, base)


def scalar_value(node: yaml.ScalarNode) -> Scalar:
    """The Python value of a scalar node under the YAML 1.2 core schema."""
    text: str = node.value
    tag = node.tag
    if tag == TAG_STR:
        return text
    if tag == TAG_NULL and _NULL_RE.match(text):
        return None
    if tag == TAG_BOOL and _BOOL_RE.match(text):
        return text.lower() == "true"
    if tag == TAG_INT and _INT_RE.match(text):
        if text.startswith("0o"):
            return _integer(text, 8)
        if text.startswith("0x"):
            return _integer(text, 16)
        return _integer(text, 10)
    if tag == TAG_FLOAT and _FLOAT_RE.match(text):
        body = text.lstrip("+-").lower()
        if body == ".inf":
            return -math.inf if text.startswith("-") else math.inf
        if body == ".nan":
            return math.nan
        return float(text)
    if tag == TAG_SECRET:
        raise UnsupportedTag(f"`!secret {text}` is only allowed for the settings of the `firmware:` section")
    raise UnsupportedTag(f"unsupported YAML tag {tag} on {text!r}")


def describe(value: Any) -> str:
    """A short human description of a YAML value for error messages: ``integer 5``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    return type(value).__name__


def describe_node(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    try:
        return describe(scalar_value(node))  # type: ignore[arg-type]
    except IntegerTooLong as e:
        return str(e).split(":")[0]
    except UnsupportedTag:
        return f"a value tagged {node.tag}"


def to_plain(node: yaml.Node | None) -> Any:
    """Plain Python data (dict/list/scalars) of a composed node, YAML 1.2 semantics.

    For tools that want data rather than nodes (a JSON Schema check, for one). Duplicate
    keys keep the last value, as in PyYAML; the validator reports them.
    """
    if node is None:
        return None
    if isinstance(node, yaml.MappingNode):
        return {to_plain(k): to_plain(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [to_plain(v) for v in node.value]
    return scalar_value(node)  # type: ignore[arg-type]
