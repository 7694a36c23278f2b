"""Each served device's own resources (the spec's ``resources:``), offered to MCP clients
next to its events resource.

URIs follow the rule tool names follow (``names.py``, the bridge's ``prefix_tools``):

* **one device served** (no prefix): a device URI is served exactly as the device gave it
  (``lamp://status``), and so are its templates, ``resources/read`` contents and
  ``notifications/resources/updated``; a client that knows a URI in advance reads it, and
  the bridge forwards it to the device without listing first;
* **several devices** (prefix): ``mcpgen://devices/<id>/<uri>``
  (``mcpgen://devices/lamp-1/lamp://status``): the device id in the path as for the
  events resource (``mcpgen://devices/<id>/events``, whose last part has no scheme, so the
  two never collide); a template keeps its ``{var}`` parts, so templates map the same way,
  and names get the device id in front (``lamp-1.status``).

The prefixed form of a device URI is accepted in both cases. Without a prefix but with
several devices (``--no-prefix-tools``), a URI two devices both offer is served plainly for
the first device by id and prefixed for the others, as colliding tool names get a hash;
a plain URI is routed to the first device listing it (or a template matching it).

The bridge asks the devices when a client asks (no cache: a device's resources are few,
and reads are live anyway); a device without resources (``-32601``) or one that fails
the list is left out of it.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote, unquote

from .events import URI_PREFIX as EVENTS_PREFIX
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


def has_scheme(uri: str) -> bool:
    """``lamp://status`` and ``urn:x`` have one; a device URI without one is not served."""
    scheme, sep, _rest = uri.partition(":")
    return bool(sep and scheme and "/" not in scheme)


def _template_pattern(template: str) -> re.Pattern[str]:
    """A level 1 URI template as a regular expression of its expansions (a variable's value
    is percent-encoded, so it holds no ``/``)."""
    parts = re.split(r"\{[^{}]*\}", template)
    return re.compile("[^/]*".join(re.escape(p) for p in parts) + r"\Z")


async def _listing(device: Any, templates: bool) -> list[Any]:
    lister = getattr(device, "list_resource_templates" if templates else "list_resources", None)
    if lister is None or getattr(device, "closed", False):
        return []
    try:
        entries = await lister(timeout=LIST_TIMEOUT)
    except Exception as exc:  # no resources (-32601), or the device failed: leave it out
        log.debug("device %s: no resources listed (%s)", getattr(device, "device_id", "?"), exc)
        return []
    return list(entries) if isinstance(entries, list) else []


def _entry(device_id: str, entry: Any, key: str, prefix: bool, taken: set[str]) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or not isinstance(entry.get(key), str) or not has_scheme(entry[key]):
        return None
    out = dict(entry)
    if not prefix and entry[key] not in taken:
        taken.add(entry[key])
        return out
    out[key] = bridge_uri(device_id, entry[key])
    out["name"] = f"{device_id}.{entry.get('name', '')}"
    return out


async def list_entries(devices: dict[str, Any], templates: bool, prefix: bool = True) -> list[dict[str, Any]]:
    """Every device's resources (or templates) as the bridge serves them (see the module
    docstring for ``prefix``), by device id."""
    key = "uriTemplate" if templates else "uri"
    out: list[dict[str, Any]] = []
    taken: set[str] = set()
    for device_id in sorted(devices):
        for x in await _listing(devices[device_id], templates):
            e = _entry(device_id, x, key, prefix, taken)
            if e is not None:
                out.append(e)
    return out


async def route(
    devices: dict[str, Any], uri: str, prefix: bool, template: bool = False
) -> tuple[str, str] | None:
    """(device id, the device's URI) that ``uri`` as a client gave it stands for, or None
    when it is not a device resource's URI (the bridge's own events URI, say). With
    ``template``, ``uri`` is a URI template (``completion/complete``)."""
    target = device_uri(uri)
    if target is not None:
        return target
    if prefix or not has_scheme(uri) or uri.startswith(EVENTS_PREFIX):
        return None
    if len(devices) == 1:  # no listing: a URI the client knew in advance reads at once
        return next(iter(devices)), uri
    for device_id in sorted(devices):  # the device whose entry list_entries serves plainly
        if template:
            listed = await _listing(devices[device_id], True)
            if any(isinstance(e, dict) and e.get("uriTemplate") == uri for e in listed):
                return device_id, uri
            continue
        resources = await _listing(devices[device_id], False)
        if any(isinstance(e, dict) and e.get("uri") == uri for e in resources):
            return device_id, uri
        for e in await _listing(devices[device_id], True):
            if isinstance(e, dict) and isinstance(e.get("uriTemplate"), str):
                if _template_pattern(e["uriTemplate"]).match(uri):
                    return device_id, uri
    return None


async def read(
    devices: dict[str, Any], uri: str, not_found: int, prefix: bool = True
) -> dict[str, Any] | None:
    """``resources/read`` of a device resource, its contents' URIs as the client named the
    resource; None when ``uri`` is not a device resource URI."""
    target = await route(devices, uri, prefix)
    if target is None:
        if not prefix and has_scheme(uri) and not uri.startswith(EVENTS_PREFIX):
            raise RpcFailure(not_found, "Resource not found", {"uri": uri[:256]})
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
