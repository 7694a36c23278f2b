"""Support code shared by every generated bindings module (``<slug>_tools``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Optional

from mcpgen.runtime.errors import SpecMismatch
from mcpgen.runtime.session.compat import POLICIES, Policy, compatibility

log = logging.getLogger("mcpgen.runtime.bindings")

# ``Policy`` is re-exported for the generated bindings, which type their ``policy`` with it.


def bind_device(
    device: Any,
    *,
    fingerprint: str,
    kinds: Mapping[str, str],
    policy: Policy,
    cls_name: str,
    releases: Optional[Mapping[str, str]] = None,
) -> Optional[str]:
    """Checks ``device`` against the bindings' spec and registers the return kinds.

    ``policy``: ``"strict"`` raises :class:`SpecMismatch` when the device reports another
    fingerprint, ``"warn"`` logs it (the bindings still validate locally with their own
    rules), ``"off"`` skips the check. ``"compatible"``: a device on one of ``releases``
    (fingerprint -> version, the bindings' ``RELEASES``) is served by that release's
    bindings, whose fingerprint is returned (the caller switches to them); any other
    fingerprint is handled as under ``"warn"``. Returns None when the bindings' own version
    serves the device.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    actual = getattr(device, "fingerprint", None)
    if policy == "compatible" and actual != fingerprint and compatibility(releases or {}, actual).compatible:
        return actual
    if policy != "off" and actual != fingerprint:
        if policy == "strict":
            raise SpecMismatch(fingerprint, actual)
        newest = (releases or {}).get(fingerprint, "this")
        log.warning(
            "%s bound to device %r whose spec fingerprint %r is not %s (it reports version %r): "
            "its .version is that; the typed methods still check arguments by version %s's "
            "ranges and enums and decode results by its return kinds, NOT by the device's own "
            "schemas, so the device may refuse a call as a tool error (device.call() validates "
            "against the schemas the device reported)",
            cls_name,
            getattr(device, "device_id", "?"),
            actual,
            "a released one" if releases else repr(fingerprint),
            reported_version(device),
            newest,
        )
    setter = getattr(device, "set_return_kinds", None)
    if setter is not None:
        setter(kinds)
    return None


def reported_version(device: Any) -> str:
    """The version a device reports of itself (``serverInfo.version``), ``"unknown"`` without one."""
    info = getattr(device, "server_info", None)
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) and version else "unknown"


def version_of(device: Any, *, fingerprint: str, version: str, policy: Policy) -> str:
    """What the bindings' ``.version`` says of a device they serve with their own version:
    ``version`` when the device reports the bindings' fingerprint (or ``policy`` is
    ``"off"``, which does not look), else the version the device reports of itself, never
    one it does not run."""
    if policy == "off" or getattr(device, "fingerprint", None) == fingerprint:
        return version
    return reported_version(device)


__all__ = ["POLICIES", "Policy", "bind_device", "reported_version", "version_of"]
