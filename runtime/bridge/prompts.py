"""The prompts a spec ships (``prompts:``), served by the bridge: ``prompts/list``,
``prompts/get`` and ``completion/complete`` of their arguments.

The bridge gets them as plain data (``codegen bridge --spec`` makes it with
``mcpgen.codegen.spec.prompt_json``): each prompt's arguments carry a JSON Schema like a
tool parameter's, and its messages are MCP messages whose text (and embedded resources'
URIs) hold placeholders: ``{{argument}}``, ``{{tool:NAME}}`` (the tool's name as this
bridge exports it) and ``{{resource:URI}}`` (the URI as this bridge serves it).

MCP sends prompt arguments as strings; ``prompts/get`` reads each as its declared type
(``"30"`` for an integer, ``"true"`` for a boolean), checks it with the runtime's validator
(range, enum, length, pattern on RE2), fills in defaults, and refuses a missing required
argument or an unknown one with ``-32602`` naming it. Values are inserted as given (after
the check); the text is not a template language, so nothing else in it is expanded.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcpgen.runtime.core.validate import SchemaValidator
from mcpgen.runtime.errors import ValidationError

from .protocol import INVALID_PARAMS, RpcFailure, quote

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""The same placeholders as the spec checker's (``codegen.spec.rules.prompts``)."""
_INTEGER = re.compile(r"[+-]?[0-9]+")

Resolve = Callable[[str], "str | None"]
"""A spec tool name (or device URI) -> the name (URI) the bridge serves it as; None: not served."""


class Prompt:
    """One prompt: its ``prompts/list`` entry, and its messages for given arguments."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.name = str(data["name"])
        self.data = data
        self.arguments: list[Mapping[str, Any]] = list(data.get("arguments") or ())
        self.schemas = {str(a["name"]): dict(a.get("schema") or {"type": "string"}) for a in self.arguments}
        required = [str(a["name"]) for a in self.arguments if a.get("required")]
        self.validator = SchemaValidator(
            {
                "type": "object",
                "properties": self.schemas,
                "required": required,
                "additionalProperties": False,
            }
        )

    def entry(self) -> dict[str, Any]:
        """The ``prompts/list`` entry (MCP: arguments with name, description, required)."""
        out: dict[str, Any] = {"name": self.name}
        if self.data.get("title"):
            out["title"] = self.data["title"]
        out["description"] = self.data.get("description", "")
        args = []
        for a in self.arguments:
            schema = self.schemas[str(a["name"])]
            item: dict[str, Any] = {"name": a["name"]}
            words = describe(schema)
            if words:
                item["description"] = words
            item["required"] = bool(a.get("required"))
            args.append(item)
        if args:
            out["arguments"] = args
        return out

    def values(self, arguments: Any) -> dict[str, str]:
        """Each argument's text to insert: checked against its schema, defaults filled in."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise RpcFailure(INVALID_PARAMS, "prompts/get: arguments must be an object of strings")
        typed: dict[str, Any] = {}
        for key, value in arguments.items():
            schema = self.schemas.get(key)
            if schema is None:
                have = ", ".join(self.schemas) or "none"
                raise RpcFailure(
                    INVALID_PARAMS,
                    f"prompt {quote(self.name)} has no argument {quote(key)} (its arguments: {have})",
                )
            typed[key] = _parse(self.name, key, value, schema)
        for a in self.arguments:
            name = str(a["name"])
            if a.get("required") and name not in typed:
                words = describe({**self.schemas[name], "description": None})
                raise RpcFailure(
                    INVALID_PARAMS, f"prompt {quote(self.name)} needs argument {quote(name)} {words}".rstrip()
                )
        try:
            checked = self.validator.validate(typed)
        except ValidationError as exc:
            raise RpcFailure(INVALID_PARAMS, f"prompt {quote(self.name)}: {exc}") from None
        out = {}
        for name, schema in self.schemas.items():
            value = checked.get(name, schema.get("default"))
            out[name] = "" if value is None else _text(value)
        return out

    def render(self, arguments: Any, tool_name: Resolve, resource_uri: Resolve) -> dict[str, Any]:
        """The ``prompts/get`` result for ``arguments``."""
        values = self.values(arguments)

        def fill(text: str) -> str:
            def one(m: re.Match[str]) -> str:
                ref = m.group(1)
                kind, sep, target = ref.partition(":")
                if sep and kind == "tool":
                    return tool_name(target) or target
                if sep and kind == "resource":
                    return resource_uri(target) or target
                return values.get(ref, m.group(0))

            return PLACEHOLDER.sub(one, text)

        messages = []
        for message in self.data.get("messages") or ():
            content = copy.deepcopy(dict(message["content"]))
            if content.get("type") == "text":
                content["text"] = fill(str(content.get("text", "")))
            elif content.get("type") == "resource" and isinstance(content.get("resource"), dict):
                content["resource"]["uri"] = fill(str(content["resource"].get("uri", "")))
            messages.append({"role": message["role"], "content": content})
        out: dict[str, Any] = {"messages": messages}
        if self.data.get("description"):
            out["description"] = self.data["description"]
        return out


class PromptSet:
    """The prompts one bridge serves, by name (the order of the specs given)."""

    def __init__(self, prompts: Iterable[Mapping[str, Any]] = ()) -> None:
        self.by_name: dict[str, Prompt] = {}
        for data in prompts:
            prompt = Prompt(data)
            self.by_name.setdefault(prompt.name, prompt)  # two specs with one name: the first wins

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def list_result(self, params: Mapping[str, Any]) -> dict[str, Any]:
        if params.get("cursor") is not None:
            raise RpcFailure(INVALID_PARAMS, "invalid cursor (this server returns one page)")
        return {"prompts": [p.entry() for p in self.by_name.values()]}

    def prompt(self, name: Any) -> Prompt:
        prompt = self.by_name.get(name) if isinstance(name, str) else None
        if prompt is None:
            have = ", ".join(self.by_name) or "none"
            raise RpcFailure(INVALID_PARAMS, f"unknown prompt {quote(name)} (prompts: {have})")
        return prompt

    def get(self, params: Mapping[str, Any], tool_name: Resolve, resource_uri: Resolve) -> dict[str, Any]:
        return self.prompt(params.get("name")).render(params.get("arguments"), tool_name, resource_uri)

    def argument_schema(self, prompt_name: Any, argument: str) -> Mapping[str, Any]:
        """The JSON Schema of one argument (for ``completion/complete``); -32602 naming what is wrong."""
        prompt = self.prompt(prompt_name)
        schema = prompt.schemas.get(argument)
        if schema is None:
            have = ", ".join(prompt.schemas) or "none"
            raise RpcFailure(
                INVALID_PARAMS,
                f"completion/complete: prompt {quote(prompt.name)} has no argument {quote(argument)} "
                f"(its arguments: {have})",
            )
        return schema


def describe(schema: Mapping[str, Any]) -> str:
    """An argument's description and its constraints in words (a client shows them; prompt
    arguments carry no schema in MCP)."""
    parts = [str(schema["description"])] if schema.get("description") else []
    kind = schema.get("type", "string")
    rules = []
    if schema.get("enum"):
        rules.append("one of " + ", ".join(str(v) for v in schema["enum"]))
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        rules.append(f"{low} to {high}")
    elif low is not None:
        rules.append(f"at least {low}")
    elif high is not None:
        rules.append(f"at most {high}")
    if schema.get("default") is not None:
        rules.append(f"default {_text(schema['default'])}")
    if kind != "string" or rules:
        parts.append(f"({kind}{': ' if rules else ''}{'; '.join(rules)})")
    return " ".join(parts)


def _parse(prompt: str, name: str, value: Any, schema: Mapping[str, Any]) -> Any:
    """An argument's string as its declared type (the validator then checks the rest)."""
    if not isinstance(value, str):
        raise RpcFailure(INVALID_PARAMS, f"prompt {quote(prompt)}: argument {quote(name)} must be a string")
    kind = schema.get("type")
    text = value.strip()
    if kind == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return value
        return number if number == number and abs(number) != float("inf") else value
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return value  # a string, or text that is not the type: the validator names the mismatch


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
