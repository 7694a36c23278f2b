"""MCP over a serial line end to end, no hardware: the QEMU board's MCP UART on a host pty
(as a board on a USB serial port looks to the host), `codegen bridge --serial <pty>` in
front, and the official MCP Python SDK client launching the bridge over stdio, listing and
calling the board's tools through it. The board runs the same core line reader
(mcpgen/line_reader.h) as the ESP-IDF serial transport, and the bridge opens the pty with
pyserial as it opens /dev/ttyUSB0."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from qemu_uart_driver import LAMP_SPEC

from mcpgen.codegen.run.run_qemu import boot
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.base import BuildContext, BuildOptions

mcp = pytest.importorskip("mcp", reason="the MCP SDK comes with the bridge extra")
pytest.importorskip("serial", reason="pyserial comes with the serial extra")


def _bridge_params(pty: str) -> mcp.StdioServerParameters:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpgen", "bridge", "--transport", "stdio", "--serial", pty, "--call-timeout", "20"],
        env=env,
    )


async def test_sdk_client_lists_and_calls_tools_through_bridge_serial(
    lamp_sim_exe: Path, tmp_path: Path
) -> None:
    spec = load_spec(LAMP_SPEC)
    with boot(lamp_sim_exe, workdir=tmp_path, uart="pty") as dev:
        assert dev.pty is not None and dev.url == dev.pty
        assert stat.S_ISCHR(os.stat(dev.pty).st_mode)  # a real tty, as a USB serial port is
        async with mcp.Client(_bridge_params(dev.pty), mode="legacy", read_timeout_seconds=30) as client:
            listed = await client.list_tools()
            names = {t.name for t in listed.tools}
            callable_tools = [t.name for t in spec.tools if not t.user_only]
            assert names == {n.replace(".", "__") for n in callable_tools}
            rgb = next(t for t in listed.tools if t.name == "self__light__set_rgb")
            assert set(rgb.input_schema["required"]) == {"r", "g", "b"}

            ok = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2, "b": 3})
            assert not ok.is_error and ok.content[0].text == "true"
            state = await client.call_tool("self__light__get_state", {})
            assert json.loads(state.content[0].text)["rgb"] == [1, 2, 3]
            bad = await client.call_tool("self__light__set_rgb", {"r": 1, "g": 2, "b": 300})
            assert bad.is_error and "255" in bad.content[0].text
        assert dev.running
        # the board saw the requests on its MCP UART (its console reports each message)
        assert "mcpgen: msg " in dev.log_text()


def test_run_qemu_main_prints_the_pty(lamp_sim_exe: Path, tmp_path: Path) -> None:
    """`python -m mcpgen.codegen.run.run_qemu --pty ELF` (docs/bridge.md) names a tty path."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgen.codegen.run.run_qemu", "--pty", str(lamp_sim_exe)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("MCP UART: /dev/"), line
        path = line.split()[2]
        assert stat.S_ISCHR(os.stat(path).st_mode)
    finally:
        proc.terminate()
        proc.wait(10)


def test_codegen_run_interactive_on_a_serial_board(
    lamp_sim_exe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`codegen run SPEC --target esp32c3 -i` with the serial transport: build (PlatformIO faked),
    flash (faked at the esptool boundary), then the console on the board's port, where the
    QEMU board on a pty stands in for the flashed board."""
    from collections.abc import Sequence

    from mcpgen.codegen.run import board as board_mod
    from mcpgen.codegen.run import flash as flash_mod
    from mcpgen.codegen.targets import esp32

    spec = load_spec(LAMP_SPEC)
    monkeypatch.setenv("MCPGEN_TRANSPORT", "serial")
    monkeypatch.setenv("MCPGEN_SERIAL_BAUD", "921600")

    def fake_pio_run(project: Path, env: str, extra: Sequence[str] = (), *, log: object = None) -> int:
        build = project / ".pio" / "build" / env
        build.mkdir(parents=True, exist_ok=True)
        for name in ("bootloader.bin", "partitions.bin", "firmware.bin"):
            (build / name).write_bytes(b"\xe9" + bytes(15))
        return 0

    flashed: list[tuple[str, str, list[Path]]] = []

    def fake_write_images(chip: str, port: str, images: list[tuple[Path, int]], *, log: object = None) -> int:
        flashed.append((chip, port, [p for p, _ in images]))
        return 0

    monkeypatch.setattr(esp32, "pio_run", fake_pio_run)
    monkeypatch.setattr(flash_mod, "write_images", fake_write_images)
    commands = iter(["tools", "self.light.set_rgb r=4 g=5 b=6", "self.light.get_state", "quit"])

    async def reader() -> str | None:
        return next(commands, None)

    out: list[str] = []
    with boot(lamp_sim_exe, workdir=tmp_path / "qemu", uart="pty") as dev:
        assert dev.pty is not None
        ctx = BuildContext(spec, LAMP_SPEC, tmp_path / "out", BuildOptions(log=out.append))
        rc = board_mod.run_board(ctx, "esp32c3", port=dev.pty, interactive=True, reader=reader, timeout=20.0)
    text = "\n".join(out)
    assert rc == 0, text
    assert [(chip, port) for chip, port, _ in flashed] == [("esp32c3", dev.pty)]
    project = esp32.project_dir(tmp_path / "out")
    defaults = (project / "sdkconfig.defaults").read_text().splitlines()
    assert "CONFIG_MCPGEN_TRANSPORT_SERIAL=y" in defaults and "CONFIG_MCPGEN_SERIAL_BAUD=921600" in defaults
    assert f"opening the console on {dev.pty}" in text
    assert "connected to desk-lamp" in text
    assert "self.light.set_rgb" in text
    assert "not set" not in text  # no Wi-Fi / backend settings are asked for: the cable is the link
    assert "10 tools:" in text and "  self.light.set_rgb(" in text
    assert out.count("-> true") == 1 and '"rgb": [4, 5, 6]' in out[-1]
