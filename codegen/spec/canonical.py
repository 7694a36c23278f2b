"""The model back from its canonical JSON (``Spec.canonical()``): how a released version,
stored as data in the spec's history, becomes a ``Spec`` again for ``codegen diff`` and for
the bindings of older versions.

The result hashes to the same fingerprint as the spec it was made from; the history checks
that, so a hand-edited release is caught instead of silently changing meaning.
"""

from __future__ import annotations

from typing import Any, Optional

from mcpgen.codegen.spec.model import (
    DeviceSpec,
    Event,
    Field,
    ObjectType,
    Param,
    Resource,
    Returns,
    Spec,
    Tool,
)


class CanonicalError(ValueError):
    """The data is not a canonical spec; the message names the field."""


def _req(data: Any, key: str, where: str) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise CanonicalError(f"{where}: missing `{key}`")
    return data[key]


def _param(data: Any, where: str) -> Param:
    if not isinstance(data, dict):
        raise CanonicalError(f"{where}: expected an object")
    return Param(
        name=_req(data, "name", where),
        type=_req(data, "type", where),
        description=data.get("description", ""),
        default=data.get("default"),
        minimum=data.get("minimum"),
        maximum=data.get("maximum"),
        max_length=data.get("max_length"),
        enum=tuple(data.get("enum") or ()),
        pattern=data.get("pattern"),
        ref=data.get("ref"),
        human=data.get("human"),
    )


def _field(data: Any, where: str) -> Field:
    if not isinstance(data, dict):
        raise CanonicalError(f"{where}: expected an object")
    items: Optional[Field] = None
    if data.get("items") is not None:
        items = _field(data["items"], where + ".items")
    return Field(
        name=_req(data, "name", where),
        type=_req(data, "type", where),
        description=data.get("description", ""),
        properties=tuple(
            _field(p, f"{where}.properties[{i}]") for i, p in enumerate(data.get("properties") or ())
        ),
        items=items,
    )


def _tool(data: Any, where: str) -> Tool:
    returns = _req(data, "returns", where)
    return Tool(
        name=_req(data, "name", where),
        description=data.get("description", ""),
        handler=_req(data, "handler", where),
        params=tuple(_param(p, f"{where}.params[{i}]") for i, p in enumerate(data.get("params") or ())),
        returns=Returns(
            kind=_req(returns, "kind", where + ".returns"),
            description=returns.get("description", ""),
            properties=tuple(
                _field(p, f"{where}.returns.properties[{i}]")
                for i, p in enumerate(returns.get("properties") or ())
            ),
            items=tuple(returns.get("items") or ()),
        ),
        title=data.get("title"),
        user_only=bool(data.get("user_only", False)),
        read_only=data.get("read_only"),
        destructive=data.get("destructive"),
        idempotent=data.get("idempotent"),
        progress=bool(data.get("progress", False)),
        confirm=data.get("confirm"),
    )


def _resource(data: Any, where: str) -> Resource:
    return Resource(
        name=_req(data, "name", where),
        description=data.get("description", ""),
        mime_type=_req(data, "mime_type", where),
        content=_req(data, "content", where),
        uri=data.get("uri"),
        uri_template=data.get("uri_template"),
        params=tuple(_param(p, f"{where}.params[{i}]") for i, p in enumerate(data.get("params") or ())),
        max_size=data.get("max_size"),
        subscribe=bool(data.get("subscribe", False)),
    )


def spec_from_canonical(data: Any, source: str = "") -> Spec:
    """The ``Spec`` whose ``canonical()`` is ``data``; raises ``CanonicalError`` when a key is
    missing or has the wrong shape."""
    try:
        device = _req(data, "device", "spec")
        dev = DeviceSpec(
            name=_req(device, "name", "device"),
            version=_req(device, "version", "device"),
            description=device.get("description", ""),
            page_size=device.get("page_size", DeviceSpec.page_size),
            protocol_version=device.get("protocol_version", DeviceSpec.protocol_version),
            errors=device.get("errors", "mcp"),
            ota=bool(device.get("ota", False)),
        )
        tools = tuple(_tool(t, f"tools[{i}]") for i, t in enumerate(_req(data, "tools", "spec")))
        events = tuple(
            Event(
                name=_req(e, "name", f"events[{i}]"),
                description=e.get("description", ""),
                params=tuple(
                    _param(p, f"events[{i}].params[{j}]") for j, p in enumerate(e.get("params") or ())
                ),
            )
            for i, e in enumerate(data.get("events") or ())
        )
        resources = tuple(_resource(r, f"resources[{i}]") for i, r in enumerate(data.get("resources") or ()))
        types = tuple(
            ObjectType(
                name=_req(t, "name", f"types[{i}]"),
                description=t.get("description", ""),
                fields=tuple(
                    _param(p, f"types[{i}].fields[{j}]") for j, p in enumerate(t.get("fields") or ())
                ),
            )
            for i, t in enumerate(data.get("types") or ())
        )
    except (AttributeError, TypeError) as exc:  # a list where an object belongs, and the like
        raise CanonicalError(f"not a canonical spec: {exc}") from None
    return Spec(device=dev, tools=tools, source=source, events=events, resources=resources, types=types)


__all__ = ["CanonicalError", "spec_from_canonical"]
