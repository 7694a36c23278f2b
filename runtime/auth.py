"""Pluggable authentication of devices connecting to the gateway.

The gateway reads the xiaozhi handshake headers (``Authorization: Bearer <token>``,
``Device-Id``, ``Client-Id``, ``Protocol-Version``) into a :class:`Handshake` and asks
its authenticator. Anything with an ``authenticate(handshake) -> bool`` method (sync or
async) is an :class:`Authenticator`.

:class:`HmacAuth` accepts two token forms, both keyed by a shared secret:

* static: ``hex(HMAC-SHA256(secret, device_id))`` -- a per-device token that never
  expires (what you flash into a device's config);
* expiring: ``<device_id>.<expiry>.<sig>`` where ``expiry`` is a Unix time in whole
  seconds and ``sig = hex(HMAC-SHA256(secret, "<device_id>.<expiry>"))``; valid while
  ``now <= expiry`` and only for the ``Device-Id`` it names.

Use :meth:`HmacAuth.token_for` to mint either form. All comparisons use
``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Optional, Protocol, Union, runtime_checkable


@dataclass(frozen=True)
class Handshake:
    """What a device presented when it opened its WebSocket."""

    device_id: str
    client_id: Optional[str]
    token: Optional[str]  # the part after "Bearer " (None when absent)
    protocol_version: Optional[int]
    remote: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)


@runtime_checkable
class Authenticator(Protocol):
    def authenticate(self, handshake: Handshake) -> Union[bool, Awaitable[bool]]:
        """True to accept the device."""
        ...


def bearer_token(authorization: Optional[str]) -> Optional[str]:
    """The token of an ``Authorization: Bearer <token>`` header value (case-insensitive scheme)."""
    if not authorization:
        return None
    parts = authorization.strip().split(None, 1)
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1].strip()
    return None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


class TokenAuth:
    """Fixed bearer tokens per device id; the key ``"*"`` is the token for any device."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self.tokens = dict(tokens)

    def authenticate(self, handshake: Handshake) -> bool:
        token = handshake.token
        if token is None:
            return False
        expected = self.tokens.get(handshake.device_id)
        if expected is not None and _same(token, expected):
            return True
        wildcard = self.tokens.get("*")
        return wildcard is not None and _same(token, wildcard)


class HmacAuth:
    """Tokens derived from a shared secret (see the module docstring for the two forms)."""

    def __init__(self, secret: Union[str, bytes], *, allow_static: bool = True) -> None:
        self.secret = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        self.allow_static = allow_static

    def _sig(self, message: str) -> str:
        return hmac.new(self.secret, message.encode("utf-8"), hashlib.sha256).hexdigest()

    def token_for(self, device_id: str, expiry: Optional[int] = None) -> str:
        """The static token of ``device_id``, or an expiring one valid until ``expiry``."""
        if expiry is None:
            return self._sig(device_id)
        return f"{device_id}.{int(expiry)}.{self._sig(f'{device_id}.{int(expiry)}')}"

    def authenticate(self, handshake: Handshake) -> bool:
        token = handshake.token
        if not token:
            return False
        device_id = handshake.device_id
        head, sep, sig = token.rpartition(".")
        if sep:
            dev, sep2, expiry_text = head.rpartition(".")
            if not sep2 or not expiry_text.isdigit():
                return False
            if not _same(dev, device_id):
                return False
            if int(expiry_text) < time.time():
                return False
            return _same(sig, self._sig(f"{dev}.{expiry_text}"))
        return self.allow_static and _same(token, self._sig(device_id))


__all__ = ["Handshake", "Authenticator", "TokenAuth", "HmacAuth", "bearer_token"]
