"""SessionOptions: one object for the session settings of Gateway, MqttGateway and MqttFleet."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_fakes import FakeCore, FakeWsDevice

from mcpgen.runtime import Gateway, MqttFleet, MqttGateway, SessionOptions, TokenAuth


async def test_options_reach_the_sessions_and_keywords_replace_their_fields() -> None:
    core = FakeCore()
    shared = SessionOptions(fingerprint=core.fingerprint, policy="strict", call_timeout=7.0)
    async with Gateway(port=0, options=shared, call_timeout=2.5) as gw:
        assert gw.options.policy == "strict" and gw.options.call_timeout == 2.5
        assert shared.call_timeout == 7.0  # the shared object is not changed
        fake = FakeWsDevice(f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/", "opt-1", core=core)
        await fake.start()
        try:
            device = await gw.wait_for_device(timeout=5)
            assert device.call_timeout == 2.5  # the keyword won over the options' 7.0
            assert device.dynamic is False  # the options' fingerprint matched (policy strict)
            assert await device.call("self.counter.add", {"amount": 2}) == 2
        finally:
            await fake.close()


def test_the_old_keywords_still_build_the_options() -> None:
    auth = TokenAuth({"*": "t"})
    gw = Gateway(
        port=0,
        auth=auth,
        fingerprint="abc",
        policy="off",
        max_frame=4096,
        setup_timeout=3.0,
        vision={"url": "http://v", "token": "x"},
    )
    assert gw.options == SessionOptions(
        auth=auth,
        fingerprint="abc",
        policy="off",
        max_frame=4096,
        setup_timeout=3.0,
        vision={"url": "http://v", "token": "x"},
    )
    # the historical attributes read the options
    assert (gw.auth, gw.fingerprint, gw.policy, gw.max_frame, gw.setup_timeout, gw.call_timeout) == (
        auth,
        "abc",
        "off",
        4096,
        3.0,
        10.0,
    )
    assert gw.max_backlog >= 4096


def test_one_options_object_serves_every_front_door() -> None:
    opts = SessionOptions(policy="compatible", call_timeout=4.0, max_frame=1234)
    doors: list[Any] = [Gateway(options=opts), MqttGateway(options=opts), MqttFleet(options=opts)]
    for door in doors:
        assert door.options is opts  # nothing replaced: the same object
        assert (door.policy, door.call_timeout, door.max_frame) == ("compatible", 4.0, 1234)


def test_a_bad_policy_or_an_unknown_keyword_is_refused_with_the_accepted_ones() -> None:
    with pytest.raises(ValueError, match="policy must be one of"):
        SessionOptions(policy="lenient")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="policy must be one of"):
        MqttFleet(policy="lenient")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'timeout'.*call_timeout"):
        Gateway(timeout=3.0)  # type: ignore[call-arg]


def test_vision_is_copied() -> None:
    vision = {"url": "http://v", "token": "x"}
    opts = SessionOptions(vision=vision)
    vision["token"] = "changed"
    assert opts.vision == {"url": "http://v", "token": "x"}
