"""The whole system: C++ simulator <-WebSocket-> gateway -> generated typed bindings."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from e2e_testlib import Built, launch_ws

from mcpgen.codegen.spec.examples import example_call
from mcpgen.runtime import Gateway, TokenAuth, connect_process
from mcpgen.runtime.errors import (
    DeviceDisconnected,
    DeviceTimeout,
    RpcError,
    SpecMismatch,
    ToolError,
    ValidationError,
)


def url(gw: Gateway) -> str:
    return f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"


def method_of(bound: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        bound = getattr(bound, part)
    return bound


async def test_session_setup_reports_spec_identity(built_default: Built, token: str) -> None:
    async with Gateway(
        port=0, auth=TokenAuth({"*": token}), fingerprint=built_default.spec.fingerprint, policy="strict"
    ) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "dev-1"):
            device = await gw.wait_for_device(timeout=10)
            assert device.device_id == "dev-1"
            assert device.server_info["name"] == "xiaozhi-sim"
            assert device.server_info["version"] == "1.0.0"
            assert device.protocol_version == "2024-11-05"
            assert device.fingerprint == built_default.spec.fingerprint
            assert device.dynamic is False
            names = [t.name for t in device.tools]
            assert names == [t.name for t in built_default.spec.tools], "user-only tools listed too, in order"
            assert [t.name for t in device.tools if t.user_only] == ["self.reboot"]


async def test_every_tool_through_typed_bindings(built_default: Built, built_lamp: Built, token: str) -> None:
    for built in (built_default, built_lamp):
        async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
            async with launch_ws(built.exe, url(gw), token, f"dev-{built.spec.device.name}"):
                bound = built.bindings(await gw.wait_for_device(timeout=10))
                for tool in built.spec.tools:
                    args, human = example_call(tool, built.spec.types)
                    if human:  # values asked of the person go only as human= (spec from_human)
                        args["human"] = human
                    result = await method_of(bound, tool.path)(**args)
                    expected_type = {
                        "boolean": bool,
                        "integer": int,
                        "number": float,
                        "string": str,
                        "object": dict,
                        "none": type(None),
                    }.get(tool.returns.kind)
                    if expected_type is not None:
                        assert isinstance(result, expected_type), (tool.name, result)


async def test_state_is_observable_across_calls(built_default: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "dev-state"):
            sim = built_default.bindings(await gw.wait_for_device(timeout=10))
            assert await sim.audio_speaker.set_volume(volume=37) is True
            status = await sim.get_device_status()
            assert status["audio_speaker"]["volume"] == 37
            first = await sim.counter.add(amount=5)
            assert await sim.counter.add(amount=-2) == first - 2


async def test_lamp_bindings_with_typed_results(built_lamp: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_lamp.exe, url(gw), token, "lamp-1"):
            lamp = built_lamp.bindings(await gw.wait_for_device(timeout=10))
            assert await lamp.light.set_rgb(r=255, g=0, b=16) is True
            assert await lamp.light.set_power(on=True) is True
            state = await lamp.light.get_state()
            assert state["on"] is True and state["rgb"] == [255, 0, 16]


async def test_pagination_collects_every_page(built_small_pages: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_small_pages.exe, url(gw), token, "paged"):
            device = await gw.wait_for_device(timeout=10)
            names = [t.name for t in device.tools]
            assert names == [t.name for t in built_small_pages.spec.tools]
            assert len(names) == len(set(names))


async def test_validation_local_and_on_device(built_default: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "dev-val"):
            device = await gw.wait_for_device(timeout=10)
            sim = built_default.bindings(device)
            with pytest.raises(ValidationError) as local:
                await sim.audio_speaker.set_volume(volume=150)
            assert local.value.argument == "volume"
            with pytest.raises(ValidationError):
                await sim.screen.set_theme(theme="blue")
            with pytest.raises(ToolError) as remote:
                await device.call("self.audio_speaker.set_volume", {"volume": 150}, validate=False)
            assert "volume" in str(remote.value)
            with pytest.raises(ToolError):
                await device.call("self.screen.set_theme", {"theme": "blue"}, validate=False)


async def test_unknown_tool_is_an_rpc_error(built_default: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "dev-unknown"):
            device = await gw.wait_for_device(timeout=10)
            with pytest.raises(RpcError) as err:
                await device.call("self.no_such_tool", {}, validate=False)
            assert err.value.code == -32601 and "self.no_such_tool" in str(err.value)


@pytest.mark.parametrize("policy", ["strict", "warn", "off"])
async def test_fingerprint_policies(built_default: Built, token: str, policy: str) -> None:
    async with Gateway(
        port=0, auth=TokenAuth({"*": token}), fingerprint="0123456789abcdef", policy=policy
    ) as gw:
        async with launch_ws(built_default.exe, url(gw), token, f"fp-{policy}", ("--max-reconnects", "0")):
            if policy == "strict":
                with pytest.raises((SpecMismatch, asyncio.TimeoutError, TimeoutError)):
                    await gw.wait_for_device(timeout=3)
                return
            device = await gw.wait_for_device(timeout=10)
            assert device.dynamic is (policy == "warn")
            # Dynamic mode still validates, from the schemas the device reported.
            with pytest.raises(ValidationError):
                await device.call("self.audio_speaker.set_volume", {"volume": 101})
            assert await device.call("self.audio_speaker.set_volume", {"volume": 10}) is True


async def test_matching_fingerprint_is_not_dynamic(built_default: Built, token: str) -> None:
    async with Gateway(
        port=0, auth=TokenAuth({"*": token}), fingerprint=built_default.spec.fingerprint, policy="strict"
    ) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "fp-ok"):
            device = await gw.wait_for_device(timeout=10)
            assert device.dynamic is False


async def test_authentication_accepts_and_rejects(built_default: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"good": token})) as gw:
        async with launch_ws(built_default.exe, url(gw), "wrong-token", "good", ("--max-reconnects", "1")):
            with pytest.raises((asyncio.TimeoutError, TimeoutError)):
                await gw.wait_for_device(timeout=2)
        async with launch_ws(built_default.exe, url(gw), token, "good"):
            device = await gw.wait_for_device(timeout=10)
            assert device.device_id == "good"


async def test_device_killed_mid_call_fails_fast(built_default: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token}), call_timeout=30) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "dev-kill") as sim:
            device = await gw.wait_for_device(timeout=10)
            sim.stop()
            call = asyncio.create_task(device.call("self.counter.add", {"amount": 1}))
            await asyncio.sleep(0.3)
            assert not call.done()
            started = time.monotonic()
            sim.kill()
            with pytest.raises(DeviceDisconnected):
                await asyncio.wait_for(call, 10)
            assert time.monotonic() - started < 5, "DeviceDisconnected must come well within the timeout"


async def test_device_that_never_answers_times_out(built_default: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_default.exe, url(gw), token, "dev-silent") as sim:
            device = await gw.wait_for_device(timeout=10)
            sim.stop()
            started = time.monotonic()
            with pytest.raises(DeviceTimeout):
                await device.call("self.counter.add", {"amount": 1}, timeout=0.5)
            assert time.monotonic() - started < 3


async def test_stdio_transport_gives_the_same_handle(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    try:
        lamp = built_lamp.bindings(device)
        assert await lamp.timer.set(minutes=15) == 15
        assert device.fingerprint == built_lamp.spec.fingerprint
    finally:
        await device.close()


async def test_hundred_devices_with_interleaved_calls(built_lamp: Built, token: str) -> None:
    count = 100
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        sims = []
        try:
            for i in range(count):
                ctx = launch_ws(built_lamp.exe, url(gw), token, f"lamp-{i:03d}")
                sims.append((ctx, await ctx.__aenter__()))
            devices = {}
            deadline = time.monotonic() + 60
            while len(devices) < count and time.monotonic() < deadline:
                d = await gw.wait_for_device(timeout=max(0.1, deadline - time.monotonic()))
                devices[d.device_id] = d
            assert len(devices) == count

            async def exercise(dev_id: str, idx: int) -> tuple[str, int]:
                lamp = built_lamp.bindings(devices[dev_id])
                minutes = await lamp.timer.set(minutes=idx)
                return dev_id, minutes

            calls = [
                exercise(dev_id, (i * 7 + r) % 700)
                for r in range(3)
                for i, dev_id in enumerate(sorted(devices))
            ]
            results = await asyncio.gather(*calls)
            expected = [
                (dev_id, (i * 7 + r) % 700) for r in range(3) for i, dev_id in enumerate(sorted(devices))
            ]
            assert results == expected, "every reply reached its own caller"
        finally:
            for ctx, _sim in sims:
                await ctx.__aexit__(None, None, None)
