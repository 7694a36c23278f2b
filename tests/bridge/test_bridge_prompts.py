"""Prompts from the spec, served by the bridge (issue 41 item 4): ``prompts/list``,
``prompts/get`` (arguments checked and filled in, tools and resources named as the bridge
serves them) and ``completion/complete`` of prompt arguments, through the SDK handlers."""

from __future__ import annotations

from typing import Any

import pytest
from bridge_fakes import FakeDevice
from sdk_harness import RawClient

from mcpgen.codegen.spec.loader import load_spec_text
from mcpgen.codegen.spec.prompt_json import prompts_json
from mcpgen.runtime.bridge import Bridge

SPEC = """\
device: {name: lamp, version: "1.0.0"}
resources:
  status: {description: State., mime_type: application/json, uri: "lamp://status", content: text}
tools:
  - name: self.light.set_rgb
    description: Set the colour.
    params:
      r: {type: integer, min: 0, max: 255}
    returns: boolean
prompts:
  evening:
    title: Evening light
    description: Set the lamp up for the evening.
    arguments:
      level: {type: integer, min: 0, max: 100, default: 30, description: Brightness}
      mood: {type: string, enum: [warm, candle, wild]}
      dim: {type: boolean, default: false}
    messages:
      - role: user
        text: "{{mood}} at {{level}} % (dim {{dim}}) with {{tool:self.light.set_rgb}}; see {{resource:lamp://status}}."
      - role: assistant
        image: {data: iVBORw0KGgo=, mime_type: image/png}
      - role: user
        resource: {uri: "lamp://notes/{{mood}}", mime_type: text/plain, text: "{{mood}} stays as written"}
  hello:
    description: Say hello.
    messages:
      - role: user
        text: Hello.
"""


def rpc(method: str, params: dict[str, Any], id: int = 5) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def lamp_bridge() -> Bridge:
    bridge = Bridge(prompts=prompts_json(load_spec_text(SPEC)))
    bridge.add_device(FakeDevice("lamp-1"))
    return bridge


async def test_prompts_are_listed_with_their_arguments_in_words() -> None:
    async with RawClient(lamp_bridge()) as client:
        assert client.initialize_result is not None
        assert "prompts" in client.initialize_result["capabilities"]
        listed = (await client.request(rpc("prompts/list", {})))["result"]["prompts"]
        assert [p["name"] for p in listed] == ["evening", "hello"]
        assert listed[0]["title"] == "Evening light"
        assert listed[0]["arguments"] == [
            {"name": "dim", "description": "(boolean: default false)", "required": False},
            {"name": "level", "description": "Brightness (integer: 0 to 100; default 30)", "required": False},
            {"name": "mood", "description": "(string: one of warm, candle, wild)", "required": True},
        ]
        assert "arguments" not in listed[1]


async def test_get_fills_in_arguments_defaults_tools_and_resources() -> None:
    async with RawClient(lamp_bridge()) as client:
        got = await client.request(rpc("prompts/get", {"name": "evening", "arguments": {"mood": "warm"}}))
        messages = got["result"]["messages"]
        # one device: the tool has its LLM-safe name, the resource its URI as the bridge serves it
        assert messages[0] == {
            "role": "user",
            "content": {
                "type": "text",
                "text": (
                    "warm at 30 % (dim false) with self__light__set_rgb; see mcpgen://devices/lamp-1/lamp://status."
                ),
            },
        }
        assert messages[1]["content"] == {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        resource = messages[2]["content"]["resource"]
        assert resource["uri"] == "lamp://notes/warm"
        assert resource["text"] == "{{mood}} stays as written", "an embedded resource's text is not filled in"

        typed = await client.request(
            rpc(
                "prompts/get",
                {"name": "evening", "arguments": {"mood": "wild", "level": " 100 ", "dim": "true"}},
            )
        )
        assert typed["result"]["messages"][0]["content"]["text"].startswith("wild at 100 % (dim true)")


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"name": "evening"}, "prompt 'evening' needs argument 'mood' (string: one of warm, candle, wild)"),
        ({"name": "evening", "arguments": {"mood": "blue"}}, "'blue'"),
        ({"name": "evening", "arguments": {"mood": "warm", "level": "101"}}, "level"),
        ({"name": "evening", "arguments": {"mood": "warm", "level": "bright"}}, "level"),
        ({"name": "evening", "arguments": {"mood": "warm", "dim": "yes"}}, "dim"),
        (
            {"name": "evening", "arguments": {"mood": "warm", "colour": "red"}},
            "prompt 'evening' has no argument 'colour' (its arguments: dim, level, mood)",
        ),
        ({"name": "morning"}, "unknown prompt 'morning' (prompts: evening, hello)"),
    ],
)
async def test_bad_arguments_and_unknown_prompts_are_invalid_params(
    params: dict[str, Any], says: str
) -> None:
    async with RawClient(lamp_bridge()) as client:
        reply = await client.request(rpc("prompts/get", params))
        assert reply["error"]["code"] == -32602, reply
        assert says in reply["error"]["message"]


def complete(prompt: str, argument: str, value: str) -> dict[str, Any]:
    return rpc(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": prompt}, "argument": {"name": argument, "value": value}},
    )


async def test_prompt_arguments_complete_from_their_enums_and_ranges() -> None:
    async with RawClient(lamp_bridge()) as client:
        mood = (await client.request(complete("evening", "mood", "w")))["result"]["completion"]
        assert mood == {"values": ["warm", "wild"], "total": 2, "hasMore": False}
        level = (await client.request(complete("evening", "level", "10")))["result"]["completion"]
        assert level["values"] == ["10", "100"]
        dim = (await client.request(complete("evening", "dim", "")))["result"]["completion"]
        assert dim["values"] == ["false", "true"]
        wrong = await client.request(complete("evening", "colour", ""))
        assert wrong["error"]["code"] == -32602
        assert "has no argument 'colour'" in wrong["error"]["message"]


async def test_a_bridge_without_prompts_does_not_offer_them() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice("lamp-1"))
    async with RawClient(bridge) as client:
        assert client.initialize_result is not None
        assert "prompts" not in client.initialize_result["capabilities"]
        reply = await client.request(rpc("prompts/list", {}))
        assert reply["error"]["code"] == -32601
