"""Spec events from the QEMU images (once per target): the bare-metal port's outlet puts
them on the MCP UART, and the runtime's typed bindings (compiled when the runtime is)
decode them."""

from __future__ import annotations

from pathlib import Path

import pytest
from qemu_uart_driver import LAMP_SPEC

from mcpgen import runtime
from mcpgen.codegen.run.run_qemu import boot
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.python import build_bindings, import_bindings

pytestmark = pytest.mark.slow


async def test_typed_events_over_the_uart(lamp_sim_exe: Path, tmp_path: Path) -> None:
    from mcpgen.runtime import connect_serial

    spec = load_spec(LAMP_SPEC)
    pydir = build_bindings(LAMP_SPEC, tmp_path / "py", log=lambda _m: None, compile=runtime.COMPILED)
    mod = import_bindings(pydir, "desk_lamp_tools")
    with boot(lamp_sim_exe, workdir=tmp_path) as dev:
        device = await connect_serial(dev.url, fingerprint=spec.fingerprint, policy="strict")
        try:
            lamp = mod.DeskLamp(device, policy="strict")
            presses = lamp.events.button_pressed()
            power = lamp.events.power_changed()
            assert await lamp.button.press(count=1) is True
            assert await presses.next(timeout=10) == mod.ButtonPressedEvent(count=1)
            assert await power.next(timeout=10) == mod.PowerChangedEvent(on=True, source="button")
            assert await lamp.light.set_power(on=False) is True
            assert await power.next(timeout=10) == mod.PowerChangedEvent(on=False, source="assistant")
        finally:
            await device.close()
        assert dev.running
