"""Rules for a tool's ``params``: types, bounds, enums, patterns and defaults."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

import yaml

from mcpgen.codegen.spec.model import (
    PARAM_TYPES,
    Param,
)
from mcpgen.codegen.spec.rules.base import (
    BAD,
    CheckerBase,
    article,
    fmt_num,
    join_path,
    scalar_or_none,
)
from mcpgen.codegen.spec.rules.names import (
    param_name_problem,
    pattern_length_problem,
    pattern_search,
    regex_problem,
)
from mcpgen.codegen.spec.rules.tables import (
    ALL_PARAM_KEYS,
    INT64_MAX,
    INT64_MIN,
    KEY_ALIASES,
    PARAM_KEY_OWNERS,
    PARAM_KEYS_BY_TYPE,
)
from mcpgen.codegen.spec.spec_errors import did_you_mean
from mcpgen.codegen.spec.yaml_source import (
    TAG_MAP,
    describe,
)


class ParamRules(CheckerBase):
    # -- params ----------------------------------------------------------------------------

    #: Names of the spec's ``types:`` -> their key node, set before tools are checked
    #: (``rules.types``); a parameter of a tool (or a field of a type) may name one.
    type_names: dict[str, yaml.Node] = {}

    def params(
        self, node: yaml.Node, path: str, *, no_default: Optional[str] = None, named_types: bool = False
    ) -> tuple[Param, ...]:
        """The parameters at ``node``; with ``no_default`` (the reason), a ``default`` is an error;
        with ``named_types``, a parameter's ``type`` may name one of the spec's ``types:``."""
        if isinstance(node, yaml.ScalarNode) and node.tag != TAG_MAP and scalar_or_none(node) is None:
            return ()  # `params:` with nothing after it
        m = self.mapping(node, path, what="a mapping of parameter name to parameter")
        if m is None:
            return ()
        out = []
        for pname, (knode, vnode) in m.items():
            p = self.param(
                pname, knode, vnode, join_path(path, pname), no_default=no_default, named_types=named_types
            )
            if p is not None:
                out.append(p)
        return tuple(sorted(out, key=lambda p: p.name))

    def param(
        self,
        name: str,
        key_node: yaml.Node,
        node: yaml.Node,
        path: str,
        *,
        no_default: Optional[str] = None,
        named_types: bool = False,
    ) -> Optional[Param]:
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
        ptype: Any = BAD
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == "type" and k.tag != TAG_MAP:
                    if named_types and isinstance(v, yaml.ScalarNode) and v.value in self.type_names:
                        return self.object_param(name, key_node, node, path, v.value)
                    ptype = self.param_type(v, f"{path}.type", named_types)
                    break
        allowed = PARAM_KEYS_BY_TYPE[ptype] if ptype is not BAD else ALL_PARAM_KEYS
        key_hint = {}
        if ptype is not BAD:
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
        if m is None or ptype is BAD:
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
            if minimum not in (None, BAD) and maximum not in (None, BAD) and minimum > maximum:
                self.error(
                    get("max"),
                    f"{path}.max",
                    f"expected max >= min ({fmt_num(minimum)}), got {fmt_num(maximum)}",
                    "swap min and max",
                )
        if ptype == "string":
            if (n := get("max_length")) is not None:
                max_length = self.integer(n, f"{path}.max_length", "an integer >= 1")
                if max_length is not BAD and max_length < 1:
                    self.error(n, f"{path}.max_length", f"expected an integer >= 1, got {max_length}")
                    max_length = BAD
            if (n := get("pattern")) is not None:
                pattern = self.string(n, f"{path}.pattern")
                if pattern is not BAD:
                    problem_text = regex_problem(pattern)
                    if problem_text:
                        self.error(
                            n,
                            f"{path}.pattern",
                            f"invalid regular expression: {problem_text}",
                            "patterns run on RE2 (linear time: no backreferences, lookaround, atomic "
                            "groups or possessive repeats); keep to the syntax RE2, Python and "
                            "JavaScript share",
                        )
                        pattern = BAD
                    elif isinstance(max_length, int) and (
                        problem_text := pattern_length_problem(pattern, max_length)
                    ):
                        self.error(
                            n,
                            f"{path}.pattern",
                            problem_text,
                            "lower max_length or simplify the pattern (docs/security.md, patterns)",
                        )
                        pattern = BAD
            if (n := get("enum")) is not None:
                enum = self.enum(n, f"{path}.enum", max_length, pattern)
        human: Any = None
        if (n := get("from_human")) is not None:
            human = self.from_human(n, f"{path}.from_human", name, ptype, pattern, no_default)
        default: Any = None
        if no_default is not None and "default" in m:
            self.error(m["default"][0], f"{path}.default", no_default, "remove `default`")
        elif (n := get("default")) is not None:
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
            human=human,
            pos=self.pos(key_node),
        )

    def param_type(self, node: yaml.Node, path: str, named_types: bool) -> Any:
        """A scalar parameter type; the message lists the spec's type names where they apply."""
        if not named_types or not self.type_names:
            return self.choice(node, path, PARAM_TYPES, "a parameter type")
        choices = (*PARAM_TYPES, *self.type_names)
        before = len(self.errors)
        got = self.choice(node, path, choices, "a parameter type or a name of `types:`")
        if got is BAD and len(self.errors) > before and not self.errors[-1].hint:
            e = self.errors[-1]
            self.errors[-1] = dataclasses.replace(e, hint="declare it under `types:`, or use a scalar type")
        return got

    def object_param(
        self, name: str, key_node: yaml.Node, node: yaml.Node, path: str, type_name: str
    ) -> Optional[Param]:
        """A parameter (or field) whose value has the shape of a named type: `{type: Color}`."""
        n_errors = len(self.errors)
        key_hint = {
            key: f"`{key}` belongs in the fields of `{type_name}` (under `types:`), not here"
            for key in (*ALL_PARAM_KEYS, *KEY_ALIASES)
            if key not in ("type", "description", "default")
        }
        key_hint["default"] = (
            f"an object parameter is always required: give each field of `{type_name}` a default instead"
        )
        m = self.mapping(
            node, path, allowed=("type", "description"), what="a parameter mapping", key_hint=key_hint
        )
        if m is None:
            return None
        description = ""
        if "description" in m:
            description = self.string(m["description"][1], f"{path}.description", nonempty=False)
        if len(self.errors) != n_errors:
            return None
        return Param(name=name, type="object", description=description, ref=type_name, pos=self.pos(key_node))

    def from_human(
        self, node: yaml.Node, path: str, name: str, ptype: str, pattern: Any, no_default: Optional[str]
    ) -> Any:
        """``from_human: true`` or the question to ask: the value comes from the person through
        MCP elicitation, never from the model. Returns the question ("" for true), None for
        false, BAD after an error."""
        if no_default is not None:  # events and resource templates: the device sends these
            self.error(
                node,
                path,
                "`from_human` applies to tool parameters only",
                "remove it; a value asked of the person belongs to a tool's `params`",
            )
            return BAD
        value = self.scalar(node, path, "true or the question to ask")
        if value is BAD:
            return BAD
        if value is True:
            question = ""
        elif value is False:
            return None
        elif isinstance(value, str) and value.strip():
            question = value.strip()
        else:
            self.error(
                node,
                path,
                f"expected true or the question to ask (a non-empty string), got {describe(value)}",
                f'write `from_human: true` or `from_human: "Which {name}?"`',
            )
            return BAD
        if isinstance(pattern, str):
            # MCP's requestedSchema has flat primitives only: a string takes minLength,
            # maxLength, format and enum, not pattern (client/elicitation, 2025-06-18 on).
            self.error(
                node,
                path,
                f"parameter `{name}` cannot be asked of the person: MCP elicitation cannot carry "
                "its `pattern` (a requested string takes max_length and enum only)",
                "drop `pattern` (use `enum` or `max_length`), or let the model supply the value",
            )
            return BAD
        if ptype not in ("boolean", "integer", "number", "string"):
            self.error(
                node,
                path,
                f"parameter `{name}` of type {ptype} cannot be asked of the person: MCP elicitation "
                "asks for flat values only (string, number, integer, boolean, enum)",
                "split it into primitive parameters, or let the model supply it",
            )
            return BAD
        return question

    def bound(self, node: Optional[yaml.Node], path: str, ptype: str) -> Any:
        if node is None:
            return None
        if ptype == "integer":
            value = self.integer(node, path)
            if value is not BAD and not INT64_MIN <= value <= INT64_MAX:
                self.error(node, path, f"expected a 64-bit signed integer, got {value}")
                return BAD
            return value
        return self.number(node, path)

    def enum(self, node: yaml.Node, path: str, max_length: Any, pattern: Any) -> Any:
        items = self.sequence(node, path, "a list of strings")
        if items is None:
            return BAD
        if not items:
            self.error(
                node,
                path,
                "expected a non-empty list of strings, got an empty list",
                "list the allowed values, or remove `enum`",
            )
            return BAD
        values: list[str] = []
        seen: dict[str, int] = {}
        ok = True
        for i, item in enumerate(items):
            ipath = f"{path}[{i}]"
            v = self.string(item, ipath, nonempty=False)
            if v is BAD:
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
            if isinstance(max_length, int) and max_length is not BAD and len(v) > max_length:
                self.error(
                    item,
                    ipath,
                    f"enum value {v!r} is longer than max_length ({max_length})",
                    "raise max_length or remove it (an enum already bounds the length)",
                )
                ok = False
            if isinstance(pattern, str) and not pattern_search(pattern, v):
                self.error(item, ipath, f"enum value {v!r} does not match pattern {pattern!r}")
                ok = False
            values.append(v)
        return tuple(values) if ok else BAD

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
        value = self.scalar(node, path, f"{article(ptype)} {ptype} default")
        if value is BAD:
            return BAD
        if value is None:
            self.error(
                node,
                path,
                f"expected {article(ptype)} {ptype} default, got null",
                "remove `default` to make the parameter required",
            )
            return BAD
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
            self.error(node, path, f"expected {article(ptype)} {ptype} default, got {describe(value)}", hint)
            return BAD
        if ptype == "number" and not math.isfinite(value):
            self.error(node, path, f"expected a finite number default, got {describe(value)}")
            return BAD
        if ptype in ("integer", "number"):
            if minimum not in (None, BAD) and value < minimum:
                self.error(node, path, f"default {fmt_num(value)} is below min ({fmt_num(minimum)})")
                return BAD
            if maximum not in (None, BAD) and value > maximum:
                self.error(node, path, f"default {fmt_num(value)} is above max ({fmt_num(maximum)})")
                return BAD
        if ptype == "string":
            if isinstance(max_length, int) and len(value) > max_length:
                self.error(
                    node,
                    path,
                    f"default {value!r} is {len(value)} characters, longer than max_length ({max_length})",
                )
                return BAD
            if isinstance(enum, tuple) and enum and value not in enum:
                self.error(
                    node,
                    path,
                    f"default {value!r} is not one of the enum values",
                    did_you_mean(value, enum) or "allowed: " + ", ".join(enum),
                )
                return BAD
            if isinstance(pattern, str) and not pattern_search(pattern, value):
                self.error(node, path, f"default {value!r} does not match pattern {pattern!r}")
                return BAD
        return value
