"""Progress from the real simulator (the lamp's slow fade) end to end: the runtime's
Device.call(on_progress=) over WebSocket (xiaozhi envelope) and stdio (bare JSON-RPC), and
the official MCP SDK client's progress callback through `codegen bridge`."""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import pytest
from e2e_testlib import Built, launch_ws
from mcp import Client
from test_bridge_simulator import bridge_params

from mcpgen.runtime import Gateway, TokenAuth, connect_process

FADE = {"r": 100, "g": 0, "b": 200, "seconds": 0}
Seen = list[tuple[float, Optional[float], Optional[str]]]


def recorder() -> tuple[Seen, Any]:
    seen: Seen = []

    def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        seen.append((progress, total, message))

    return seen, on_progress


def check(seen: Seen, rgb: str = "100,0,200") -> None:
    assert [p for p, _, _ in seen] == [float(i) for i in range(1, 11)]
    assert {t for _, t, _ in seen} == {10.0}
    assert seen[-1][2] == f"rgb {rgb}"


async def test_progress_over_websocket_in_the_xiaozhi_envelope(built_lamp: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_lamp.exe, f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/", token, "lamp-progress"):
            device = await gw.wait_for_device(timeout=10)
            assert device.session_id  # the enveloped path
            seen, on_progress = recorder()
            assert await device.call("self.light.fade", FADE, on_progress=on_progress) is True
            check(seen)
            # a token the caller chose, and a call without one: nothing reported
            seen2, on_progress2 = recorder()
            await device.call("self.light.fade", FADE, progress_token=77, on_progress=on_progress2)
            check(seen2)
            notes: list[str] = []
            device.on_notification(lambda method, _params: notes.append(method))
            assert await device.call("self.light.fade", FADE) is True
            assert "notifications/progress" not in notes


async def test_progress_over_stdio_and_through_the_typed_bindings(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    try:
        seen, on_progress = recorder()
        result = await device.call_raw("self.light.fade", FADE, on_progress=on_progress)
        assert result["isError"] is False
        check(seen)

        assert device.tool("self.light.fade").reports_progress is True
        assert device.tool("self.light.set_rgb").reports_progress is False
        lamp = built_lamp.bindings(device, policy="strict")
        typed: Seen = []

        async def on_progress_async(progress: float, total: Optional[float], message: Optional[str]) -> None:
            typed.append((progress, total, message))

        assert await lamp.light.fade(r=100, g=0, b=200, seconds=0, on_progress=on_progress_async) is True
        for _ in range(20):  # async callbacks run as tasks: let them finish
            if len(typed) == 10:
                break
            await asyncio.sleep(0)
        check(typed)
        assert await lamp.light.fade(r=1, g=1, b=1, seconds=0) is True  # no on_progress: plain call
        fan = built_lamp.module.DeskLamp.fanout([device])
        with pytest.raises(TypeError, match="on_progress needs a runtime.Device"):
            await fan.light.fade(r=1, g=1, b=1, on_progress=on_progress)
    finally:
        await device.close()


async def test_sdk_client_progress_callback_through_the_bridge(built_lamp: Built) -> None:
    seen: Seen = []

    async def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        seen.append((progress, total, message))

    async with Client(bridge_params(built_lamp), mode="legacy", read_timeout_seconds=30) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert (tools["self__light__fade"].meta or {}).get("mcpgen/progress") is True
        assert "mcpgen/progress" not in (tools["self__light__set_rgb"].meta or {})
        result = await client.call_tool(
            "self__light__fade", {"r": 1, "g": 2, "b": 3, "seconds": 0}, progress_callback=on_progress
        )
        assert not result.is_error and result.content[0].text == "true"
        check(seen, "1,2,3")  # relayed under the client's own token, all before the answer
