"""Resources end to end (issue 30): the desk lamp simulator's resources read through the
typed bindings (compiled or pure) and through the runtime's dynamic mode."""

from __future__ import annotations

import asyncio
import json

import pytest
from e2e_testlib import Built

from mcpgen.runtime import connect_process
from mcpgen.runtime.errors import RpcError, ValidationError
from mcpgen.runtime.session.resources import expand


async def test_typed_resource_reads(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    lamp = built_lamp.bindings(device, policy="strict")
    try:
        await lamp.light.set_rgb(r=9, g=8, b=7)
        status = await lamp.resources.status.read()
        assert isinstance(status, str) and json.loads(status)["rgb"] == [9, 8, 7]
        icon = await lamp.resources.icon.read()
        assert isinstance(icon, bytes) and icon.startswith(b"\x89PNG")
        assert await lamp.resources.pattern.read(length=300) == bytes(i & 0xFF for i in range(300))
        assert await lamp.resources.effect.read(name="candle") == "candle: warm flicker"
        # Template variables are checked like tool arguments, before anything is sent.
        with pytest.raises(ValidationError):
            await lamp.resources.pattern.read(length=-1)
        with pytest.raises(ValidationError):
            await lamp.resources.effect.read(name="disco")  # type: ignore[arg-type]
    finally:
        await device.close()


async def test_updates_iterate_until_closed(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    lamp = built_lamp.bindings(device, policy="strict")
    try:
        updates = lamp.resources.status.updates()
        first = asyncio.ensure_future(updates.__anext__())
        for _ in range(100):  # until the subscription is in place
            await asyncio.sleep(0.01)
            await lamp.light.set_rgb(r=1, g=2, b=3)  # the lamp reports lamp://status changed
            if first.done():
                break
        assert await first == "lamp://status"
        await updates.aclose()
        assert [u async for u in updates] == []
        with pytest.raises(TypeError):
            lamp.resources.pattern.updates()
    finally:
        await device.close()


async def test_dynamic_mode_lists_and_reads(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    try:
        fixed = await device.list_resources()
        assert [r["uri"] for r in fixed] == ["lamp://status", "lamp://icon.png"]
        templates = await device.list_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["lamp://effects/{name}", "lamp://pattern/{length}"]
        assert json.loads(await device.read_resource("lamp://status"))["on"] is False
        assert (await device.read_resource("lamp://pattern/5")) == b"\x00\x01\x02\x03\x04"
        with pytest.raises(RpcError, match="Resource not found") as missing:
            await device.read_resource("lamp://nothing")
        assert missing.value.code == -32002
        with pytest.raises(RpcError, match="must be an integer") as bad:
            await device.read_resource("lamp://pattern/x")
        assert bad.value.code == -32602
    finally:
        await device.close()


def test_level_1_expansion_percent_encodes_all_but_unreserved() -> None:
    assert expand("a://x/{v}", {"v": "a b/c~é"}) == "a://x/a%20b%2Fc~%C3%A9"
    assert expand("a://{n}-{b}", {"n": -3, "b": True}) == "a://-3-true"
    assert expand("a://{f}", {"f": 0.5}) == "a://0.5"
