"""LLM tool export and the reversible name mapping."""

from __future__ import annotations

import pytest
from runtime_fakes import FakeCore, FakeWsDevice

from mcpgen.runtime import Gateway, NameMap, to_anthropic_tools, to_openai_tools
from mcpgen.runtime.session.device import ToolInfo
from mcpgen.runtime.session.llm import LLM_NAME_RE, parse_tool_call

NAMES = [
    "self.audio_speaker.set_volume",
    "self.get_device_status",
    "self.a__b",  # literal double underscore: the plain scheme would not reverse
    "self.a.b",
    "tool with spaces/and:colons",
    "self." + "very_long_segment." * 6 + "end",
    "ünïcode.tool",
    "plain-name_1",
]


def test_name_map_round_trips_and_names_are_valid() -> None:
    nm = NameMap(NAMES)
    llm_names = [nm.to_llm(n) for n in NAMES]
    assert len(set(llm_names)) == len(NAMES)
    for mcp, llm in zip(NAMES, llm_names, strict=True):
        assert LLM_NAME_RE.match(llm), llm
        assert nm.to_mcp(llm) == mcp
    assert nm.to_llm("self.audio_speaker.set_volume") == "self__audio_speaker__set_volume"
    assert nm.to_llm("self.a.b") == "self__a__b"
    assert nm.to_llm("plain-name_1") == "plain-name_1"
    assert nm.to_llm("self.a__b") != "self__a__b"
    assert len(nm) == len(NAMES) and "self.a.b" in nm
    with pytest.raises(KeyError):
        nm.to_mcp("self__nope")


def test_name_map_is_deterministic_and_order_independent() -> None:
    a = NameMap(NAMES)
    b = NameMap(list(reversed(NAMES)))
    assert sorted(a.items()) == sorted(b.items())
    long_name = NAMES[5]
    hashed = a.to_llm(long_name)
    assert len(hashed) <= 64 and NameMap([long_name]).to_llm(long_name) == hashed


def tool_infos() -> list[ToolInfo]:
    return [ToolInfo.from_raw(t) for t in FakeCore(extra_tools=False).tools]


def test_openai_export() -> None:
    tools = to_openai_tools(tool_infos())
    names = [t["function"]["name"] for t in tools]
    assert "self__reboot" not in names, "user-only tools stay out by default"
    assert "self__audio_speaker__set_volume" in names
    vol = next(t for t in tools if t["function"]["name"] == "self__audio_speaker__set_volume")
    assert vol["type"] == "function"
    assert vol["function"]["description"] == "Set the volume of the audio speaker."
    params = vol["function"]["parameters"]
    assert params["type"] == "object" and params["required"] == ["volume"]
    assert params["properties"]["volume"]["maximum"] == 100
    everything = to_openai_tools(tool_infos(), include_user_only=True)
    assert "self__reboot" in [t["function"]["name"] for t in everything]
    assert next(t for t in tools if t["function"]["name"] == "self__get_device_status")["function"][
        "parameters"
    ] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,  # as the device refuses undeclared arguments
    }


def test_anthropic_export_and_call_round_trip() -> None:
    infos = tool_infos()
    tools = to_anthropic_tools(infos)
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)
    nm = NameMap(infos)
    name, args = parse_tool_call(nm, "self__display__show_text", '{"text": "hi"}')
    assert (name, args) == ("self.display.show_text", {"text": "hi"})
    assert parse_tool_call(nm, "self__reboot", None) == ("self.reboot", {})
    with pytest.raises(ValueError):
        parse_tool_call(nm, "self__reboot", "[1]")


def test_export_accepts_raw_tools_list_entries() -> None:
    raw = FakeCore(extra_tools=False).tools
    assert [t["name"] for t in to_anthropic_tools(raw)] == [
        t["name"] for t in to_anthropic_tools(tool_infos())
    ]


async def test_device_llm_tools(gateway: Gateway, ws_url: str, fake_devices) -> None:
    fake = FakeWsDevice(ws_url, "llm-dev")
    fake_devices.append(fake)
    await fake.start()
    device = await gateway.wait_for_device(timeout=5)
    openai = device.llm_tools("openai")
    anthropic = device.llm_tools("anthropic", include_user_only=True)
    assert len(anthropic) == len(device.tools) and len(openai) == len(device.tools) - 1
    nm = NameMap(device.tools)
    call_name, call_args = parse_tool_call(nm, openai[1]["function"]["name"], {"volume": 12})
    assert await device.call(call_name, call_args) is True
    with pytest.raises(ValueError):
        device.llm_tools("gemini")
