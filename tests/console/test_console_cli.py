"""``codegen console`` as a user runs it: a simulator over stdio, another joining its gateway."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
from console_testlib import browser_page, generous_expect
from e2e_testlib import REPO, Built, launch_ws
from playwright.async_api import expect
from prometheus_client.parser import text_string_to_metric_families

generous_expect()


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), out.get("PYTHONPATH")]))
    out["PYTHONUNBUFFERED"] = "1"
    return out


@dataclass
class Running:
    url: str  # the printed console URL, with its ?token=
    base: str
    token: str
    gateway_port: int


@contextlib.asynccontextmanager
async def codegen_console(*argv: str) -> AsyncIterator[Running]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpgen", "console", "--port", "0", *argv,
        stderr=asyncio.subprocess.PIPE, env=env(),
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        url = gateway = None
        while url is None:
            line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
            assert line, "codegen console exited before serving"
            if found := re.search(r"^devices \(websocket\): ws://[\d.]+:(\d+)/", line):
                gateway = int(found.group(1))
            if found := re.search(r"^console: (http://\S+)", line):
                url = found.group(1)
        base, _, token = url.partition("?token=")
        yield Running(url, base, token, gateway or 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        await asyncio.wait_for(proc.wait(), 15)


async def until_devices(client: httpx.AsyncClient, count: int) -> list[dict[str, object]]:
    for _ in range(200):
        devices: list[dict[str, object]] = (await client.get("api/state")).json()["devices"]
        if len(devices) == count:
            return devices
        await asyncio.sleep(0.05)
    raise AssertionError(f"never {count} devices")


async def test_codegen_console_attaches_devices_like_the_bridge(
    built_default: Built, built_lamp: Built, tmp_path: Path
) -> None:
    sim = shlex.join([str(built_default.exe), "--stdio"])
    async with codegen_console(
        "--device-cmd", sim, "--gateway-port", "0", "--auth-token", "dev-secret", "--token", "t0k3n"
    ) as running:
        assert running.url.endswith("/?token=t0k3n") and running.url.startswith("http://127.0.0.1:")
        headers = {"Authorization": "Bearer t0k3n"}
        async with httpx.AsyncClient(base_url=running.base, headers=headers) as client:
            [speaker] = await until_devices(client, 1)
            assert speaker["transport"] == "stdio" and speaker["name"] == "xiaozhi-sim"
            assert speaker["compatibility"]["status"] == "unchecked"  # no spec given: dynamic mode
            device_id = str(speaker["id"])
            ok = await client.post(
                "api/call", json={"device": device_id, "tool": "self.counter.add", "arguments": {"amount": 5}}
            )
            assert ok.json()["outcome"] == "ok" and ok.json()["result"]["content"][0]["text"] == "5"

            ws = f"ws://127.0.0.1:{running.gateway_port}/xiaozhi/v1/"
            async with launch_ws(built_lamp.exe, ws, "dev-secret", "lamp-7"):
                devices = await until_devices(client, 2)
                lamp = next(d for d in devices if d["id"] == "lamp-7")
                assert lamp["transport"] == "websocket" and lamp["name"] == "desk-lamp"

                metrics = (await client.get("metrics")).text
                samples = {
                    (s.name, tuple(sorted(s.labels.items()))): s.value
                    for family in text_string_to_metric_families(metrics)
                    for s in family.samples
                }
                assert samples[("mcpgen_devices_connected", (("transport", "stdio"),))] == 1
                assert samples[("mcpgen_devices_connected", (("transport", "websocket"),))] == 1
                assert samples[("mcpgen_calls_total", (("outcome", "ok"), ("tool", "self.counter.add")))] == 1

                # The printed URL logs a browser in; the page lists both devices.
                async with browser_page(tmp_path / "profile") as page:
                    await page.goto(running.url)
                    assert page.url.split("#")[0] == running.base  # the fragment may name a device
                    await expect(page.locator("#devices tbody tr")).to_have_count(2)
                    await expect(page.locator('#devices tr[data-device-id="lamp-7"]')).to_contain_text(
                        "websocket"
                    )


async def test_codegen_console_usage_errors() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpgen", "console", stderr=asyncio.subprocess.PIPE, env=env()
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert b"no devices: give --device-cmd CMD" in err
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpgen", "console", "--device-cmd", "/nonexistent/sim --stdio",
        stderr=asyncio.subprocess.PIPE, env=env(),
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1 and b"could not start device '/nonexistent/sim --stdio'" in err


FAKE_DEVICE = shlex.join(
    [sys.executable, str(Path(__file__).resolve().parents[1] / "bridge" / "fake_device_proc.py")]
)


async def console_lines(*argv: str) -> tuple[list[str], list[str]]:
    """Run ``codegen console`` until it prints its URL: (its stderr lines, the device ids served)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpgen", "console", "--port", "0", "--token", "t", *argv,
        stderr=asyncio.subprocess.PIPE, env=env(),
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while not (lines and lines[-1].startswith("console: ")):
            line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
            assert line, "codegen console exited before serving:\n" + "".join(lines)
            lines.append(line)
        base = lines[-1].split()[1].partition("?")[0]
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": "Bearer t"}) as client:
            devices = (await client.get("api/state")).json()["devices"]
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        await asyncio.wait_for(proc.wait(), 15)
    return lines, sorted(str(d["id"]) for d in devices)


async def test_codegen_console_device_ids_are_those_of_the_bridge() -> None:
    # the same --device-cmd ids as codegen bridge: process:<reported name>, -2 for a second
    _, ids = await console_lines("--device-cmd", FAKE_DEVICE, "--device-cmd", FAKE_DEVICE)
    assert ids == ["process:fake-device", "process:fake-device-2"]
    lines, ids = await console_lines("--device-cmd", FAKE_DEVICE, "--device-id", "kitchen")
    assert ids == ["kitchen"]
    assert any("console: device kitchen (stdio) connected" in line for line in lines), lines  # INFO shown


async def test_codegen_console_warns_about_an_open_gateway() -> None:
    lines, _ = await console_lines("--gateway-port", "0", "--gateway-host", "0.0.0.0")
    warning = [line for line in lines if "without authentication" in line]
    assert len(warning) == 1 and "WARNING" in warning[0] and "the console will show and call" in warning[0]
    lines, _ = await console_lines("--gateway-port", "0", "--gateway-host", "0.0.0.0", "--auth-token", "s")
    assert not any("without authentication" in line for line in lines)


async def test_more_device_ids_than_commands_is_refused() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpgen", "console", "--device-cmd", FAKE_DEVICE, "--device-id", "a",
        "--device-id", "b", stderr=asyncio.subprocess.PIPE, env=env(),
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2 and b"2 --device-id for 1 --device-cmd" in err


async def test_codegen_console_checks_devices_against_the_given_spec(built_default: Built) -> None:
    """--spec: the page says "spec match" for a device of that spec (it said "no spec" always)."""
    sim = shlex.join([str(built_default.exe), "--stdio"])
    spec = str(REPO / "toolspec" / "default_device.yaml")
    async with codegen_console("--spec", spec, "--device-cmd", sim, "--token", "t") as running:
        async with httpx.AsyncClient(base_url=running.base, headers={"Authorization": "Bearer t"}) as client:
            [device] = await until_devices(client, 1)
            assert device["compatibility"]["status"] == "match", device["compatibility"]
            assert device["compatibility"]["label"] == "spec match"
    other = str(REPO / "toolspec" / "desk_lamp.yaml")
    async with codegen_console("--spec", other, "--device-cmd", sim, "--token", "t") as running:
        async with httpx.AsyncClient(base_url=running.base, headers={"Authorization": "Bearer t"}) as client:
            [device] = await until_devices(client, 1)
            assert device["compatibility"]["status"] == "mismatch", device["compatibility"]


async def test_codegen_console_takes_the_device_command_after_a_double_dash(built_default: Built) -> None:
    async with codegen_console("--token", "t", "--", str(built_default.exe), "--stdio") as running:
        async with httpx.AsyncClient(base_url=running.base, headers={"Authorization": "Bearer t"}) as client:
            [device] = await until_devices(client, 1)
            assert device["transport"] == "stdio" and device["name"] == "xiaozhi-sim"
