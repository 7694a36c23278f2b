"""Pluggable authentication of devices connecting to the gateway.

The gateway reads the xiaozhi handshake headers (``Authorization: Bearer <token>``,
``Device-Id``, ``Client-Id``, ``Protocol-Version``) into a :class:`Handshake` and asks
its authenticator. Anything with an ``authenticate(handshake) -> bool`` method (sync or
async) is an :class:`Authenticator`.

:class:`HmacAuth` tokens (format version 1) are keyed by a shared secret and come in two
kinds, told apart by a kind letter that is part of the *signed* input:

* permanent: ``mcpgen1.p.<sig>`` -- never expires (what you flash into a device's config);
* expiring: ``mcpgen1.e.<expiry>.<sig>`` -- ``expiry`` is a Unix time in whole seconds,
  valid while ``now <= expiry``.

``sig = hex(HMAC-SHA256(secret, signed_input))`` where ``signed_input`` is
``"mcpgen-token/1" NUL kind NUL <len(device_id)> ":" device_id NUL expiry`` (``expiry``
empty for permanent tokens). The device id is length-prefixed and the kind is signed, so no
token of one kind or device can be read as a token of another kind or device. (The format
before version 1 signed the bare ``device_id`` for permanent tokens and
``"<device_id>.<expiry>"`` for expiring ones: the permanent token of device ``X.9999999999``
was a valid never-expiring token of ``X``. Such tokens are refused with a message saying how
to re-issue them.)

Mint tokens with :meth:`HmacAuth.token_for`, or from a shell::

    MCPGEN_HMAC_SECRET=... python -m mcpgen.runtime.auth DEVICE_ID [--expires-in SECONDS]

All comparisons use ``hmac.compare_digest``.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import inspect
import logging
import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Union, runtime_checkable

from mcpgen.runtime.errors import LogThrottle, quoted

log = logging.getLogger("mcpgen.runtime.auth")

TOKEN_PREFIX = "mcpgen1"
_DOMAIN = b"mcpgen-token/1"
_PERMANENT = "p"
_EXPIRING = "e"
#: Latest expiry a token may carry (the largest signed 64-bit Unix time): longer digit
#: strings are refused as malformed before any arithmetic on them.
MAX_EXPIRY = 2**63 - 1
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_OLD_EXPIRING = re.compile(r".*\.[0-9]+\.[0-9a-fA-F]{64}", re.DOTALL)
_REISSUE = (
    "re-issue it with HmacAuth(secret).token_for(device_id[, expiry]) or "
    "`MCPGEN_HMAC_SECRET=... python -m mcpgen.runtime.auth DEVICE_ID [--expires-in SECONDS]`"
)


@dataclass(frozen=True)
class Handshake:
    """What a device presented: the headers of its WebSocket upgrade, or (MQTT, which has
    no per-device handshake at the backend) its hello (:func:`hello_handshake`)."""

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


async def authenticate(auth: Optional[Authenticator], handshake: Handshake, logger: logging.Logger) -> bool:
    """Whether ``auth`` (None: anyone) accepts ``handshake``; one that raises refuses (logged)."""
    if auth is None:
        return True
    try:
        ok = auth.authenticate(handshake)
        if inspect.isawaitable(ok):
            ok = await ok
    except Exception:
        logger.exception("authenticator failed for device %s", quoted(repr(handshake.device_id)))
        return False
    return bool(ok)


class TokenRejected(ValueError):
    """Why :meth:`HmacAuth.verify` refused a token (the message is meant for the operator)."""


def bearer_token(authorization: Optional[str]) -> Optional[str]:
    """The token of an ``Authorization: Bearer <token>`` header value (case-insensitive scheme)."""
    if not authorization:
        return None
    parts = authorization.strip().split(None, 1)
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1].strip()
    return None


def hello_handshake(device_id: str, hello: Mapping[str, Any], remote: str) -> Handshake:
    """The :class:`Handshake` of a device whose credentials come in its hello (MQTT):
    ``token`` (or ``authorization: "Bearer ..."``), ``client_id`` and ``version``."""
    token = hello.get("token")
    if not isinstance(token, str):
        auth_field = hello.get("authorization")
        token = bearer_token(auth_field) if isinstance(auth_field, str) else None
    version = hello.get("version")
    client_id = hello.get("client_id")
    return Handshake(
        device_id=device_id,
        client_id=client_id if isinstance(client_id, str) else None,
        token=token,
        protocol_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        remote=remote,
    )


def _same(a: str, b: str) -> bool:
    # surrogatepass: a presented token with a lone surrogate compares unequal, it does not raise.
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


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


def _signed_input(kind: str, device_id: str, expiry: str) -> bytes:
    """The bytes a version-1 token signs: domain, kind, length-prefixed id, expiry."""
    dev = device_id.encode("utf-8", "surrogatepass")  # any str signs; lone surrogates do not raise
    return b"\0".join((_DOMAIN, kind.encode("ascii"), b"%d:%s" % (len(dev), dev), expiry.encode("ascii")))


class HmacAuth:
    """Tokens derived from a shared secret (see the module docstring for the format).

    ``previous_secrets`` are still accepted (never used to mint): rotate by minting with the
    new secret while devices still hold tokens of the old one, then drop it.
    ``allow_permanent=False`` accepts expiring tokens only. ``clock`` returns the current
    Unix time (tests pass a fixed one).
    """

    def __init__(
        self,
        secret: Union[str, bytes],
        *,
        previous_secrets: Sequence[Union[str, bytes]] = (),
        allow_permanent: bool = True,
        clock: Callable[[], float] = time.time,
        allow_static: Optional[bool] = None,
    ) -> None:
        def as_bytes(s: Union[str, bytes]) -> bytes:
            return s.encode("utf-8") if isinstance(s, str) else bytes(s)

        self.secret = as_bytes(secret)
        self.previous_secrets = [as_bytes(s) for s in previous_secrets]
        if not self.secret or not all(self.previous_secrets):
            raise ValueError("HmacAuth: a secret is empty; pass at least 32 random bytes")
        # allow_static is the pre-version-1 name of allow_permanent, kept for callers.
        self.allow_permanent = allow_permanent if allow_static is None else allow_static
        self.clock = clock
        # Refusals are a peer's choice: a few lines per interval, its device id clipped.
        self._refusal_log = LogThrottle(log)

    def _sig(self, kind: str, device_id: str, expiry: str, secret: Optional[bytes] = None) -> str:
        message = _signed_input(kind, device_id, expiry)
        return hmac.new(self.secret if secret is None else secret, message, hashlib.sha256).hexdigest()

    def token_for(self, device_id: str, expiry: Optional[int] = None) -> str:
        """The permanent token of ``device_id``, or an expiring one valid until ``expiry``."""
        if expiry is None:
            return f"{TOKEN_PREFIX}.{_PERMANENT}.{self._sig(_PERMANENT, device_id, '')}"
        when_int = int(expiry)
        if not 0 <= when_int <= MAX_EXPIRY:
            shown = repr(expiry) if when_int.bit_length() <= 64 else f"a {when_int.bit_length()}-bit number"
            raise ValueError(
                f"HmacAuth.token_for: expiry must be a Unix time from 0 to {MAX_EXPIRY}, got {shown}"
            )
        when = str(when_int)
        return f"{TOKEN_PREFIX}.{_EXPIRING}.{when}.{self._sig(_EXPIRING, device_id, when)}"

    def verify(self, device_id: str, token: Optional[str]) -> None:
        """Return if ``token`` is valid for ``device_id`` now, else raise :class:`TokenRejected`."""
        if not token:
            raise TokenRejected("no token")
        if not token.isascii():
            raise TokenRejected("the token has non-ASCII characters (HmacAuth tokens are ASCII)")
        parts = token.split(".")
        if parts[0] != TOKEN_PREFIX:
            if _HEX64.fullmatch(token) or _OLD_EXPIRING.fullmatch(token):
                raise TokenRejected(
                    "the token is in the old (pre-version-1) HmacAuth format, which is no longer "
                    f"accepted because its kinds could be confused; {_REISSUE}"
                )
            raise TokenRejected(
                f"not an HmacAuth token (expected '{TOKEN_PREFIX}.p.<sig>' or "
                f"'{TOKEN_PREFIX}.e.<expiry>.<sig>')"
            )
        if len(parts) == 3 and parts[1] == _PERMANENT:
            if not self.allow_permanent:
                raise TokenRejected("permanent tokens are disabled here; use an expiring token")
            expiry, sig = "", parts[2]
        elif (
            len(parts) == 4
            and parts[1] == _EXPIRING
            and parts[2].isdigit()
            and len(parts[2]) <= len(str(MAX_EXPIRY))
        ):
            expiry, sig = parts[2], parts[3]
        else:
            raise TokenRejected(
                f"malformed {TOKEN_PREFIX} token (expected '{TOKEN_PREFIX}.p.<sig>' or "
                f"'{TOKEN_PREFIX}.e.<expiry>.<sig>')"
            )
        # Check the signature before the expiry so the answer to a forged token never
        # depends on the clock, and compare in constant time.
        # Every secret is tried (no early exit), so timing does not tell which one matched.
        secrets = (self.secret, *self.previous_secrets)
        matches = [_same(sig, self._sig(parts[1], device_id, expiry, s)) for s in secrets]
        if not any(matches):
            raise TokenRejected("bad signature (another device's token, or another secret)")
        if expiry and int(expiry) < self.clock():
            raise TokenRejected(f"the token expired at Unix time {expiry}; {_REISSUE}")

    def authenticate(self, handshake: Handshake) -> bool:
        try:
            self.verify(handshake.device_id, handshake.token)
        except TokenRejected as exc:
            self._refusal_log.warning(
                "HmacAuth refused device %s from %s: %s",
                quoted(repr(handshake.device_id)),
                handshake.remote,
                exc,
            )
            return False
        return True


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Mint an HmacAuth token; the secret comes from a file or the environment, not the
    command line."""
    from mcpgen.secret_options import SecretError, SecretOption, resolve_secret

    parser = argparse.ArgumentParser(
        prog="python -m mcpgen.runtime.auth",
        description="Print an HmacAuth token for a device. The secret is read from --secret-file, "
        "else from the environment variable named by --secret-env (default MCPGEN_HMAC_SECRET).",
    )
    parser.add_argument("device_id")
    parser.add_argument("--expires-in", type=int, metavar="SECONDS", help="mint an expiring token")
    parser.add_argument("--secret-file", metavar="FILE", help="the file of the shared secret (chmod 600)")
    parser.add_argument("--secret-env", default="MCPGEN_HMAC_SECRET", metavar="VAR")
    args = parser.parse_args(argv)
    args.secret = None  # never on the command line
    try:
        secret = resolve_secret(args, SecretOption("--secret", args.secret_env, "the shared HMAC secret"))
    except SecretError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not secret:
        print(
            f"error: give --secret-file FILE or set the shared secret in the environment variable "
            f"{args.secret_env}",
            file=sys.stderr,
        )
        return 2
    expiry = None if args.expires_in is None else int(time.time()) + args.expires_in
    print(HmacAuth(secret).token_for(args.device_id, expiry))
    return 0


__all__ = [
    "Handshake",
    "Authenticator",
    "TokenAuth",
    "HmacAuth",
    "TokenRejected",
    "authenticate",
    "bearer_token",
    "hello_handshake",
]
