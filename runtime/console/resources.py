"""A device's MCP resources as the console shows them: lists, reads, subscriptions.

Works with any handle that has ``request`` (every runtime ``Device``), the spec known or
not: the lists come from ``resources/list`` and ``resources/templates/list`` (all pages),
a read is ``resources/read`` with its contents passed to the page as the device sent
them (``text``, or base64 ``blob``), and a template's variables are expanded here with
the runtime's RFC 6570 expansion (the page never builds a URI itself). Device errors are
answered as data (``{"error": {...}}``) so the page can show them next to the form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from mcpgen.runtime.errors import McpDeviceError
from mcpgen.runtime.session.resources import expand, list_resource_templates, list_resources

from .console import ConsoleError, error_json
from .registry import DeviceEntry

METHOD_NOT_FOUND = -32601
MAX_URI = 2048
"""Characters of a URI the page may ask to read (a device's own limit is far lower)."""


def _connected(entry: DeviceEntry) -> Any:
    if not entry.connected:
        raise ConsoleError(409, f"device {entry.device_id!r} is disconnected")
    if not hasattr(entry.device, "request"):
        raise ConsoleError(501, f"device {entry.device_id!r}: this handle cannot send MCP requests")
    return entry.device


async def listing(entry: DeviceEntry, timeout: float) -> dict[str, Any]:
    """``{"resources", "templates", "subscriptions", "error"}``; a device without
    resources (``-32601``) has empty lists and no error."""
    device = _connected(entry)
    out: dict[str, Any] = {"resources": [], "templates": [], "subscriptions": sorted(entry.subscriptions)}
    try:
        out["resources"] = await list_resources(device, timeout=timeout)
        out["templates"] = await list_resource_templates(device, timeout=timeout)
    except McpDeviceError as exc:
        if getattr(exc, "code", None) != METHOD_NOT_FOUND:
            out["error"] = error_json(exc)
    return out


def target_uri(uri: Any, template: Any, values: Any) -> str:
    """The URI to read: ``uri`` as given, or ``template`` expanded with ``values`` (each
    of its variables needs a non-empty text value)."""
    if isinstance(uri, str) and uri:
        chosen = uri
    elif isinstance(template, str) and template:
        if not isinstance(values, Mapping):
            raise ConsoleError(400, 'Bad Request: "values" must be an object of the template\'s variables')
        names = [part.split("}")[0] for part in template.split("{")[1:]]
        missing = [n for n in names if not isinstance(values.get(n), str) or values.get(n) == ""]
        if missing:
            raise ConsoleError(400, f"fill in {', '.join(missing)} (the variables of {template})")
        chosen = expand(template, values)
    else:
        raise ConsoleError(400, 'Bad Request: send "uri", or "template" and "values"')
    if len(chosen) > MAX_URI:
        raise ConsoleError(400, f"Bad Request: a URI of at most {MAX_URI} characters")
    return chosen


async def read(entry: DeviceEntry, uri: str, timeout: float) -> dict[str, Any]:
    """``{"uri", "contents"}`` as the device sent them, or ``{"uri", "error"}``."""
    device = _connected(entry)
    try:
        result = await device.request("resources/read", {"uri": uri}, timeout=timeout)
    except McpDeviceError as exc:
        return {"uri": uri, "error": error_json(exc)}
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return {"uri": uri, "error": {"type": "ProtocolError", "message": "the device sent no contents"}}
    return {"uri": uri, "contents": [c for c in contents if isinstance(c, dict)]}


async def subscribe(entry: DeviceEntry, uri: str, on: bool, timeout: float) -> dict[str, Any]:
    """``resources/subscribe`` (or unsubscribe) on the device; the console keeps the
    subscription for the device id, and renews it when the device reconnects."""
    device = _connected(entry)
    method = "resources/subscribe" if on else "resources/unsubscribe"
    error: Optional[dict[str, Any]] = None
    try:
        await device.request(method, {"uri": uri}, timeout=timeout)
    except McpDeviceError as exc:
        error = error_json(exc)
    if error is None:
        (entry.subscriptions.add if on else entry.subscriptions.discard)(uri)
    out: dict[str, Any] = {"uri": uri, "subscriptions": sorted(entry.subscriptions)}
    if error is not None:
        out["error"] = error
    return out
