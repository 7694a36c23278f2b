"""Validate a composed spec document and build the immutable model from it.

Every check reports a ``SpecError`` and carries on, so one run lists every problem of a
file. Model objects are built only from the parts that validated; the ``Spec`` itself is
returned only when there are no errors at all.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import yaml

from mcpgen.codegen.consumer_names import (
    CONSUMERS,
    MAX_LLM_FUNCTION_NAME,
    NameConsumer,
    max_spec_name_length,
    suggest_rename,
    too_long_for,
)
from mcpgen.codegen.mcp_json import worst_case_page_bytes
from mcpgen.codegen.model import (
    DEFAULT_PAGE_SIZE,
    DEFAULT_PROTOCOL_VERSION,
    ERROR_STYLES,
    FIELD_TYPES,
    PARAM_TYPES,
    Device,
    Field,
    Param,
    Returns,
    SourcePos,
    Spec,
    Tool,
)
from mcpgen.codegen.names import (
    CPP_KEYWORDS,
    IDENTIFIER_RE,
    MCP_TOOL_NAME_RE,
    PYTHON_RESERVED,
    cpp_args_struct,
    cpp_handler_name,
    device_class,
    python_path,
)
from mcpgen.codegen.spec_errors import SpecError, did_you_mean
from mcpgen.codegen.spec_events import check_events
from mcpgen.codegen.yaml_source import TAG_MAP, TAG_SEQ, UnsupportedTag, describe, describe_node, scalar_value

PROTOCOL_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SIMPLE_RETURN_KINDS: tuple[str, ...] = ("boolean", "integer", "number", "string", "image", "none")
MAX_FIELD_DEPTH = 32  # also stops recursive aliases (`&a {x: *a}`)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

TOP_KEYS = ("device", "tools", "events")
REQUIRED_TOP_KEYS = ("device", "tools")
DEVICE_KEYS = ("name", "version", "description", "page_size", "protocol_version", "errors")
TOOL_KEYS = (
    "name",
    "description",
    "title",
    "user_only",
    "read_only",
    "destructive",
    "idempotent",
    "params",
    "returns",
    "handler",
)
PARAM_KEYS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "boolean": ("type", "description", "default"),
    "integer": ("type", "description", "default", "min", "max"),
    "number": ("type", "description", "default", "min", "max"),
    "string": ("type", "description", "default", "max_length", "enum", "pattern"),
}
ALL_PARAM_KEYS: tuple[str, ...] = (
    "type",
    "description",
    "default",
    "min",
    "max",
    "max_length",
    "enum",
    "pattern",
)
RETURNS_KEYS = ("type", "description", "properties")
FIELD_KEYS_BY_TYPE: dict[str, tuple[str, ...]] = {
    t: ("type", "description") + (("properties",) if t == "object" else ("items",) if t == "array" else ())
    for t in FIELD_TYPES
}
ALL_FIELD_KEYS: tuple[str, ...] = ("type", "description", "properties", "items")

# Spellings from JSON Schema, MCP or other tools that people will type by habit.
KEY_ALIASES: dict[str, str] = {
    "minimum": "min",
    "maximum": "max",
    "maxLength": "max_length",
    "maxlength": "max_length",
    "max_len": "max_length",
    "parameters": "params",
    "args": "params",
    "arguments": "params",
    "inputSchema": "params",
    "properties": "params",
    "return": "returns",
    "result": "returns",
    "output": "returns",
    "outputSchema": "returns",
    "readOnly": "read_only",
    "readOnlyHint": "read_only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "userOnly": "user_only",
    "desc": "description",
    "values": "enum",
    "choices": "enum",
    "regex": "pattern",
    "protocolVersion": "protocol_version",
    "pageSize": "page_size",
}
TYPE_ALIASES: dict[str, str] = {
    "int": "integer",
    "long": "integer",
    "bool": "boolean",
    "float": "number",
    "double": "number",
    "str": "string",
    "text": "string",
    "dict": "object",
    "map": "object",
    "list": "array",
    "null": "none",
    "void": "none",
}
PARAM_KEY_OWNERS: dict[str, str] = {
    "min": "integer and number",
    "max": "integer and number",
    "max_length": "string",
    "enum": "string",
    "pattern": "string",
}

MISSING_HINTS: dict[str, str] = {
    "device": "add a `device:` mapping with at least `name` and `version`",
    "tools": "add `tools:` with a list of tools",
    "name": "add `name: ...`",
    "version": 'add `version: "1.0.0"`',
    "description": "add `description: ...`: the assistant reads it to decide when to call the tool",
    "type": "add `type: ...`",
    "properties": "add `properties:` mapping each property name to `{type: ...}`",
    "items": "add `items: {type: ...}` describing the elements",
}

_BAD: Any = object()  # sentinel: the value was invalid (an error has been recorded)


def _a(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _fmt_num(x: Union[int, float]) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def _join(base: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_\-]+", key):
        return f"{base}.{key}" if base else key
    return f"{base}[{json.dumps(key)}]"


@dataclass
class _ToolInfo:
    """What the cross-tool checks need to know about one tool (whatever validated)."""

    index: int
    node: yaml.Node
    name: Optional[str] = None
    name_node: Optional[yaml.Node] = None
    handler: Optional[str] = None
    handler_node: Optional[yaml.Node] = None
    handler_explicit: bool = False
    model: Optional[Tool] = None


class SpecChecker:
    """Walks the node tree of one file; ``errors`` collects every problem."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.errors: list[SpecError] = []
        self.page_size: Optional[int] = None  # known once device.page_size validated

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
            key_path = _join(path, key)
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
            except UnsupportedTag as e:
                self.error(node, path, str(e))
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
            return _BAD
        try:
            return scalar_value(node)
        except UnsupportedTag as e:
            self.error(node, path, str(e), "remove the tag")
            return _BAD

    # -- typed scalars ---------------------------------------------------------------------

    def string(self, node: yaml.Node, path: str, *, nonempty: bool = True) -> Any:
        value = self.scalar(node, path, "a string")
        if value is _BAD:
            return _BAD
        if not isinstance(value, str):
            hint = f'quote it: "{node.value}"' if value is not None else "write a value after the colon"
            self.error(node, path, f"expected a string, got {describe(value)}", hint)
            return _BAD
        if nonempty and not value.strip():
            self.error(node, path, "expected a non-empty string")
            return _BAD
        return value

    def boolean(self, node: yaml.Node, path: str) -> Any:
        value = self.scalar(node, path, "a boolean")
        if value is _BAD:
            return _BAD
        if not isinstance(value, bool):
            hint = "write true or false"
            if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off", "y", "n"):
                hint = "specs are YAML 1.2: only true and false are booleans"
            self.error(node, path, f"expected true or false, got {describe(value)}", hint)
            return _BAD
        return value

    def integer(self, node: yaml.Node, path: str, what: str = "an integer") -> Any:
        value = self.scalar(node, path, what)
        if value is _BAD:
            return _BAD
        if isinstance(value, bool) or not isinstance(value, int):
            hint = ""
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                hint = f"write {int(value)}"
            elif isinstance(value, str) and re.fullmatch(r"[-+]?[0-9]+", value.strip()):
                hint = "remove the quotes"
            self.error(node, path, f"expected {what}, got {describe(value)}", hint)
            return _BAD
        return value

    def number(self, node: yaml.Node, path: str, what: str = "a number") -> Any:
        value = self.scalar(node, path, what)
        if value is _BAD:
            return _BAD
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = "remove the quotes" if isinstance(value, str) and _looks_numeric(value) else ""
            self.error(node, path, f"expected {what}, got {describe(value)}", hint)
            return _BAD
        if isinstance(value, float) and not math.isfinite(value):
            self.error(node, path, f"expected a finite number, got {describe(value)}")
            return _BAD
        return value

    def choice(self, node: yaml.Node, path: str, choices: Sequence[str], what: str) -> Any:
        value = self.scalar(node, path, what)
        if value is _BAD:
            return _BAD
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
            return _BAD
        return value

    # -- the document ----------------------------------------------------------------------

    def check(self, root: Optional[yaml.Node]) -> Optional[Spec]:
        if root is None:
            self.error(
                None,
                "",
                "the spec is empty; expected a mapping with `device` and `tools`",
                "run `codegen new NAME` for a starter spec",
            )
            return None
        top = self.mapping(
            root, "", allowed=TOP_KEYS, required=REQUIRED_TOP_KEYS, what="a mapping with `device` and `tools`"
        )
        if top is None:
            return None
        device = self.device(top["device"][1]) if "device" in top else None
        infos: list[_ToolInfo] = []
        if "tools" in top:
            tools_node = top["tools"][1]
            items = self.sequence(tools_node, "tools", "a list of tools")
            if items is not None and not items:
                self.error(tools_node, "tools", "expected at least one tool")
            for i, item in enumerate(items or []):
                infos.append(self.tool(item, i))
        self.cross_check(infos)
        if self.page_size is not None:
            self.check_page_size(self.page_size, infos)
        events = check_events(self, top["events"][1], infos) if "events" in top else ()
        if self.errors or device is None or any(i.model is None for i in infos):
            return None
        return Spec(
            device=device,
            tools=tuple(i.model for i in infos if i.model is not None),
            source=self.file,
            events=events,
        )

    def device(self, node: yaml.Node) -> Optional[Device]:
        m = self.mapping(node, "device", allowed=DEVICE_KEYS, required=("name", "version"))
        if m is None:
            return None
        ok = True
        name: Any = _BAD
        if "name" in m:
            name = self.string(m["name"][1], "device.name")
            if name is not _BAD:
                problem = device_name_problem(name)
                if problem:
                    self.error(m["name"][1], "device.name", problem[0], problem[1])
                    name = _BAD
        version: Any = _BAD
        if "version" in m:
            vnode = m["version"][1]
            raw = self.scalar(vnode, "device.version", "a version string")
            if raw is not _BAD:
                if isinstance(raw, str) and raw.strip():
                    version = raw
                elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
                    version = vnode.value  # as written: `1.10` stays "1.10", not "1.1"
                else:
                    self.error(
                        vnode,
                        "device.version",
                        f"expected a version string, got {describe(raw)}",
                        'write it like "1.0.0"',
                    )
        description = ""
        if "description" in m:
            d = self.string(m["description"][1], "device.description", nonempty=False)
            ok &= d is not _BAD
            description = d if d is not _BAD else ""
        page_size = DEFAULT_PAGE_SIZE
        if "page_size" in m:
            p = self.integer(m["page_size"][1], "device.page_size", "an integer number of bytes")
            if p is not _BAD and p < 1:
                self.error(
                    m["page_size"][1],
                    "device.page_size",
                    f"expected a positive integer, got {p}",
                    f"the xiaozhi default is {DEFAULT_PAGE_SIZE}",
                )
                p = _BAD
            ok &= p is not _BAD
            page_size = p if p is not _BAD else DEFAULT_PAGE_SIZE
            self.page_size = p if p is not _BAD else None
        else:
            self.page_size = page_size
        protocol_version = DEFAULT_PROTOCOL_VERSION
        if "protocol_version" in m:
            pv = self.choice(
                m["protocol_version"][1],
                "device.protocol_version",
                PROTOCOL_VERSIONS,
                "an MCP protocol version",
            )
            ok &= pv is not _BAD
            protocol_version = pv if pv is not _BAD else DEFAULT_PROTOCOL_VERSION
        errors = "mcp"
        if "errors" in m:
            es = self.choice(m["errors"][1], "device.errors", ERROR_STYLES, "an error style")
            ok &= es is not _BAD
            errors = es if es is not _BAD else "mcp"
        if not ok or name is _BAD or version is _BAD:
            return None
        return Device(
            name=name,
            version=version,
            description=description,
            page_size=page_size,
            protocol_version=protocol_version,
            errors=errors,
        )

    # -- tools -----------------------------------------------------------------------------

    def tool(self, node: yaml.Node, index: int) -> _ToolInfo:
        path = f"tools[{index}]"
        info = _ToolInfo(index=index, node=node)
        m = self.mapping(
            node, path, allowed=TOOL_KEYS, required=("name", "description"), what="a tool mapping"
        )
        if m is None:
            return info
        n_errors = len(self.errors)
        if "name" in m:
            name_node = m["name"][1]
            name = self.string(name_node, f"{path}.name")
            if name is not _BAD and self.check_tool_name(name, name_node, f"{path}.name"):
                info.name, info.name_node = name, name_node
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description")
        title = None
        if "title" in m:
            title = self.string(m["title"][1], f"{path}.title")
        flags: dict[str, Any] = {}
        for key in ("user_only", "read_only", "destructive", "idempotent"):
            if key in m:
                flags[key] = self.boolean(m[key][1], f"{path}.{key}")
        params: tuple[Param, ...] = ()
        if "params" in m:
            params = self.params(m["params"][1], f"{path}.params")
        returns: Any = Returns(kind="none")
        if "returns" in m:
            returns = self.returns(m["returns"][1], f"{path}.returns")
        if "handler" in m:
            hnode = m["handler"][1]
            handler = self.string(hnode, f"{path}.handler")
            if handler is not _BAD:
                problem = cpp_identifier_problem(handler)
                if problem:
                    self.error(
                        hnode,
                        f"{path}.handler",
                        f"handler `{handler}` {problem}",
                        "choose another C++ function name",
                    )
                else:
                    info.handler, info.handler_node, info.handler_explicit = handler, hnode, True
        elif info.name is not None:
            handler = cpp_handler_name(info.name)
            problem = cpp_identifier_problem(handler)
            if problem:
                self.error(
                    info.name_node,
                    f"{path}.name",
                    f"C++ handler name `{handler}` derived from `{info.name}` {problem}",
                    "rename the tool or set `handler:` to a valid C++ function name",
                )
            else:
                info.handler, info.handler_node = handler, info.name_node
        if len(self.errors) == n_errors and info.name is not None and info.handler is not None:
            info.model = Tool(
                name=info.name,
                description=description,
                handler=info.handler,
                params=params,
                returns=returns,
                title=title,
                user_only=flags.get("user_only", False),
                read_only=flags.get("read_only"),
                destructive=flags.get("destructive"),
                idempotent=flags.get("idempotent"),
                pos=self.pos(node),
            )
        return info

    def check_tool_name(self, name: str, node: yaml.Node, path: str) -> bool:
        if not MCP_TOOL_NAME_RE.match(name):
            bad = sorted({c for c in name if not re.match(r"[A-Za-z0-9_.\-]", c)})
            if len(name) > 128:
                detail = f"is {len(name)} characters long (at most 128)"
            elif bad:
                detail = "contains " + " ".join(repr(c) for c in bad)
            else:
                detail = "is empty"
            self.error(
                node,
                path,
                f"tool name `{name}` is not a valid MCP tool name: it {detail}",
                "use letters, digits, `_`, `-` and `.` (1 to 128 characters), like self.light.set_rgb",
            )
            return False
        if "__" in name:
            self.error(
                node,
                path,
                f"tool name `{name}` contains `__`",
                "`__` is reserved: LLM function names map `.` to `__`; use a single `_`",
            )
            return False
        too_long = too_long_for(name)
        if too_long:
            consumer, mapped = too_long[0]
            also = "".join(f" and {len(m)} for {c.who} ({c.mapping})" for c, m in too_long[1:])
            self.error(
                node,
                path,
                f"tool name `{name}` is too long for LLM function calling: it becomes `{mapped}`, "
                f"{len(mapped)} characters for {consumer.who} ({consumer.mapping}){also}; "
                f"LLM APIs accept at most {MAX_LLM_FUNCTION_NAME}",
                f"shorten it to at most {max_spec_name_length(name)} characters "
                "(each `.` counts twice, as mcpgen turns it into `__`)",
            )
            return False
        for seg in python_path(name):
            if not seg:
                self.error(
                    node,
                    path,
                    f"tool name `{name}` has an empty dotted segment",
                    "remove the leading, trailing or doubled `.`",
                )
                return False
            if not IDENTIFIER_RE.match(seg):
                self.error(
                    node,
                    path,
                    f"tool name `{name}`: segment `{seg}` is not a Python identifier",
                    "segments of the name become Python attributes; start each with a letter or `_`",
                )
                return False
            if seg in PYTHON_RESERVED:
                self.error(
                    node,
                    path,
                    f"tool name `{name}`: segment `{seg}` is a reserved word in Python",
                    f"segments become Python attributes; rename it, e.g. `{seg}_`",
                )
                return False
        return True

    # -- params ----------------------------------------------------------------------------

    def params(self, node: yaml.Node, path: str) -> tuple[Param, ...]:
        if isinstance(node, yaml.ScalarNode) and node.tag != TAG_MAP and scalar_or_none(node) is None:
            return ()  # `params:` with nothing after it
        m = self.mapping(node, path, what="a mapping of parameter name to parameter")
        if m is None:
            return ()
        out = []
        for pname, (knode, vnode) in m.items():
            p = self.param(pname, knode, vnode, _join(path, pname))
            if p is not None:
                out.append(p)
        return tuple(sorted(out, key=lambda p: p.name))

    def param(self, name: str, key_node: yaml.Node, node: yaml.Node, path: str) -> Optional[Param]:
        n_errors = len(self.errors)
        problem = param_name_problem(name)
        if problem:
            self.error(key_node, path, f"parameter name `{name}` {problem[0]}", problem[1])
        if isinstance(node, yaml.ScalarNode) and isinstance(scalar_or_none(node), str):
            value = node.value
            if value in PARAM_TYPES:
                self.error(
                    node,
                    path,
                    f"expected a parameter mapping, got {describe(value)}",
                    f"write `{name}: {{type: {value}}}`",
                )
                return None
        # Find the type first: it decides which keys are allowed.
        ptype: Any = _BAD
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == "type" and k.tag != TAG_MAP:
                    ptype = self.choice(v, f"{path}.type", PARAM_TYPES, "a parameter type")
                    break
        allowed = PARAM_KEYS_BY_TYPE[ptype] if ptype is not _BAD else ALL_PARAM_KEYS
        key_hint = {}
        if ptype is not _BAD:
            for key, owners in PARAM_KEY_OWNERS.items():
                if key not in allowed:
                    key_hint[key] = f"`{key}` applies to {owners} parameters only, this one is {ptype}"
            for alias, key in KEY_ALIASES.items():
                if key in PARAM_KEY_OWNERS and key not in allowed:
                    key_hint[alias] = key_hint[key]
        key_hint["required"] = "parameters are required unless they have a `default`"
        key_hint["optional"] = key_hint["required"]
        m = self.mapping(
            node,
            path,
            allowed=allowed,
            required=("type",),
            what="a parameter mapping",
            key_hint=key_hint,
            missing_hints={"type": "add `type:` boolean, integer, number or string"},
        )
        if m is None or ptype is _BAD:
            return None

        def get(key: str) -> Optional[yaml.Node]:
            return m[key][1] if key in m else None

        description = ""
        if (d := get("description")) is not None:
            description = self.string(d, f"{path}.description", nonempty=False)
        minimum: Any = None
        maximum: Any = None
        max_length: Any = None
        enum: Any = ()
        pattern: Any = None
        if ptype in ("integer", "number"):
            minimum = self.bound(get("min"), f"{path}.min", ptype)
            maximum = self.bound(get("max"), f"{path}.max", ptype)
            if minimum not in (None, _BAD) and maximum not in (None, _BAD) and minimum > maximum:
                self.error(
                    get("max"),
                    f"{path}.max",
                    f"expected max >= min ({_fmt_num(minimum)}), got {_fmt_num(maximum)}",
                    "swap min and max",
                )
        if ptype == "string":
            if (n := get("max_length")) is not None:
                max_length = self.integer(n, f"{path}.max_length", "an integer >= 1")
                if max_length is not _BAD and max_length < 1:
                    self.error(n, f"{path}.max_length", f"expected an integer >= 1, got {max_length}")
                    max_length = _BAD
            if (n := get("pattern")) is not None:
                pattern = self.string(n, f"{path}.pattern")
                if pattern is not _BAD:
                    problem_text = regex_problem(pattern)
                    if problem_text:
                        self.error(
                            n,
                            f"{path}.pattern",
                            f"invalid regular expression: {problem_text}",
                            "patterns use the common subset of Python and JavaScript regex syntax",
                        )
                        pattern = _BAD
            if (n := get("enum")) is not None:
                enum = self.enum(n, f"{path}.enum", max_length, pattern)
        default: Any = None
        if (n := get("default")) is not None:
            default = self.default(n, f"{path}.default", ptype, minimum, maximum, max_length, enum, pattern)
        if len(self.errors) != n_errors:
            return None
        if ptype == "number":  # one spelling per value: 3 and 3.0 are the same number
            minimum = None if minimum is None else float(minimum)
            maximum = None if maximum is None else float(maximum)
            default = None if default is None else float(default)
        return Param(
            name=name,
            type=ptype,
            description=description,
            default=default,
            minimum=minimum,
            maximum=maximum,
            max_length=max_length,
            enum=tuple(enum),
            pattern=pattern,
            pos=self.pos(key_node),
        )

    def bound(self, node: Optional[yaml.Node], path: str, ptype: str) -> Any:
        if node is None:
            return None
        if ptype == "integer":
            value = self.integer(node, path)
            if value is not _BAD and not INT64_MIN <= value <= INT64_MAX:
                self.error(node, path, f"expected a 64-bit signed integer, got {value}")
                return _BAD
            return value
        return self.number(node, path)

    def enum(self, node: yaml.Node, path: str, max_length: Any, pattern: Any) -> Any:
        items = self.sequence(node, path, "a list of strings")
        if items is None:
            return _BAD
        if not items:
            self.error(
                node,
                path,
                "expected a non-empty list of strings, got an empty list",
                "list the allowed values, or remove `enum`",
            )
            return _BAD
        values: list[str] = []
        seen: dict[str, int] = {}
        ok = True
        for i, item in enumerate(items):
            ipath = f"{path}[{i}]"
            v = self.string(item, ipath, nonempty=False)
            if v is _BAD:
                ok = False
                continue
            if v in seen:
                self.error(
                    item,
                    ipath,
                    f"duplicate enum value {v!r} (first at {path}[{seen[v]}])",
                    "remove the duplicate",
                )
                ok = False
                continue
            seen[v] = i
            if isinstance(max_length, int) and max_length is not _BAD and len(v) > max_length:
                self.error(
                    item,
                    ipath,
                    f"enum value {v!r} is longer than max_length ({max_length})",
                    "raise max_length or remove it (an enum already bounds the length)",
                )
                ok = False
            if isinstance(pattern, str) and not re.search(pattern, v):
                self.error(item, ipath, f"enum value {v!r} does not match pattern {pattern!r}")
                ok = False
            values.append(v)
        return tuple(values) if ok else _BAD

    def default(
        self,
        node: yaml.Node,
        path: str,
        ptype: str,
        minimum: Any,
        maximum: Any,
        max_length: Any,
        enum: Any,
        pattern: Any,
    ) -> Any:
        value = self.scalar(node, path, f"{_a(ptype)} {ptype} default")
        if value is _BAD:
            return _BAD
        if value is None:
            self.error(
                node,
                path,
                f"expected {_a(ptype)} {ptype} default, got null",
                "remove `default` to make the parameter required",
            )
            return _BAD
        ok_type = {
            "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "string": isinstance(value, str),
        }[ptype]
        if not ok_type:
            hint = ""
            if ptype == "string":
                hint = f'quote it: "{node.value}"'
            elif ptype == "integer" and isinstance(value, float) and value.is_integer():
                hint = f"write {int(value)}"
            elif (
                ptype == "boolean" and isinstance(value, str) and value.lower() in ("yes", "no", "on", "off")
            ):
                hint = "specs are YAML 1.2: only true and false are booleans"
            self.error(node, path, f"expected {_a(ptype)} {ptype} default, got {describe(value)}", hint)
            return _BAD
        if ptype == "number" and not math.isfinite(value):
            self.error(node, path, f"expected a finite number default, got {describe(value)}")
            return _BAD
        if ptype in ("integer", "number"):
            if minimum not in (None, _BAD) and value < minimum:
                self.error(node, path, f"default {_fmt_num(value)} is below min ({_fmt_num(minimum)})")
                return _BAD
            if maximum not in (None, _BAD) and value > maximum:
                self.error(node, path, f"default {_fmt_num(value)} is above max ({_fmt_num(maximum)})")
                return _BAD
        if ptype == "string":
            if isinstance(max_length, int) and len(value) > max_length:
                self.error(
                    node,
                    path,
                    f"default {value!r} is {len(value)} characters, longer than max_length ({max_length})",
                )
                return _BAD
            if isinstance(enum, tuple) and enum and value not in enum:
                self.error(
                    node,
                    path,
                    f"default {value!r} is not one of the enum values",
                    did_you_mean(value, enum) or "allowed: " + ", ".join(enum),
                )
                return _BAD
            if isinstance(pattern, str) and not re.search(pattern, value):
                self.error(node, path, f"default {value!r} does not match pattern {pattern!r}")
                return _BAD
        return value

    # -- return values ---------------------------------------------------------------------

    def returns(self, node: yaml.Node, path: str) -> Any:
        if isinstance(node, yaml.ScalarNode):
            value = self.scalar(node, path, "a return kind")
            if value is _BAD:
                return _BAD
            if value == "object":
                self.error(
                    node,
                    path,
                    "an object return needs its properties",
                    "write `returns: {type: object, properties: {name: {type: string}}}`",
                )
                return _BAD
            if isinstance(value, str) and "`object`" in did_you_mean(value, (*SIMPLE_RETURN_KINDS, "object")):
                kinds = ", ".join(SIMPLE_RETURN_KINDS)
                hint = "did you mean an object? write `returns: {type: object, properties: {...}}`"
                self.error(
                    node, path, f"expected a return kind (one of {kinds}), got {describe(value)}", hint
                )
                return _BAD
            kind = self.choice(node, path, SIMPLE_RETURN_KINDS, "a return kind")
            return _BAD if kind is _BAD else Returns(kind=kind)
        declared = _peek(node, "type")
        m = self.mapping(
            node,
            path,
            allowed=RETURNS_KEYS,
            required=("type", "properties") if declared in (None, "object") else ("type",),
            missing_hints={"type": "add `type: object`"},
            what="a return kind or an object mapping",
        )
        if m is None:
            return _BAD
        ok = True
        if "type" in m:
            tnode = m["type"][1]
            t = self.scalar(tnode, f"{path}.type", "object")
            if t is not _BAD and t != "object":
                hint = f"write `returns: {t}`" if t in SIMPLE_RETURN_KINDS else ""
                self.error(
                    tnode, f"{path}.type", f"expected `object` in a returns mapping, got {describe(t)}", hint
                )
                ok = False
            ok &= t is not _BAD
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description", nonempty=False)
            ok &= description is not _BAD
        props: Any = ()
        if "properties" in m:
            props = self.properties(m["properties"][1], f"{path}.properties")
            ok &= props is not _BAD
        if not ok:
            return _BAD
        return Returns(kind="object", description=description, properties=props)

    def properties(self, node: yaml.Node, path: str) -> Any:
        m = self.mapping(node, path, what="a mapping of property name to field")
        if m is None:
            return _BAD
        fields = []
        ok = True
        for fname, (knode, vnode) in m.items():
            fpath = _join(path, fname)
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
            if f is _BAD:
                ok = False
            else:
                fields.append(f)
        return tuple(sorted(fields, key=lambda f: f.name)) if ok else _BAD

    def field(self, name: str, node: yaml.Node, path: str) -> Any:
        if path.count(".properties") + path.count(".items") > MAX_FIELD_DEPTH:
            self.error(
                node, path, f"fields nest deeper than {MAX_FIELD_DEPTH} levels", "is an alias recursive?"
            )
            return _BAD
        if isinstance(node, yaml.ScalarNode) and scalar_or_none(node) in FIELD_TYPES:
            self.error(
                node,
                path,
                f"expected a field mapping, got {describe(node.value)}",
                f"write `{name or 'items'}: {{type: {node.value}}}`",
            )
            return _BAD
        ftype: Any = _BAD
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == "type":
                    ftype = self.choice(v, f"{path}.type", FIELD_TYPES, "a field type")
                    break
        allowed = FIELD_KEYS_BY_TYPE[ftype] if ftype is not _BAD else ALL_FIELD_KEYS
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
        if m is None or ftype is _BAD:
            return _BAD
        ok = True
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description", nonempty=False)
            ok &= description is not _BAD
        props: Any = ()
        if "properties" in m:
            props = self.properties(m["properties"][1], f"{path}.properties")
            ok &= props is not _BAD
        items: Any = None
        if "items" in m:
            items = self.field("", m["items"][1], f"{path}.items")
            ok &= items is not _BAD
        if (
            not ok
            or ("properties" in required and "properties" not in m)
            or ("items" in required and items is None)
        ):
            return _BAD
        return Field(name=name, type=ftype, description=description, properties=props, items=items)

    # -- across tools ----------------------------------------------------------------------

    def cross_check(self, infos: list[_ToolInfo]) -> None:
        by_name: dict[str, _ToolInfo] = {}
        by_handler: dict[str, _ToolInfo] = {}
        by_struct: dict[str, _ToolInfo] = {}
        by_path: dict[tuple[str, ...], _ToolInfo] = {}
        by_consumer: list[dict[str, _ToolInfo]] = [{} for _ in CONSUMERS]
        clashed: set[int] = set()
        for info in infos:
            if info.name is None:
                continue
            path = f"tools[{info.index}]"
            first = by_name.get(info.name)
            if first is not None:
                self.error(
                    info.name_node,
                    f"{path}.name",
                    f"duplicate tool name `{info.name}` (first at tools[{first.index}], "
                    f"line {first.name_node.start_mark.line + 1})",  # type: ignore[union-attr]
                    "tool names must be unique; rename or remove one",
                )
                continue
            by_name[info.name] = info
            if self.consumer_name_clash(info, infos, by_consumer):
                clashed.add(info.index)
                continue  # renaming fixes the C++ and Python collisions too: report this one only
            if info.handler is not None:
                hpath = f"{path}.handler" if info.handler_explicit else f"{path}.name"
                other = by_handler.get(info.handler)
                if other is not None:
                    self.error(
                        info.handler_node,
                        hpath,
                        f"C++ handler `{info.handler}` of `{info.name}` collides with "
                        f"tools[{other.index}] `{other.name}`",
                        "rename one tool or set `handler:` to a distinct C++ function name",
                    )
                else:
                    by_handler[info.handler] = info
                    struct = cpp_args_struct(info.handler)
                    other = by_struct.get(struct)
                    if other is not None:
                        self.error(
                            info.handler_node,
                            hpath,
                            f"C++ arguments struct `{struct}` of `{info.name}` collides with "
                            f"tools[{other.index}] `{other.name}`",
                            "handler names that differ only in `_` and case give the same struct; "
                            "set `handler:` to a distinct name",
                        )
                    else:
                        by_struct[struct] = info
            by_path.setdefault(python_path(info.name), info)
        # Python bindings: device.<a>.<b>(): a tool's path must not equal or prefix another's.
        for info in infos:
            if info.name is None or by_name.get(info.name) is not info or info.index in clashed:
                continue
            tpath = python_path(info.name)
            attr = "device." + ".".join(tpath)
            other = by_path.get(tpath)
            if other is not None and other is not info:
                self.error(
                    info.name_node,
                    f"tools[{info.index}].name",
                    f"Python binding `{attr}` of `{info.name}` collides with "
                    f"tools[{other.index}] `{other.name}`",
                    "rename one of the tools (`-` and `_` map to the same Python name)",
                )
                continue
            for k in range(1, len(tpath)):
                other = by_path.get(tpath[:k])
                if other is None:
                    continue
                prefix = "device." + ".".join(tpath[:k])
                if info.index > other.index:
                    where, message = (
                        info,
                        (
                            f"`{info.name}` needs `{prefix}` as a namespace, but it is the method of "
                            f"tools[{other.index}] `{other.name}`"
                        ),
                    )
                else:
                    where, message = (
                        other,
                        (
                            f"the Python method `{prefix}` of `{other.name}` is already a namespace of "
                            f"tools[{info.index}] `{info.name}`"
                        ),
                    )
                self.error(
                    where.name_node,
                    f"tools[{where.index}].name",
                    message,
                    f"no tool name may be a dotted prefix of another; rename `{other.name}`, "
                    f"e.g. to `{other.name}.get`",
                )

    def consumer_name_clash(
        self, info: _ToolInfo, infos: list[_ToolInfo], by_consumer: list[dict[str, _ToolInfo]]
    ) -> bool:
        """Report ``info`` if its name maps to an earlier tool's under some consumer's mapping.

        Registers the mapped names of ``info`` otherwise; returns True when it reported.
        """
        assert info.name is not None
        clashes: list[tuple[NameConsumer, str, _ToolInfo]] = []
        for consumer, seen in zip(CONSUMERS, by_consumer, strict=True):
            mapped = consumer.convert(info.name)
            first = seen.get(mapped)
            if first is None:
                seen[mapped] = info
            else:
                clashes.append((consumer, mapped, first))
        if not clashes:
            return False
        other = clashes[0][2]
        how = "; ".join(
            f"both become `{mapped}` for {consumer.who} ({consumer.mapping})"
            for consumer, mapped, first in clashes
            if first is other
        )
        consequences = "; ".join(c.consequence for c, _, first in clashes if first is other)
        names = [i.name for i in infos if i.name is not None and i is not info]
        suggestion = suggest_rename(info.name, names)
        example = f", e.g. `{suggestion}`" if suggestion else ""
        self.error(
            info.name_node,
            f"tools[{info.index}].name",
            f"tool name `{info.name}` collides with tools[{other.index}] `{other.name}` "
            f"(line {other.name_node.start_mark.line + 1}) as an LLM function name: {how}",  # type: ignore[union-attr]
            f"{consequences}; rename one so the names differ in more than `.` versus `_`{example}",
        )
        return True

    def check_page_size(self, page_size: int, infos: list[_ToolInfo]) -> None:
        built = [(i, i.model) for i in infos if i.model is not None]
        if not built:
            return
        probe = Spec(
            device=Device(name="probe", version="0", page_size=page_size), tools=tuple(t for _, t in built)
        )
        sizes = [(info, tool, worst_case_page_bytes(tool, probe)) for info, tool in built]
        needed = max(size for _, _, size in sizes)
        for info, tool, size in sizes:
            if size > page_size:
                self.error(
                    info.node,
                    f"tools[{info.index}]",
                    f"the tools/list entry of `{tool.name}` needs a {size}-byte page, "
                    f"more than page_size ({page_size})",
                    f"set device.page_size to at least {needed}, or shorten the tool's description",
                )


# -- reusable checks (also used by the starter and the CLI) ---------------------------------


def _peek(node: yaml.Node, key: str) -> Any:
    """The plain value of ``key`` in a mapping node, without reporting anything (None if absent)."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.ScalarNode):
                return scalar_or_none(v)
    return None


def scalar_or_none(node: yaml.ScalarNode) -> Any:
    try:
        return scalar_value(node)
    except UnsupportedTag:
        return _BAD


def _looks_numeric(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def cpp_identifier_problem(name: str) -> str:
    """Why ``name`` cannot be a C++ function name, or "" if it can."""
    if not IDENTIFIER_RE.match(name):
        return "is not a valid C++ identifier"
    if name in CPP_KEYWORDS:
        return "is a C++ keyword"
    if "__" in name or re.match(r"_[A-Z]", name):
        return "is reserved in C++ (contains `__` or starts with `_` and a capital)"
    return ""


def param_name_problem(name: str) -> tuple[str, str] | None:
    """(problem, hint) if ``name`` cannot be a parameter name, else None."""
    if not IDENTIFIER_RE.match(name):
        return (
            "is not a valid identifier",
            "parameter names become C++ struct fields and Python keyword arguments: "
            "use letters, digits and `_`, not starting with a digit",
        )
    if name in CPP_KEYWORDS:
        return ("is a C++ keyword", f"rename it, e.g. `{name}_value`")
    if name in PYTHON_RESERVED:
        return ("is a reserved word in Python", f"rename it, e.g. `{name}_value`")
    if "__" in name or re.match(r"_[A-Z]", name):
        return ("is reserved in C++ (contains `__` or starts with `_` and a capital)", "rename it")
    return None


def field_name_problem(name: str) -> str:
    if not IDENTIFIER_RE.match(name):
        return "is not a valid identifier"
    if name in PYTHON_RESERVED or name in CPP_KEYWORDS:
        return "is a reserved word in Python or C++"
    return ""


def device_name_problem(name: str) -> tuple[str, str] | None:
    """(problem, hint) if ``name`` cannot be a device name, else None."""
    if not re.search(r"[A-Za-z0-9]", name):
        return (
            f"device name {name!r} has no letters or digits",
            "it names the Python package and class; use something like `desk-lamp`",
        )
    if any(c in name for c in "\r\n\t") or any(ord(c) < 0x20 for c in name):
        return (f"device name {name!r} contains control characters", "use a single-line name")
    cls = device_class(name)
    if cls in PYTHON_RESERVED or not IDENTIFIER_RE.match(cls):
        return (
            f"device name {name!r} gives the Python class name `{cls}`, a reserved word",
            "add a word, e.g. `my-" + name + "`",
        )
    return None


def regex_problem(pattern: str) -> str:
    """Why ``pattern`` does not compile cleanly with Python's ``re`` (warnings count), or ""."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(pattern)
        except re.error as e:
            return str(e)
        except (FutureWarning, DeprecationWarning, SyntaxWarning) as w:
            return str(w)
    return ""
