"""HmacAuth token format (version 1): kinds and devices cannot be confused (issue 18)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import subprocess
import sys

import pytest

from mcpgen.runtime import Handshake, HmacAuth
from mcpgen.runtime.auth import TokenRejected

NOW = 1_900_000_000
SECRET = "s3cret"


def auth(**kw: object) -> HmacAuth:
    return HmacAuth(SECRET, clock=lambda: NOW, **kw)  # type: ignore[arg-type]


def accepts(a: HmacAuth, device_id: str, token: str) -> bool:
    return a.authenticate(Handshake(device_id=device_id, client_id=None, token=token, protocol_version=1))


def sig_of(token: str) -> str:
    """The signature part an attacker can cut out of any token they hold."""
    return token.rsplit(".", 1)[-1]


def test_permanent_token_of_dotted_id_is_not_a_token_of_the_prefix_device() -> None:
    # Before the fix: the permanent token of 'X.9999999999' was accepted for device 'X' as
    # 'X.9999999999.<that token>', never expiring.
    a = auth()
    sig = sig_of(a.token_for("X.9999999999"))
    for forged in (f"X.9999999999.{sig}", f"mcpgen1.e.9999999999.{sig}", f"mcpgen1.p.{sig}", sig):
        assert not accepts(a, "X", forged), forged


def test_expired_token_is_not_the_permanent_token_of_another_device() -> None:
    # Before the fix: the signature of X's token expiring at E was the permanent token of 'X.E'.
    a = auth()
    expired = a.token_for("X", NOW - 10)
    assert not accepts(a, "X", expired)
    sig = sig_of(expired)
    for forged in (sig, f"mcpgen1.p.{sig}"):
        assert not accepts(a, f"X.{NOW - 10}", forged), forged
    # nor can its expiry be moved: the expiry is signed
    assert not accepts(a, "X", f"mcpgen1.e.{NOW + 10**6}.{sig}")


def test_signatures_are_bound_to_kind_device_and_expiry() -> None:
    a = auth()
    sigs = {
        sig_of(a.token_for("X")),
        sig_of(a.token_for("X", NOW + 5)),
        sig_of(a.token_for("X.1")),
        sig_of(a.token_for("X", 1)),
        sig_of(a.token_for("1:X")),
        sig_of(a.token_for("X\0e")),
    }
    assert len(sigs) == 6
    assert accepts(a, "X", a.token_for("X"))
    assert accepts(a, "X", a.token_for("X", NOW))  # valid through its expiry second
    assert not accepts(a, "X", a.token_for("X", NOW - 1))
    assert not accepts(a, "Y", a.token_for("X"))
    assert not accepts(a, "X", HmacAuth("other").token_for("X"))
    assert not accepts(a, "X", a.token_for("X").upper())
    assert not accepts(auth(allow_permanent=False), "X", a.token_for("X"))
    assert accepts(auth(allow_permanent=False), "X", a.token_for("X", NOW + 1))


@pytest.mark.parametrize(
    "token",
    [
        "",
        "mcpgen1",
        "mcpgen1.p",
        "mcpgen1.x." + "0" * 64,
        "mcpgen1.e." + "0" * 64,
        "mcpgen1.e.-5." + "0" * 64,
        "mcpgen1.e.١٢٣." + "0" * 64,  # non-ASCII digits
        "mcpgen1.p.a.b",
        "mcpgen2.p." + "0" * 64,
    ],
)
def test_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(TokenRejected):
        auth().verify("X", token)


def test_old_format_tokens_are_refused_with_a_reissue_hint(caplog: pytest.LogCaptureFixture) -> None:
    old_static = hmac.new(SECRET.encode(), b"X", hashlib.sha256).hexdigest()
    old_sig = hmac.new(SECRET.encode(), f"X.{NOW + 60}".encode(), hashlib.sha256).hexdigest()
    old_expiring = f"X.{NOW + 60}.{old_sig}"
    for token in (old_static, old_expiring):
        with pytest.raises(TokenRejected, match="old .*format.*re-issue it with HmacAuth"):
            auth().verify("X", token)
    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.auth"):
        assert not accepts(auth(), "X", old_static)
    assert "re-issue" in caplog.text and "'X'" in caplog.text


def test_expired_message_says_when_and_how_to_reissue() -> None:
    with pytest.raises(TokenRejected, match=f"expired at Unix time {NOW - 1}; re-issue"):
        auth().verify("X", auth().token_for("X", NOW - 1))


def test_empty_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="secret is empty"):
        HmacAuth("")
    with pytest.raises(ValueError, match="secret is empty"):
        HmacAuth("new", previous_secrets=[""])


def test_rotation_accepts_previous_secrets_but_mints_with_the_new_one() -> None:
    old = HmacAuth("old secret", clock=lambda: NOW)
    rotating = HmacAuth("new secret", previous_secrets=["old secret"], clock=lambda: NOW)
    assert accepts(rotating, "X", old.token_for("X"))
    assert accepts(rotating, "X", old.token_for("X", NOW + 60))
    assert rotating.token_for("X") == HmacAuth("new secret").token_for("X")
    assert not accepts(rotating, "Y", old.token_for("X"))
    assert not accepts(HmacAuth("new secret", clock=lambda: NOW), "X", old.token_for("X"))  # after rotation


def test_command_line_mints_tokens_the_authenticator_accepts() -> None:
    env = dict(os.environ, MCPGEN_HMAC_SECRET=SECRET)
    run = [sys.executable, "-m", "mcpgen.runtime.auth"]
    out = subprocess.run([*run, "dev-7"], env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == HmacAuth(SECRET).token_for("dev-7")
    out = subprocess.run(
        [*run, "dev-7", "--expires-in", "600"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out.startswith("mcpgen1.e.") and accepts(HmacAuth(SECRET), "dev-7", out)
    env.pop("MCPGEN_HMAC_SECRET")
    bad = subprocess.run([*run, "dev-7"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "MCPGEN_HMAC_SECRET" in bad.stderr


def test_hostile_tokens_and_expiries_get_typed_refusals() -> None:
    """A token with a lone surrogate is a TokenRejected (it raised UnicodeEncodeError), an
    expiry with thousands of digits too (ValueError from int()); minting with an expiry
    past MAX_EXPIRY is a ValueError naming the range (not int's digit-limit error)."""
    from mcpgen.runtime.auth import MAX_EXPIRY, Handshake, HmacAuth, TokenAuth, TokenRejected

    auth = HmacAuth("s" * 32)
    huge_expiry = "mcpgen1.e." + "9" * 5000 + "." + "0" * 64
    for token in ("mcpgen1.p.\ud800", "\ud800", "mcpgen1.e.1.\udcff", huge_expiry):
        with pytest.raises(TokenRejected):
            auth.verify("dev", token)
        assert auth.authenticate(Handshake("dev", None, token, None)) is False
    assert TokenAuth({"*": "good"}).authenticate(Handshake("dev", None, "go\ud800od", None)) is False
    with pytest.raises(ValueError, match="from 0 to"):
        auth.token_for("dev", expiry=10**5000)
    with pytest.raises(ValueError, match="from 0 to"):
        auth.token_for("dev", expiry=MAX_EXPIRY + 1)
    token = auth.token_for("dev", expiry=MAX_EXPIRY)
    auth.verify("dev", token)
    auth.verify("d\ud800", auth.token_for("d\ud800"))  # any str signs, as the docs say
