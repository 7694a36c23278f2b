"""Values asked of the person (MCP elicitation): the wire rule both ends share.

A spec parameter with ``from_human`` and a tool with ``confirm`` are announced in the tool's
``tools/list`` entry, under its ``_meta`` (the place MCP keeps for extensions)::

    "_meta": {"io.mcpgen/human": {"confirm": "Unlock the front door?",
                                  "params": {"pin": "Enter the door PIN"}}}

``params`` maps each such parameter to its question ("" when the spec says ``true``). The
parameter stays in the device's ``inputSchema`` (the device checks it like any other); who
calls the device decides how the value is obtained: the bridge asks the MCP client with
``elicitation/create`` and hides the parameter from the model, the console asks in a
dialog, the typed bindings and ``Device.call`` take it only as ``human={...}``.

What a device announces is untrusted: texts are cut to a bound, names that its input
schema does not have are ignored, and only flat primitive schemas are ever put into an
elicitation's ``requestedSchema`` (its allowed keywords alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The ``_meta`` key of a tool's ``tools/list`` entry that carries what is asked of the person.
META_HUMAN = "io.mcpgen/human"
#: Characters of a device's question or confirmation text kept (longer is cut).
MAX_TEXT = 500
#: Parameters of one tool asked of the person that are honoured (more are ignored).
MAX_PARAMS = 32
#: JSON types MCP elicitation can ask for (``requestedSchema`` holds flat primitives only).
ELICIT_TYPES: tuple[str, ...] = ("string", "number", "integer", "boolean")
#: The keywords of a primitive property in a ``requestedSchema`` (MCP client/elicitation).
ELICIT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "string": ("type", "title", "description", "minLength", "maxLength", "format", "enum", "default"),
    "number": ("type", "title", "description", "minimum", "maximum", "default"),
    "integer": ("type", "title", "description", "minimum", "maximum", "default"),
    "boolean": ("type", "title", "description", "default"),
}


class HumanValueError(ValueError):
    """A value asked of the person was passed the wrong way (among the ordinary arguments,
    missing from ``human=``, or ``human=`` holding something else); nothing was sent.
    ``argument`` names the parameter ("" for the ``human`` mapping itself)."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument = argument
        self.message = message


@dataclass(frozen=True)
class HumanAsk:
    """What one tool asks of the person before a call."""

    params: tuple[tuple[str, str], ...] = ()
    """(parameter name, question), in the order the device listed them."""
    confirm: str | None = None
    """A text the person must accept; None: none."""

    @property
    def names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.params)


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip()[:MAX_TEXT]


def human_ask(entry: Any) -> HumanAsk | None:
    """What the tool of a ``tools/list`` entry asks of the person, or None (nothing)."""
    # Device.call asks this on every call: a plain dict without `_meta` returns at once
    if type(entry) is dict or isinstance(entry, Mapping):
        meta = entry.get("_meta")
    else:
        return None
    if meta is None:
        return None
    marker = meta.get(META_HUMAN) if isinstance(meta, Mapping) else None
    if not isinstance(marker, Mapping):
        return None
    schema = entry.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    declared = props if isinstance(props, Mapping) else {}
    params: list[tuple[str, str]] = []
    raw_params = marker.get("params")
    if isinstance(raw_params, Mapping):
        for name, question in raw_params.items():
            if len(params) >= MAX_PARAMS:
                break
            if isinstance(name, str) and name in declared:
                params.append((name, _text(question) or ""))
    confirm = _text(marker.get("confirm")) or None
    if not params and confirm is None:
        return None
    return HumanAsk(tuple(params), confirm)


def model_schema(input_schema: Any, ask: HumanAsk | None) -> dict[str, Any]:
    """``input_schema`` without the parameters asked of the person: what a model may see."""
    schema = dict(input_schema) if isinstance(input_schema, Mapping) else {}
    if ask is None or not ask.params:
        return schema
    names = ask.names
    props = schema.get("properties")
    if isinstance(props, Mapping):
        schema["properties"] = {k: v for k, v in props.items() if k not in names}
    required = schema.get("required")
    if isinstance(required, list):
        kept = [k for k in required if k not in names]
        if kept:
            schema["required"] = kept
        else:
            del schema["required"]
    return schema


def requested_schema(input_schema: Any, ask: HumanAsk) -> dict[str, Any]:
    """The ``requestedSchema`` of the ``elicitation/create`` that asks ``ask``'s parameters.

    Each property keeps what elicitation allows of the device's schema (type, range, length,
    enum, default) and is titled with its question. Raises ``ValueError`` naming the
    parameter when its schema is not a flat primitive.
    """
    props = input_schema.get("properties") if isinstance(input_schema, Mapping) else None
    props = props if isinstance(props, Mapping) else {}
    required_in = input_schema.get("required") if isinstance(input_schema, Mapping) else None
    required_names = set(required_in) if isinstance(required_in, list) else set()
    out: dict[str, Any] = {}
    required: list[str] = []
    for name, question in ask.params:
        prop = props.get(name)
        ptype = prop.get("type") if isinstance(prop, Mapping) else None
        if not isinstance(ptype, str) or ptype not in ELICIT_TYPES:
            raise ValueError(
                f"parameter {name!r} cannot be asked of the person: its schema is not a flat "
                f"string, number, integer or boolean (MCP elicitation asks for nothing else)"
            )
        assert isinstance(prop, Mapping)
        kept = {k: prop[k] for k in ELICIT_KEYWORDS[ptype] if k in prop and k != "title"}
        kept["title"] = question or str(prop.get("title") or name)
        out[name] = kept
        if name in required_names:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": out}
    if required:
        schema["required"] = required
    return schema


def message(tool_label: str, ask: HumanAsk) -> str:
    """The text an elicitation (or the console's dialog) shows above the form."""
    if ask.confirm:
        return ask.confirm
    if len(ask.params) == 1 and ask.params[0][1]:
        return ask.params[0][1]
    return f"{tool_label} needs a value from you"


def misplaced(arguments: Mapping[str, Any], ask: HumanAsk | None) -> list[str]:
    """Arguments that only the person may give but came with the call's own arguments."""
    if ask is None or not ask.params:
        return []
    return sorted(name for name in arguments if name in ask.names)


def merge(
    arguments: Mapping[str, Any], human: Mapping[str, Any] | None, ask: HumanAsk | None, tool: str
) -> dict[str, Any]:
    """The call's arguments with the person's values added (``Device.call`` in dynamic mode).

    Raises :class:`HumanValueError` with the fix when a value asked of the person came among
    the ordinary arguments, or ``human`` names a parameter that is not asked of the person.
    """
    wrong = misplaced(arguments, ask)
    if wrong:
        raise HumanValueError(
            wrong[0],
            f"{tool}: {', '.join(wrong)} must come from the person (the device marks it as asked of "
            f"the person); pass human={{{wrong[0]!r}: ...}}, not an ordinary argument",
        )
    merged = dict(arguments)
    if ask is not None and ask.params:
        merged.update(human_values(tool, human, tuple(name for name, _ in ask.params), ()))
    elif human:
        raise HumanValueError(
            "", f"{tool}: human= given, but the tool asks nothing of the person: pass ordinary arguments"
        )
    return merged


def human_values(tool: str, human: Any, names: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """The ``human=`` mapping of a typed binding (or ``Device.call``), checked: only the
    parameters asked of the person (``names``), each of ``required`` present. Their values are
    then checked by the tool's ordinary validation. Raises :class:`HumanValueError`."""
    if human is None:
        human = {}
    if not isinstance(human, Mapping):
        raise HumanValueError(
            "", f"{tool}: human= must be a mapping of parameter name to value, got {type(human).__name__}"
        )
    extra = sorted(str(k) for k in human if k not in names)
    if extra:
        asked = ", ".join(names) or "nothing"
        raise HumanValueError(
            extra[0],
            f"{tool}: human= may hold only the values asked of the person ({asked}); got "
            f"{', '.join(extra)}: pass those as ordinary arguments",
        )
    missing = [k for k in required if k not in human]
    if missing:
        raise HumanValueError(
            missing[0],
            f"{tool}: {', '.join(missing)} must come from the person: ask them, then pass "
            f"human={{{missing[0]!r}: ...}}",
        )
    return dict(human)


__all__ = [
    "ELICIT_KEYWORDS",
    "ELICIT_TYPES",
    "MAX_PARAMS",
    "MAX_TEXT",
    "META_HUMAN",
    "HumanAsk",
    "HumanValueError",
    "human_ask",
    "human_values",
    "merge",
    "message",
    "misplaced",
    "model_schema",
    "requested_schema",
]
