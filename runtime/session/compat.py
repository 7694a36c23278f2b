"""Which spec versions a backend serves: the compatibility check shared by the session setup
(``Device.setup``), the generated bindings and anything that updates devices.

A backend is built from the newest spec; its bindings carry every released version
(``<slug>_tools.RELEASES``: fingerprint -> device.version). A device reporting one of those
fingerprints is compatible and is served typed by its own version; any other fingerprint is
unknown, and the policy decides (strict refuses, warn and compatible fall back to dynamic
mode, off does not look).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal, Optional, Union, get_args

Policy = Literal["compatible", "strict", "warn", "off"]
POLICIES: tuple[str, ...] = get_args(Policy)

#: What a backend expects: one fingerprint, or every released one (a ``RELEASES`` mapping
#: or any collection of fingerprints), or None (no spec: dynamic mode).
Fingerprints = Union[str, Collection[str], None]


def check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(map(repr, POLICIES))}, not {policy!r}")


def accepted(expected: Fingerprints) -> frozenset[str]:
    """The fingerprints ``expected`` stands for."""
    if expected is None:
        return frozenset()
    if isinstance(expected, str):
        return frozenset((expected,))
    return frozenset(expected)


@dataclass(frozen=True)
class Compatibility:
    """The answer for one device: ``version`` is its released version (None when unknown)."""

    fingerprint: Optional[str]
    version: Optional[str]

    @property
    def compatible(self) -> bool:
        return self.version is not None


def compatibility(releases: Mapping[str, str], fingerprint: Optional[str]) -> Compatibility:
    """Whether a device reporting ``fingerprint`` runs one of ``releases`` (fingerprint ->
    version, as the bindings' ``RELEASES``), and which."""
    version = releases.get(fingerprint) if fingerprint is not None else None
    return Compatibility(fingerprint, version)


__all__ = ["POLICIES", "Compatibility", "Fingerprints", "Policy", "accepted", "check_policy", "compatibility"]
