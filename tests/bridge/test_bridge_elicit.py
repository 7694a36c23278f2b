"""Values asked of the person (spec ``from_human`` / ``confirm``) through the bridge, with
the official SDK client's elicitation callback: accept, decline, cancel, no capability,
and the opt-out flag. A declined or cancelled call never reaches the device."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from bridge_fakes import FakeDevice, human_tools
from bridge_testlib import HERE, running_http, subprocess_env
from mcp import Client, StdioServerParameters, types

from mcpgen.runtime.bridge import Bridge


class Person:
    """The SDK client's elicitation callback: records each request, answers as told."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        if self.action == "accept":
            return types.ElicitResult(action="accept", content=self.content or {})
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]


async def served(allow: bool = False) -> AsyncIterator[tuple[str, FakeDevice]]:
    bridge = Bridge(allow_without_elicitation=allow)
    device = FakeDevice("sim-1", human_tools())
    bridge.add_device(device)
    async with running_http(bridge) as port:
        yield f"http://127.0.0.1:{port}/mcp", device


@pytest.fixture
async def lamp() -> AsyncIterator[tuple[str, FakeDevice]]:
    async for item in served():
        yield item


@pytest.fixture
async def lamp_opt_out() -> AsyncIterator[tuple[str, FakeDevice]]:
    async for item in served(allow=True):
        yield item


def text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_accept_merges_the_persons_value_and_the_model_never_sees_it(lamp) -> None:
    url, device = lamp
    person = Person("accept", {"b": 7})
    async with Client(url, mode="legacy", read_timeout_seconds=20, elicitation_callback=person) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        schema = tools["self__light__set_rgb"].input_schema
        assert set(schema["properties"]) == {"r", "g"} and schema["required"] == ["r", "g"]
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2})
    assert not result.is_error, text(result)
    assert text(result) == "rgb 1,2,7"
    assert device.calls == [("self.light.set_rgb", {"r": 1, "g": 2, "b": 7})]
    (asked,) = person.asked
    assert asked.message == "Change the lamp colour?"
    assert asked.requested_schema == {
        "type": "object",
        "properties": {"b": {"type": "integer", "minimum": 0, "maximum": 255, "title": "How much blue?"}},
        "required": ["b"],
    }


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declined_or_cancelled_never_reaches_the_device(lamp, action: str) -> None:
    url, device = lamp
    person = Person(action)
    async with Client(url, mode="legacy", read_timeout_seconds=20, elicitation_callback=person) as client:
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2})
        status = await client.call_tool("self__get_device_status", {})
    assert result.is_error and status.is_error
    word = "declined" if action == "decline" else "cancelled"
    assert text(result) == f"the person {word} self__light__set_rgb; the call was not made"
    assert person.asked[1].message == "Read the status?"
    assert person.asked[1].requested_schema == {"type": "object", "properties": {}}
    assert device.calls == []


async def test_a_value_the_person_gives_is_checked_like_any_argument(lamp) -> None:
    url, device = lamp
    async with Client(url, mode="legacy", elicitation_callback=Person("accept", {"b": 999})) as client:
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2})
    assert result.is_error and "b" in text(result) and "255" in text(result), text(result)
    assert device.calls == []


async def test_the_model_cannot_supply_a_value_asked_of_the_person(lamp) -> None:
    url, device = lamp
    person = Person("accept", {"b": 3})
    async with Client(url, mode="legacy", elicitation_callback=person) as client:
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2, "b": 3})
    assert result.is_error
    assert "b is asked of the person, not the model" in text(result)
    assert person.asked == [] and device.calls == []


async def test_a_client_without_the_capability_gets_an_error_naming_the_parameter(lamp) -> None:
    url, device = lamp
    async with Client(url, mode="legacy", read_timeout_seconds=20) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "b" not in listed["self__light__set_rgb"].input_schema["properties"]
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2})
        plain = await client.call_tool("self__audio_speaker__set_volume", {"volume": 5})
    assert result.is_error
    message = text(result)
    assert "a confirmation and the value of b from the person" in message
    assert "did not declare the elicitation capability" in message
    assert "--allow-without-elicitation" in message
    assert not plain.is_error  # tools that ask nothing are unaffected
    assert device.calls == [("self.audio_speaker.set_volume", {"volume": 5})]


async def test_opt_out_lets_a_client_without_the_capability_supply_the_values(lamp_opt_out) -> None:
    url, device = lamp_opt_out
    async with Client(url, mode="legacy", read_timeout_seconds=20) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["self__light__set_rgb"].input_schema["required"] == ["r", "g", "b"]
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2, "b": 3})
    assert not result.is_error, text(result)
    assert device.calls == [("self.light.set_rgb", {"r": 1, "g": 2, "b": 3})]


async def test_opt_out_still_asks_a_client_that_can_be_asked(lamp_opt_out) -> None:
    url, device = lamp_opt_out
    person = Person("decline")
    async with Client(url, mode="legacy", elicitation_callback=person) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "b" not in listed["self__light__set_rgb"].input_schema["properties"]
        result = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2})
    assert result.is_error and len(person.asked) == 1 and device.calls == []


async def test_over_stdio_accept_and_decline() -> None:
    """The same through the bridge as a stdio subprocess (how desktop assistants run it)."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "fake_bridge_main.py"), "--human"], env=subprocess_env()
    )
    person = Person("accept", {"b": 9})
    async with Client(params, mode="legacy", read_timeout_seconds=20, elicitation_callback=person) as client:
        accepted = await client.call_tool("self__light__set_rgb", {"r": 4, "g": 5})
        person.action = "decline"
        declined = await client.call_tool("self__light__set_rgb", {"r": 4, "g": 5})
    assert text(accepted) == "rgb 4,5,9" and not accepted.is_error
    assert declined.is_error and "declined" in text(declined)
    assert [p.message for p in person.asked] == ["Change the lamp colour?"] * 2
