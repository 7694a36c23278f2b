"""``completion/complete`` (MCP 2025-06-18): values for the variables of resource templates.

Two kinds of template are the bridge's to complete:

* its own ``mcpgen://devices/{device}/events``: ``device`` completes to the ids of the
  devices being served;
* a device's template, as the bridge serves it
  (``mcpgen://devices/<id>/lamp://effects/{name}``, see ``device_resources``): the values
  come from the variable's JSON Schema when the bridge was given the spec
  (``template_schemas``, keyed by the device's own template): an ``enum``, ``false``/``true``
  for a boolean, every integer of a small ``minimum``..``maximum`` range. A variable the
  spec leaves open (any string, a wide range), or a device whose spec the bridge was not
  given, gets an empty list: a device reports its templates without their variables' types.

A prompt's argument (``ref/prompt``, the prompts of ``prompts.py``) completes the same way
from its JSON Schema in the spec: an enum, a boolean, a small integer range.

Values are those starting with what the client typed (ignoring case), at most
:data:`MAX_VALUES` of them, with ``total`` and ``hasMore`` telling how many matched. A
reference the bridge does not serve (an unknown prompt, argument or template; a variable
the template lacks) is ``-32602``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .device_resources import LIST_TIMEOUT, device_uri
from .events import URI_PREFIX, URI_SUFFIX
from .prompts import PromptSet
from .protocol import INVALID_PARAMS, RpcFailure, quote

MAX_VALUES = 100
"""Values one answer carries (the MCP limit)."""
MAX_RANGE = 1000
"""The widest integer range whose members are offered (beyond it: an empty list)."""
EVENTS_TEMPLATE = f"{URI_PREFIX}{{device}}{URI_SUFFIX}"
"""The bridge's own template of every device's events resource."""
_VARIABLE = re.compile(r"\{([^{}]*)\}")

TemplateSchemas = Mapping[str, Mapping[str, Mapping[str, Any]]]
"""``{device URI template: {variable: JSON Schema}}``, e.g. from a spec's ``resources:``."""


def events_template_entry() -> dict[str, Any]:
    """The ``resources/templates/list`` entry of :data:`EVENTS_TEMPLATE`."""
    return {
        "uriTemplate": EVENTS_TEMPLATE,
        "name": "device events",
        "description": "The recent events of one served device (complete {device} for the ids).",
        "mimeType": "application/json",
    }


def variables(template: str) -> list[str]:
    """The variable names of a level 1 URI template, in order."""
    return _VARIABLE.findall(template)


def schema_values(schema: Mapping[str, Any]) -> list[str]:
    """Every value a variable of this JSON Schema may take, as URI text; empty when the
    schema does not bound them to a short list."""
    enum = schema.get("enum")
    if isinstance(enum, list):
        return [_text(v) for v in enum]
    kind = schema.get("type")
    if kind == "boolean":
        return ["false", "true"]
    low, high = schema.get("minimum"), schema.get("maximum")
    if kind == "integer" and isinstance(low, (int, float)) and isinstance(high, (int, float)):
        first, last = int(-(-low // 1)), int(high // 1)  # ceil, floor: bounds may be fractions
        if 0 <= last - first < MAX_RANGE:
            return [str(i) for i in range(first, last + 1)]
    return []


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def answer(candidates: Iterable[str], typed: str) -> dict[str, Any]:
    """The ``completion/complete`` result: the candidates starting with ``typed``."""
    lowered = typed.lower()
    matches = [v for v in candidates if v.lower().startswith(lowered)]
    return {
        "completion": {
            "values": matches[:MAX_VALUES],
            "total": len(matches),
            "hasMore": len(matches) > MAX_VALUES,
        }
    }


def _bad(message: str) -> RpcFailure:
    return RpcFailure(INVALID_PARAMS, f"completion/complete: {message}")


class Completer:
    """Answers ``completion/complete`` for the devices a bridge serves."""

    def __init__(
        self, template_schemas: TemplateSchemas | None = None, prompts: PromptSet | None = None
    ) -> None:
        self.template_schemas: dict[str, Mapping[str, Mapping[str, Any]]] = dict(template_schemas or {})
        self.prompts = prompts if prompts is not None else PromptSet()

    async def complete(self, devices: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, Mapping) or not isinstance(argument, Mapping):
            raise _bad("needs a ref and an argument")
        name, typed = argument.get("name"), argument.get("value", "")
        if not isinstance(name, str) or not isinstance(typed, str):
            raise _bad("argument needs a string name and value")
        if ref.get("type") == "ref/prompt":
            return answer(schema_values(self.prompts.argument_schema(ref.get("name"), name)), typed)
        uri = ref.get("uri")
        if ref.get("type") != "ref/resource" or not isinstance(uri, str):
            raise _bad(f"ref type must be ref/resource or ref/prompt, not {quote(ref.get('type'))}")
        if uri == EVENTS_TEMPLATE:
            self._check_variable(uri, name)
            return answer(sorted(devices), typed)
        target = device_uri(uri)
        if target is None or target[0] not in devices:
            raise _bad(f"unknown resource template {quote(uri)} (see resources/templates/list)")
        device_id, template = target
        await self._check_device_template(devices[device_id], uri, template)
        self._check_variable(uri, name)
        schema = self.template_schemas.get(template, {}).get(name)
        return answer(schema_values(schema) if isinstance(schema, Mapping) else [], typed)

    @staticmethod
    def _check_variable(uri: str, name: str) -> None:
        if name not in variables(uri):
            have = ", ".join(variables(uri)) or "none"
            raise _bad(f"{quote(name)} is not a variable of {quote(uri)} (its variables: {have})")

    @staticmethod
    async def _check_device_template(device: Any, uri: str, template: str) -> None:
        """The device must list ``template`` (a client may only complete what it was offered)."""
        lister = getattr(device, "list_resource_templates", None)
        try:
            entries = await lister(timeout=LIST_TIMEOUT) if lister is not None else []
        except Exception:  # no resources (-32601) or a failing device: it offers no template
            entries = []
        if not any(isinstance(e, Mapping) and e.get("uriTemplate") == template for e in entries):
            raise _bad(f"unknown resource template {quote(uri)} (see resources/templates/list)")
