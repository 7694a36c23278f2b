"""The bridge checks arguments with the runtime's validator, patterns on RE2 (issue 40).

It used ``jsonschema`` per call, whose ``pattern`` runs on Python's backtracking ``re``: a
device reporting ``^(\\w+\\s?)*$`` and a client sending a 46-character sentence blocked the
bridge's loop (every device, every client) for about 14 s. Now the call is a tool error at
once while a ticker on the loop keeps ticking, and a tool whose pattern RE2 cannot run is
not served: it is left out of ``tools/list`` (logged) and a call by its name says why.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from bridge_fakes import FakeDevice, FakeTool, default_tools
from looplag import EVIL_PATTERN, MAX_LAG, SENTENCE, Ticker
from sdk_harness import RawClient

from mcpgen.runtime.bridge import Bridge

SAY = FakeTool(
    "self.hostile.say",
    "Says a sentence (write it as words, each followed by one space).",
    {
        "type": "object",
        "properties": {"text": {"type": "string", "pattern": EVIL_PATTERN}},
        "required": ["text"],
    },
)
ECHO = FakeTool(
    "self.hostile.echo",
    "A lookahead: RE2 has none.",
    {"type": "object", "properties": {"word": {"type": "string", "pattern": "^(?=a)a+$"}}},
)


class HostileDevice(FakeDevice):
    async def call_raw(self, name: str, arguments: dict[str, Any] | None, **kw: Any) -> dict[str, Any]:
        if name.startswith("self.hostile."):
            self.calls.append((name, arguments or {}))
            return {"content": [{"type": "text", "text": "said"}]}
        return await super().call_raw(name, arguments, **kw)


def call(name: str, arguments: dict[str, Any], id: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


async def test_device_pattern_redos_is_a_tool_error_at_once_and_the_loop_keeps_ticking() -> None:
    device = HostileDevice("one", tools=[*default_tools(), SAY])
    bridge = Bridge()
    bridge.add_device(device)
    calls = 20
    async with RawClient(bridge) as client:
        async with Ticker() as ticker:
            started = time.perf_counter()
            for done in range(1, calls + 1):
                reply = await client.request(call("self__hostile__say", {"text": SENTENCE}, id=10 + done))
                if time.perf_counter() - started > MAX_LAG:
                    break  # stalled (jsonschema's `re` took ~14 s a call): the ticker shows it
            ms = (time.perf_counter() - started) * 1000 / done
        good = await client.request(call("self__hostile__say", {"text": "hello world "}, id=99))
    print(f"\nbridge tools/call, {EVIL_PATTERN}, a 46-character sentence: {ms:.3f} ms a call (with the SDK)")
    assert ticker.max_gap < MAX_LAG, f"the loop stalled {ticker.max_gap * 1000:.0f} ms"
    result = reply["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is True and "invalid arguments for self.hostile.say" in text, text
    assert "text: must match" in text
    assert good["result"].get("isError") is not True
    assert device.calls == [("self.hostile.say", {"text": "hello world "})]  # the refused ones never left


async def test_bridge_validates_like_the_runtime() -> None:
    """The same rules as Device.call and the console: types, ranges, unknown arguments."""
    bridge = Bridge()
    device = HostileDevice("one")
    bridge.add_device(device)
    async with RawClient(bridge) as client:
        for args, expected in [
            ({"volume": 101}, "volume: must be <= 100, got 101"),
            ({"volume": "loud"}, "volume: must be an integer, got string"),
            ({}, "volume: is required"),
            ({"volume": 5, "extra": 1}, "extra: unknown argument"),
        ]:
            reply = await client.request(call("self__audio_speaker__set_volume", args))
            text = reply["result"]["content"][0]["text"]
            assert reply["result"]["isError"] is True and expected in text, (args, text)
        ok = await client.request(call("self__audio_speaker__set_volume", {"volume": 7}))
    assert ok["result"].get("isError") is not True and device.volume == 7


async def test_unsupported_pattern_tool_is_not_served_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    device = HostileDevice("one", tools=[*default_tools(), SAY, ECHO])
    bridge = Bridge()
    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.bridge"):
        bridge.add_device(device)
    assert "self__hostile__echo" not in bridge.tool_names()
    served = bridge.tool_names()
    assert "self__hostile__say" in served and "self__audio_speaker__set_volume" in served
    logged = [r.getMessage() for r in caplog.records if "self.hostile.echo" in r.getMessage()]
    assert logged and "not served" in logged[0] and "RE2 cannot compile it" in logged[0], logged
    async with RawClient(bridge) as client:
        listed = await client.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        names = [t["name"] for t in listed["result"]["tools"]]
        assert "self__hostile__echo" not in names and "self__hostile__say" in names
        reply = await client.request(call("self__hostile__echo", {"word": "aa"}))
        result = reply["result"]
        assert result["isError"] is True and "is not served" in result["content"][0]["text"]
        assert "RE2 cannot compile it" in result["content"][0]["text"]
        ok = await client.request(call("self__audio_speaker__set_volume", {"volume": 9}))
        assert ok["result"].get("isError") is not True
    assert [c for c in device.calls if c[0] == "self.hostile.echo"] == []


async def test_without_validation_nothing_is_refused() -> None:
    """``validate_arguments=False`` runs no pattern, so it serves every tool as reported."""
    device = HostileDevice("one", tools=[*default_tools(), ECHO])
    bridge = Bridge(validate_arguments=False)
    bridge.add_device(device)
    assert "self__hostile__echo" in bridge.tool_names()
