"""The bridge's command line (issue 31 items 9 and 16): ``--device-cmd`` devices keep
their ids across restarts, and ``codegen bridge --transport http`` says where it serves,
which devices joined, and warns about an open gateway."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys

from bridge_testlib import HERE, subprocess_env
from mcp import Client, StdioServerParameters

DEVICE_CMD = shlex.join([sys.executable, str(HERE / "fake_device_proc.py")])


async def names_and_uris(*flags: str) -> tuple[list[str], list[str]]:
    argv = ["-m", "mcpgen.runtime.bridge", "--log-level", "WARNING", "--prefix-tools", *flags]
    params = StdioServerParameters(command=sys.executable, args=argv, env=subprocess_env())
    async with Client(params, mode="legacy", read_timeout_seconds=20) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
    return names, uris


async def test_device_cmd_ids_are_the_same_after_a_restart() -> None:
    # Before: the id was process:<pid>, so the exported names and the events URI changed
    # with every restart and a client's saved names broke.
    first = await names_and_uris("--device-cmd", DEVICE_CMD)
    second = await names_and_uris("--device-cmd", DEVICE_CMD)
    assert first == second
    names, uris = first
    assert uris == ["mcpgen://devices/process%3Afake-device/events"]  # the name the device reports
    assert "process_fake-device__self__audio_speaker__set_volume" in names


async def test_device_id_option_and_two_devices_of_one_firmware() -> None:
    _, uris = await names_and_uris("--device-cmd", DEVICE_CMD, "--device-cmd", DEVICE_CMD)
    assert uris == [  # the second of one name gets -2, in command-line order
        "mcpgen://devices/process%3Afake-device/events",
        "mcpgen://devices/process%3Afake-device-2/events",
    ]
    names, uris = await names_and_uris(
        "--device-cmd", DEVICE_CMD, "--device-id", "kitchen", "--device-cmd", DEVICE_CMD
    )
    assert uris == ["mcpgen://devices/kitchen/events", "mcpgen://devices/process%3Afake-device/events"]
    assert "kitchen__self__audio_speaker__set_volume" in names


async def test_more_device_ids_than_commands_is_refused() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpgen.runtime.bridge",
        "--device-cmd",
        DEVICE_CMD,
        "--device-id",
        "a",
        "--device-id",
        "b",
        stderr=asyncio.subprocess.PIPE,
        env=subprocess_env(),
    )
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2 and b"2 --device-id for 1 --device-cmd" in err


async def codegen_bridge_lines(*flags: str, until: str) -> list[str]:
    """Run ``codegen bridge --transport http`` (as ``python -m mcpgen``), read its stderr
    until a line matching ``until`` (or 20 s), then stop it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpgen",
        "bridge",
        "--transport",
        "http",
        "--port",
        "0",
        *flags,
        stderr=asyncio.subprocess.PIPE,
        env=subprocess_env(),
    )
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while True:
            line = (await asyncio.wait_for(proc.stderr.readline(), 20)).decode()
            if not line:
                break
            lines.append(line)
            if re.search(until, line):
                break
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
    return lines


async def test_codegen_bridge_http_prints_its_endpoint_and_devices() -> None:
    # Before: codegen's logging set-up (WARNING) won, so nothing was printed, not even the URL.
    lines = await codegen_bridge_lines("--device-cmd", DEVICE_CMD, until=r"MCP endpoint")
    text = "".join(lines)
    assert re.search(r"MCP endpoint: http://127\.0\.0\.1:\d+/mcp", text), text
    assert "serving device process:fake-device (4 tools)" in text, text


async def test_codegen_bridge_honours_log_level() -> None:
    lines = await codegen_bridge_lines(
        "--device-cmd", DEVICE_CMD, "--log-level", "DEBUG", until=r"MCP endpoint"
    )
    debug = [line for line in lines if " DEBUG " in line and "exported tools:" in line]
    assert debug and "self__audio_speaker__set_volume" in debug[0], "".join(lines)
    default = await codegen_bridge_lines("--device-cmd", DEVICE_CMD, until=r"MCP endpoint")
    assert not any("exported tools:" in line for line in default)


async def test_an_open_gateway_off_loopback_is_warned_about() -> None:
    open_gateway = ("--gateway-port", "0", "--gateway-host", "0.0.0.0")
    lines = await codegen_bridge_lines(*open_gateway, until="MCP endpoint")
    warning = [line for line in lines if "without authentication" in line]
    assert len(warning) == 1 and "WARNING" in warning[0] and "--auth-token" in warning[0]
    quiet = await codegen_bridge_lines(
        "--gateway-port", "0", "--gateway-host", "0.0.0.0", "--auth-token", "t", until="MCP endpoint"
    )
    assert not any("without authentication" in line for line in quiet)
    local = await codegen_bridge_lines("--gateway-port", "0", until="MCP endpoint")
    assert not any("without authentication" in line for line in local)
