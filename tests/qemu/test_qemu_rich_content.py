"""Rich tool results on the emulated MCUs (issue 41 item 3): the desk lamp built for each
QEMU target answers its audio tool and its three-item tool through the runtime over the
UART, as on the host (the core's base64 writer and embedded read, on the MCU's build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgen.codegen.run.run_qemu import boot
from mcpgen.runtime import Audio, EmbeddedResource, Image, connect_serial

pytestmark = pytest.mark.slow


async def test_audio_and_items_over_the_uart(lamp_sim_exe: Path, tmp_path: Path) -> None:
    with boot(lamp_sim_exe, workdir=tmp_path) as dev:
        device = await connect_serial(dev.url)
        try:
            clip = await device.call("self.lamp.chime", {"notes": 3})
            assert isinstance(clip, Audio) and clip.mime_type == "audio/wav"
            assert clip.data[:4] == b"RIFF" and len(clip.data) == 44 + 960
            await device.call("self.light.set_rgb", {"r": 7, "g": 8, "b": 9})
            text, icon, status = await device.call("self.light.snapshot", {})
            assert text == "The lamp is off, colour (7, 8, 9), effect none."
            assert isinstance(icon, Image) and icon.data.startswith(b"\x89PNG")
            assert isinstance(status, EmbeddedResource) and '"rgb":[7,8,9]' in (status.text or "")
        finally:
            await device.close()
        assert dev.running
