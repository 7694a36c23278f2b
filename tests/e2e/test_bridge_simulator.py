"""The official MCP SDK client -> `codegen bridge` (stdio) -> the real C++ simulator."""

from __future__ import annotations

import json
import os
import shlex
import sys

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
