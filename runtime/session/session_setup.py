"""Session setup: what happens between a device's connection and its first call.

``initialize`` -> ``notifications/initialized`` -> every ``tools/list`` page (with
``withUserTools: true``) -> the spec fingerprint check, the same for every transport.
:meth:`Device.setup <mcpgen.runtime.session.device.Device.setup>` runs :func:`setup` on itself;
this module sees the device only through :class:`SetupTarget` (it cannot import
:mod:`mcpgen.runtime.session.device`, which imports it).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from mcpgen import __version__
from mcpgen.protocol import PROGRESS_META_KEY
from mcpgen.runtime.core import validate, wire
from mcpgen.runtime.errors import DeviceTimeout, ProtocolError, SpecMismatch
from mcpgen.runtime.session import shared
from mcpgen.runtime.session.compat import Fingerprints, Policy, accepted, check_policy

# The device's logger: what setup reports is about that device (and its tests filter on it).
log = logging.getLogger("mcpgen.runtime.session.device")

FINGERPRINT_META_KEY = "mcpgen/fingerprint"
CLIENT_NAME = "mcpgen-runtime"
CLIENT_VERSION = __version__  # the package version (one source: pyproject.toml)
_MAX_LIST_PAGES = 1000


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the device reported it in ``tools/list``."""

    name: str
    description: str
    input_schema: dict
    user_only: bool
    raw: dict = field(repr=False)
    title: Optional[str] = None
    output_schema: Optional[dict] = field(default=None, repr=False)
    annotations: Optional[dict] = field(default=None, repr=False)
    #: Why calls with validation are refused (a ``pattern`` RE2 cannot run), or None; the
    #: call then raises :class:`~mcpgen.runtime.errors.UnsupportedPattern`.
    refused: Optional[str] = field(default=None, repr=False)

    @property
    def reports_progress(self) -> bool:
        """The device says the tool reports progress (``_meta["mcpgen/progress"]`` in its
        ``tools/list`` entry: a spec tool with ``progress: true``)."""
        meta = self.raw.get("_meta")
        return isinstance(meta, dict) and meta.get(PROGRESS_META_KEY) is True

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> ToolInfo:
        ann = raw.get("annotations")
        ann = ann if isinstance(ann, dict) else None
        audience = ann.get("audience") if ann else None
        user_only = isinstance(audience, list) and "user" in audience and "assistant" not in audience
        schema = raw.get("inputSchema")
        out = raw.get("outputSchema")
        title = raw.get("title")
        if title is None and ann is not None and isinstance(ann.get("title"), str):
            title = ann["title"]
        desc = raw.get("description")
        input_schema = schema if isinstance(schema, dict) else {"type": "object", "properties": {}}
        problem = validate.unsupported_pattern(input_schema)
        return cls(
            name=str(raw["name"]),
            description=desc if isinstance(desc, str) else "",
            input_schema=input_schema,
            user_only=user_only,
            raw=dict(raw),
            title=title if isinstance(title, str) else None,
            output_schema=out if isinstance(out, dict) else None,
            annotations=ann,
            refused=None if problem is None else str(problem),
        )


class SetupTarget(Protocol):
    """What session setup reads and fills in on the device handle (a Device)."""

    device_id: str
    call_timeout: float
    initialize_result: dict
    protocol_version: Optional[str]
    server_info: dict
    capabilities: dict
    fingerprint: Optional[str]
    expected_fingerprint: Optional[str]
    dynamic: bool

    async def request(
        self, method: str, params: Optional[dict] = None, *, timeout: Optional[float] = None
    ) -> Any: ...

    async def notify(self, method: str, params: Optional[dict] = None) -> None: ...

    async def refresh_tools(self, *, timeout: Optional[float] = None) -> list[ToolInfo]: ...


async def setup(
    device: SetupTarget,
    *,
    fingerprint: Fingerprints = None,
    policy: Policy = "warn",
    timeout: Optional[float] = None,
    init_retry: Optional[float] = None,
    vision: Optional[Mapping[str, str]] = None,
    client_info: Optional[Mapping[str, str]] = None,
) -> None:
    """``initialize`` -> ``notifications/initialized`` -> all ``tools/list`` pages ->
    fingerprint check. Raises :class:`SpecMismatch` (and closes) under policy strict.

    ``init_retry`` re-sends ``initialize`` (with a new id) at that interval until the
    device answers: for serial links to devices that may still be booting.
    """
    check_policy(policy)
    t = device.call_timeout if timeout is None else timeout
    info = dict(client_info or {})
    params: dict = {
        "protocolVersion": wire.PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {
            "name": info.get("name", CLIENT_NAME),
            "version": info.get("version", CLIENT_VERSION),
        },
    }
    if vision is not None:
        params["capabilities"]["vision"] = {
            "url": vision.get("url", ""),
            "token": vision.get("token", ""),
        }
    result = await _initialize(device, params, t, init_retry)
    if not isinstance(result, dict):
        raise ProtocolError("initialize returned a non-object result")
    result = shared.shared_json(result)  # one copy for all devices that answered alike
    device.initialize_result = result
    pv = result.get("protocolVersion")
    device.protocol_version = pv if isinstance(pv, str) else None
    si = result.get("serverInfo")
    device.server_info = si if isinstance(si, dict) else {}
    caps = result.get("capabilities")
    device.capabilities = caps if isinstance(caps, dict) else {}
    device.fingerprint = _reported_fingerprint(result)
    await device.notify("notifications/initialized")
    await device.refresh_tools(timeout=t)
    device.expected_fingerprint = _expected(fingerprint, device.fingerprint)
    check_fingerprint(device, fingerprint, policy)


async def _initialize(device: SetupTarget, params: dict, timeout: float, retry: Optional[float]) -> Any:
    if not retry:
        return await device.request("initialize", params, timeout=timeout)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        left = deadline - loop.time()
        try:
            return await device.request("initialize", params, timeout=min(retry, max(left, 0.0)))
        except DeviceTimeout:
            if loop.time() >= deadline:
                raise


def check_fingerprint(device: SetupTarget, expected: Fingerprints, policy: Policy) -> None:
    """``expected`` may hold every released fingerprint (policy compatible): a device on
    any of them is in spec mode; its bindings pick its own version (runtime.session.compat)."""
    if expected is None:
        device.dynamic = True
        return
    if policy == "off":
        device.dynamic = False
        return
    if device.fingerprint in accepted(expected):
        device.dynamic = False
        return
    if policy == "strict":
        shown = expected if isinstance(expected, str) else ", ".join(sorted(accepted(expected)))
        raise SpecMismatch(shown, device.fingerprint)
    log.warning(
        "device %s: spec fingerprint %r differs from the expected %r; using dynamic mode "
        "(device.call() validates arguments against the schemas the device reported; "
        "typed bindings check them by their own version's rules only)",
        device.device_id,
        device.fingerprint,
        expected if isinstance(expected, str) else sorted(accepted(expected)),
    )
    device.dynamic = True


async def list_tools(device: SetupTarget, *, timeout: Optional[float] = None) -> list[ToolInfo]:
    """Reads every ``tools/list`` page (``withUserTools: true``); the device applies the list."""
    tools: list[ToolInfo] = []
    names: set[str] = set()
    cursor = ""
    seen: set[str] = set()
    for _ in range(_MAX_LIST_PAGES):
        res = await device.request("tools/list", {"cursor": cursor, "withUserTools": True}, timeout=timeout)
        if not isinstance(res, dict):
            raise ProtocolError("tools/list returned a non-object result")
        page = res.get("tools")
        if not isinstance(page, list):
            raise ProtocolError("tools/list result has no tools array")
        for raw in page:
            if isinstance(raw, dict) and isinstance(raw.get("name"), str) and raw["name"] not in names:
                names.add(raw["name"])
                tools.append(_shared_tool(raw))
        nxt = res.get("nextCursor")
        if not nxt or not isinstance(nxt, str):
            break
        if nxt in seen:
            log.warning("device %s: tools/list cursor %r repeats; stopping", device.device_id, nxt)
            break
        seen.add(nxt)
        cursor = nxt
    for tool in tools:
        if tool.refused is not None:
            log.warning(
                "device %s: tool %s refused: %s (calls to it raise UnsupportedPattern; the other tools work)",
                device.device_id,
                tool.name,
                tool.refused,
            )
    return tools


# Devices of one firmware report identical tools: one ToolInfo (and its schema dicts) per
# distinct tool description, shared by every handle, instead of a copy per device (a
# gateway with 10,000 devices would otherwise hold 10,000 copies of the same schemas).
_TOOLS: weakref.WeakValueDictionary[bytes, ToolInfo] = weakref.WeakValueDictionary()


def _shared_tool(raw: dict) -> ToolInfo:
    try:
        key = wire.dumps_sorted(raw)
    except Exception:  # not serialisable as sent (cannot happen for parsed JSON): no sharing
        return ToolInfo.from_raw(raw)
    info = _TOOLS.get(key)
    if info is None:
        info = ToolInfo.from_raw(raw)
        _TOOLS[key] = info
    return info


def _expected(expected: Fingerprints, reported: Optional[str]) -> Optional[str]:
    """The one fingerprint the device is held to: the reported one when it is among several
    accepted ones (released versions), else the last of them (``RELEASES`` ends with the newest)."""
    if expected is None or isinstance(expected, str):
        return expected
    if reported in accepted(expected):
        return reported
    return list(expected)[-1] if expected else None


def _reported_fingerprint(result: dict) -> Optional[str]:
    meta = result.get("_meta")
    if isinstance(meta, dict):
        fp = meta.get(FINGERPRINT_META_KEY)
        if isinstance(fp, str):
            return fp
    si = result.get("serverInfo")
    if isinstance(si, dict):
        m2 = si.get("_meta")
        if isinstance(m2, dict) and isinstance(m2.get(FINGERPRINT_META_KEY), str):
            return m2[FINGERPRINT_META_KEY]
    return None
