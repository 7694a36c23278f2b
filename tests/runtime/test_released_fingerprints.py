"""The session check with several accepted fingerprints (every released version of a spec):
a device on any of them is in spec mode; another one follows the policy."""

from __future__ import annotations

import logging

import pytest
from runtime_fakes import FAKE_STDIO, FakeCore

from mcpgen.runtime import connect_process
from mcpgen.runtime.errors import SpecMismatch


async def test_a_released_fingerprint_is_spec_mode_under_compatible_and_strict() -> None:
    fp = FakeCore().spec.fingerprint
    releases = {"00000000000000aa": "0.9.0", fp: "1.0.0"}
    for policy in ("compatible", "strict"):
        device = await connect_process(
            FAKE_STDIO,
            fingerprint=releases,
            policy=policy,  # type: ignore[arg-type]
            stderr="devnull",
        )
        try:
            assert device.dynamic is False and device.expected_fingerprint == fp
        finally:
            await device.close()


async def test_an_unreleased_fingerprint_follows_the_policy(caplog: pytest.LogCaptureFixture) -> None:
    releases = ("00000000000000aa", "00000000000000bb")
    with pytest.raises(SpecMismatch) as err:
        await connect_process(FAKE_STDIO, fingerprint=releases, policy="strict", stderr="devnull")
    assert err.value.expected == "00000000000000aa, 00000000000000bb"
    with caplog.at_level(logging.WARNING, "mcpgen.runtime.session.device"):
        device = await connect_process(
            FAKE_STDIO, fingerprint=releases, policy="compatible", stderr="devnull"
        )
    try:
        assert device.dynamic is True and "using dynamic mode" in caplog.text
        assert device.expected_fingerprint == "00000000000000bb"  # the newest (last) release
    finally:
        await device.close()


async def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="'compatible', 'strict', 'warn', 'off'"):
        await connect_process(FAKE_STDIO, policy="lenient", stderr="devnull")  # type: ignore[arg-type]
