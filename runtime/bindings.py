"""Support code shared by every generated bindings module (``<slug>_tools``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, get_args

from mcpgen.runtime.device import Policy
from mcpgen.runtime.errors import SpecMismatch

log = logging.getLogger("mcpgen.runtime.bindings")

# ``Policy`` (``Literal["strict", "warn", "off"]``) is re-exported for the generated
# bindings, which type their ``policy`` argument with it.
POLICIES: tuple[str, ...] = get_args(Policy)


def bind_device(
    device: Any, *, fingerprint: str, kinds: Mapping[str, str], policy: Policy, cls_name: str
) -> None:
    """Checks ``device`` against the bindings' spec and registers the return kinds.

    ``policy``: ``"strict"`` raises :class:`SpecMismatch` when the device reports another
    fingerprint, ``"warn"`` logs it (the bindings still validate locally with their own
    rules), ``"off"`` skips the check.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    actual = getattr(device, "fingerprint", None)
    if policy != "off" and actual != fingerprint:
        if policy == "strict":
            raise SpecMismatch(fingerprint, actual)
        log.warning(
            "%s bound to device %r whose spec fingerprint is %r, not %r: the device may reject calls",
            cls_name,
            getattr(device, "device_id", "?"),
            actual,
            fingerprint,
        )
    setter = getattr(device, "set_return_kinds", None)
    if setter is not None:
        setter(kinds)


__all__ = ["POLICIES", "Policy", "bind_device"]
