"""Resources from the QEMU images (once per target, issue 30): the lamp's text and binary
resources, a template, an unknown URI and a subscription update over the MCP UART, read by
the runtime's typed bindings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from qemu_uart_driver import LAMP_SPEC

from mcpgen import runtime
from mcpgen.codegen.run.run_qemu import boot
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.python import build_bindings, import_bindings
from mcpgen.runtime.errors import RpcError

pytestmark = pytest.mark.slow


async def test_resources_over_the_uart(lamp_sim_exe: Path, tmp_path: Path) -> None:
    from mcpgen.runtime import connect_serial

    spec = load_spec(LAMP_SPEC)
    pydir = build_bindings(LAMP_SPEC, tmp_path / "py", log=lambda _m: None, compile=runtime.COMPILED)
    mod = import_bindings(pydir, "desk_lamp_tools")
    with boot(lamp_sim_exe, workdir=tmp_path) as dev:
        device = await connect_serial(dev.url, fingerprint=spec.fingerprint, policy="strict")
        try:
            lamp = mod.DeskLamp(device, policy="strict")
            assert [r["uri"] for r in await device.list_resources()] == ["lamp://status", "lamp://icon.png"]
            assert json.loads(await lamp.resources.status.read())["on"] is False
            assert (await lamp.resources.icon.read())[:4] == b"\x89PNG"
            assert await lamp.resources.pattern.read(length=200) == bytes(range(200))
            with pytest.raises(RpcError) as missing:
                await device.read_resource("lamp://nothing")
            assert missing.value.code == -32002
            updates = lamp.resources.status.updates()
            first = asyncio.ensure_future(updates.__anext__())
            for _ in range(100):
                await asyncio.sleep(0.02)
                await lamp.light.set_rgb(r=3, g=2, b=1)
                if first.done():
                    break
            assert await first == "lamp://status"
            await updates.aclose()
        finally:
            await device.close()
        assert dev.running
