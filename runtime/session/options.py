"""What every device-facing front door holds its sessions to: one :class:`SessionOptions`.

:class:`~mcpgen.runtime.links.websocket.gateway.Gateway`,
:class:`~mcpgen.runtime.links.mqtt.gateway.MqttGateway` and
:class:`~mcpgen.runtime.links.mqtt.fleet.MqttFleet` take the same session settings: pass them as
``options=SessionOptions(...)`` (one object, shared by several front doors), or as
keyword arguments of the same names (:class:`SessionKeywords`), which replace the
matching fields of ``options``. Each front door keeps the result in ``.options`` and
shows its fields as read-only attributes (``gateway.call_timeout``, ...).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional, TypedDict

from mcpgen.runtime.auth import Authenticator
from mcpgen.runtime.session.compat import Fingerprints, Policy, check_policy


@dataclass(frozen=True)
class SessionOptions:
    """The settings of every session a front door opens.

    * ``auth``: checks each device (``authenticate(Handshake) -> bool``, may be async);
      None accepts every device.
    * ``fingerprint``: the spec fingerprint expected (one, or every released one, e.g.
      the bindings' ``RELEASES``); None: no check, dynamic mode.
    * ``policy``: what a fingerprint mismatch does: ``"compatible"``, ``"strict"``,
      ``"warn"`` (the default) or ``"off"`` (runtime.session.compat).
    * ``call_timeout``: seconds a call waits for its reply (each handle's default).
    * ``setup_timeout``: seconds for session setup (None: ``call_timeout`` per request).
    * ``vision``: the xiaozhi ``vision`` capability offered in ``initialize``
      (``{"url", "token"}``).
    * ``max_frame``: the largest message accepted from a device, in bytes.
    """

    auth: Optional[Authenticator] = None
    fingerprint: Fingerprints = None
    policy: Policy = "warn"
    call_timeout: float = 10.0
    setup_timeout: Optional[float] = None
    vision: Optional[Mapping[str, str]] = None
    max_frame: int = 65536

    def __post_init__(self) -> None:
        check_policy(self.policy)
        if self.vision is not None:  # a copy: the caller's mapping may change later
            object.__setattr__(self, "vision", dict(self.vision))


class SessionKeywords(TypedDict, total=False):
    """:class:`SessionOptions`' fields as keyword arguments of the front doors."""

    auth: Optional[Authenticator]
    fingerprint: Fingerprints
    policy: Policy
    call_timeout: float
    setup_timeout: Optional[float]
    vision: Optional[Mapping[str, str]]
    max_frame: int


def session_options(options: Optional[SessionOptions], keywords: SessionKeywords) -> SessionOptions:
    """``options`` (default: :class:`SessionOptions()`) with ``keywords`` replacing its fields.

    An unknown keyword raises :class:`TypeError` naming it and the accepted ones.
    """
    unknown = sorted(set(keywords) - set(SessionKeywords.__annotations__))
    if unknown:
        raise TypeError(
            f"unexpected keyword argument(s) {', '.join(map(repr, unknown))}; the session "
            f"settings are {', '.join(SessionKeywords.__annotations__)} (or options=SessionOptions(...))"
        )
    base = options if options is not None else SessionOptions()
    return dataclasses.replace(base, **keywords) if keywords else base


class HasSessionOptions:
    """The front doors' read-only attributes for the fields of their ``options``."""

    options: SessionOptions

    @property
    def auth(self) -> Optional[Authenticator]:
        return self.options.auth

    @property
    def fingerprint(self) -> Fingerprints:
        return self.options.fingerprint

    @property
    def policy(self) -> Policy:
        return self.options.policy

    @property
    def call_timeout(self) -> float:
        return self.options.call_timeout

    @property
    def setup_timeout(self) -> Optional[float]:
        return self.options.setup_timeout

    @property
    def vision(self) -> Optional[Mapping[str, str]]:
        return self.options.vision

    @property
    def max_frame(self) -> int:
        return self.options.max_frame


__all__ = ["SessionOptions", "SessionKeywords", "HasSessionOptions", "session_options"]
