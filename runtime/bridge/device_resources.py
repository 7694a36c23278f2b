"""Each served device's own resources (the spec's ``resources:``), offered to MCP clients
next to its events resource.

A device URI (``lamp://status``) is served as ``mcpgen://devices/<id>/<uri>``
(``mcpgen://devices/lamp-1/lamp://status``): the device id is in the path as for the
events resource (``mcpgen://devices/<id>/events``, whose last part has no scheme, so the
two never collide), and a URI template keeps its ``{var}`` parts, so templates map the
same way. Names get the device id in front (``lamp-1.status``).

The bridge asks the devices when a client asks (no cache: a device's resources are few,
and reads are live anyway); a device without resources (``-32601``) or one that fails
the list is left out of it.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote, unquote

from .protocol import RpcFailure

log = logging.getLogger("mcpgen.runtime.bridge")

PREFIX = "mcpgen://devices/"
LIST_TIMEOUT = 10.0


def bridge_uri(device_id: str, uri: str) -> str | None:
    """The bridge's URI (or template) of a device's ``uri``; None when it has no scheme."""
    scheme, sep, _rest = uri.partition(":")
    if not sep or not scheme or "/" in scheme:
        return None
    return f"{PREFIX}{quote(device_id, safe='')}/{uri}"


def device_uri(uri: str) -> tuple[str, str] | None:
    """(device id, the device's URI) of a bridge URI made by ``bridge_uri``, else None."""
    if not uri.startswith(PREFIX):
        return None
    device_part, sep, tail = uri[len(PREFIX) :].partition("/")
    scheme, colon, _rest = tail.partition(":")
    if not sep or not colon or not scheme or "/" in scheme or not device_part:
        return None
    return unquote(device_part), tail


def _entry(device_id: str, entry: Any, key: str) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or not isinstance(entry.get(key), str):
        return None
    mapped = bridge_uri(device_id, entry[key])
    if mapped is None:
        return None
    out = dict(entry)
    out[key] = mapped
    out["name"] = f"{device_id}.{entry.get('name', '')}"
    return out


async def list_entries(devices: dict[str, Any], templates: bool) -> list[dict[str, Any]]:
    """Every device's resources (or templates), mapped to bridge URIs, by device id."""
    key = "uriTemplate" if templates else "uri"
    out: list[dict[str, Any]] = []
    for device_id in sorted(devices):
        device = devices[device_id]
        lister = getattr(device, "list_resource_templates" if templates else "list_resources", None)
        if lister is None or getattr(device, "closed", False):
            continue
        try:
            entries = await lister(timeout=LIST_TIMEOUT)
        except Exception as exc:  # no resources (-32601), or the device failed: leave it out
            log.debug("device %s: no resources listed (%s)", device_id, exc)
            continue
        out += [e for e in (_entry(device_id, x, key) for x in entries) if e is not None]
    return out


async def read(devices: dict[str, Any], uri: str, not_found: int) -> dict[str, Any] | None:
    """``resources/read`` of a device resource, its contents' URIs mapped back; None when
    ``uri`` is not a device resource URI."""
    target = device_uri(uri)
    if target is None:
        return None
    device_id, inner = target
    device = devices.get(device_id)
    if device is None or not hasattr(device, "request"):
        raise RpcFailure(not_found, "Resource not found", {"uri": uri[:256]})
    try:
        result = await device.request("resources/read", {"uri": inner})
    except Exception as exc:
        code = getattr(exc, "code", None)
        message = getattr(exc, "message", str(exc))
        raise RpcFailure(code if isinstance(code, int) else not_found, str(message)) from None
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        raise RpcFailure(-32603, f"device {device_id} sent no contents for {inner}")
    mapped = []
    for c in contents:
        if isinstance(c, dict):
            c = dict(c)
            c["uri"] = uri
        mapped.append(c)
    return {"contents": mapped}
