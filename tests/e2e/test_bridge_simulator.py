"""The official MCP SDK client -> `codegen bridge` (stdio) -> the real C++ simulator."""

from __future__ import annotations

import json
import os
import shlex
import sys
from urllib.parse import unquote

import pytest
from e2e_testlib import REPO, Built
from mcp import Client, StdioServerParameters


def bridge_params(built: Built, *extra: str) -> StdioServerParameters:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    device_cmd = shlex.join([str(built.exe), "--stdio"])
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpgen", "bridge", "--transport", "stdio", "--device-cmd", device_cmd, *extra],
        env=env,
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_uses_the_simulator_through_the_bridge(built_default: Built, mode: str) -> None:
    async with Client(bridge_params(built_default), mode=mode, read_timeout_seconds=30) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        visible = [t for t in built_default.spec.tools if not t.user_only]
        assert len(tools) == len(visible), "user-only tools stay hidden"
        volume = tools["self__audio_speaker__set_volume"]
        assert volume.input_schema["properties"]["volume"]["maximum"] == 100

        ok = await client.call_tool("self__audio_speaker__set_volume", {"volume": 42})
        assert not ok.is_error and ok.content[0].text == "true"
        status = await client.call_tool("self__get_device_status", {})
        assert json.loads(status.content[0].text)["audio_speaker"]["volume"] == 42

        bad = await client.call_tool("self__audio_speaker__set_volume", {"volume": 420})
        assert bad.is_error and "volume" in bad.content[0].text
        failed = await client.call_tool("self__display__show_text", {"text": "fail"})
        assert failed.is_error, "a handler's Result::Error reaches the client as a tool error"


async def test_user_only_tools_can_be_enabled(built_default: Built) -> None:
    async with Client(
        bridge_params(built_default, "--user-tools"), mode="legacy", read_timeout_seconds=30
    ) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert "self__reboot" in names


async def test_sdk_client_lists_and_reads_device_resources_through_the_bridge(built_lamp: Built) -> None:
    """Issue 30: the lamp's resources, prefixed with its device id, next to its events resource."""
    import base64

    async with Client(bridge_params(built_lamp), mode="legacy", read_timeout_seconds=30) as client:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        [events] = [u for u in uris if u.endswith("/events")]
        device_part = events[len("mcpgen://devices/") : -len("/events")]
        prefix = f"mcpgen://devices/{device_part}/lamp:/"
        assert [u for u in uris if u != events] == [prefix + "/status", prefix + "/icon.png"]
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        assert templates == [
            "mcpgen://devices/{device}/events",
            prefix + "/effects/{name}",
            prefix + "/pattern/{length}",
        ]

        status = await client.read_resource(prefix + "/status")
        assert json.loads(status.contents[0].text)["effect"] == "none"
        icon = await client.read_resource(prefix + "/icon.png")
        blob = icon.contents[0].blob
        assert base64.b64decode(blob).startswith(b"\x89PNG")
        pattern = await client.read_resource(prefix + "/pattern/4")
        assert base64.b64decode(pattern.contents[0].blob) == b"\x00\x01\x02\x03"
        with pytest.raises(Exception, match="Resource not found"):
            await client.read_resource(prefix + "/nothing")


async def test_sdk_client_subscribes_to_a_device_resource_through_the_bridge(built_lamp: Built) -> None:
    """resources/subscribe of a device resource reaches the device; its
    notifications/resources/updated comes back with the bridge's URI."""
    import asyncio

    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: object) -> None:
        note = getattr(message, "root", message)
        if getattr(note, "method", None) == "notifications/resources/updated":
            await updated.put(str(note.params.uri))  # type: ignore[attr-defined]

    async with Client(
        bridge_params(built_lamp), mode="legacy", read_timeout_seconds=30, message_handler=on_message
    ) as client:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        [status] = [u for u in uris if u.endswith("lamp://status")]
        await client.subscribe_resource(status)
        await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2, "b": 3})
        assert await asyncio.wait_for(updated.get(), 10) == status
        await client.unsubscribe_resource(status)
        await client.call_tool("self__light__set_rgb", {"r": 3, "g": 2, "b": 1})
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(updated.get(), 0.5)
        with pytest.raises(Exception, match="does not support subscribe"):
            await client.subscribe_resource(status.replace("lamp://status", "lamp://icon.png"))


async def test_sdk_client_completes_template_variables_through_the_bridge(built_lamp: Built) -> None:
    """completion/complete: the lamp's enum from the spec given with --spec, the device ids
    for the bridge's events template, nothing for an open variable, -32602 for a prompt."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import PromptReference, ResourceTemplateReference

    params = bridge_params(built_lamp, "--spec", str(built_lamp.spec_path))
    async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
        assert client.server_capabilities.completions is not None
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        [events] = [u for u in uris if u.endswith("/events")]
        device_id = events[len("mcpgen://devices/") : -len("/events")]
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        [effects] = [t for t in templates if t.endswith("/effects/{name}")]
        [pattern] = [t for t in templates if t.endswith("/pattern/{length}")]

        got = await client.complete(ResourceTemplateReference(uri=effects), {"name": "name", "value": "b"})
        assert got.completion.values == ["breathe"] and got.completion.total == 1
        every = await client.complete(ResourceTemplateReference(uri=effects), {"name": "name", "value": ""})
        assert every.completion.values == ["none", "breathe", "rainbow", "candle"]
        assert every.completion.has_more is False
        wide = await client.complete(ResourceTemplateReference(uri=pattern), {"name": "length", "value": "1"})
        assert wide.completion.values == []  # 0..65536: too many to offer
        ids = await client.complete(
            ResourceTemplateReference(uri="mcpgen://devices/{device}/events"), {"name": "device", "value": ""}
        )
        assert ids.completion.values == [unquote(device_id)]
        with pytest.raises(MCPError, match=r"unknown prompt 'greet' \(prompts: evening_light\)") as caught:
            await client.complete(PromptReference(name="greet"), {"name": "who", "value": ""})
        assert caught.value.error.code == -32602
        # the spec's prompt (issue 41 item 4): its arguments complete, its text names the tools as served
        prompt = PromptReference(name="evening_light")
        effect = await client.complete(prompt, {"name": "effect", "value": "b"})
        assert effect.completion.values == ["breathe"]
        got = await client.get_prompt("evening_light", {"minutes": "15"})
        text = got.messages[0].content.text
        assert "self__light__set_rgb" in text and "the candle effect" in text and "after 15 minutes" in text

    async with Client(bridge_params(built_lamp), mode="legacy", read_timeout_seconds=30) as client:
        unknown = await client.complete(ResourceTemplateReference(uri=effects), {"name": "name", "value": ""})
        assert unknown.completion.values == [], "without --spec the bridge does not know the enum"
