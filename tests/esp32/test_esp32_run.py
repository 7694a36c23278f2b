"""``codegen run SPEC --target esp32*``: one command builds, flashes and monitors a board.

What stands in for what: PlatformIO's build is faked (it writes the images a build makes:
no toolchain downloads here), the board is esptool's mock ROM bootloader (the real esptool
writes to it over socket://, found through a faked USB port list) and the monitor is
faked at its process boundary (its command line is recorded). The images are read back.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC, require
from test_esp32_flash import esp_image, partition_table

from mcpgen.codegen import cli
from mcpgen.codegen.run import monitor as monitor_mod
from mcpgen.codegen.run import ports
from mcpgen.codegen.targets import esp32

pytestmark = pytest.mark.slow


def test_run_builds_flashes_and_monitors_the_board_found_on_usb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require("esptool", "esptool")
    require("esp32_mock_bootloader", "esp32-mock-bootloader")
    require("esp_idf_monitor", "esp-idf-monitor")
    from esp32_mock_bootloader import mock_bootloader
    from serial.tools.list_ports_common import ListPortInfo

    board = "esp32c3"
    info = esp32.BOARDS[board]
    outdir = tmp_path / "out"
    images: dict[str, bytes] = {}

    def fake_pio_run(project: Path, env: str, extra: Sequence[str] = (), *, log: object = None) -> int:
        build = project / ".pio" / "build" / env
        build.mkdir(parents=True, exist_ok=True)
        images["bootloader.bin"] = esp_image(info.chip, os.urandom(5000))
        images["partitions.bin"] = partition_table(project / "partitions.csv")
        images["firmware.bin"] = esp_image(info.chip, os.urandom(15000))
        for name, data in images.items():
            (build / name).write_bytes(data)
        (build / "firmware.elf").write_bytes(b"\x7fELF")
        return 0

    monitored: list[list[str]] = []

    def fake_monitor_process(cmd: list[str], env: dict[str, str]) -> int:
        monitored.append(cmd)
        return 0

    monkeypatch.setattr(esp32, "pio_run", fake_pio_run)
    monkeypatch.setattr(monitor_mod.subprocess, "call", fake_monitor_process)
    with mock_bootloader(chip=info.chip) as mock:
        url = mock.url()
        port = ListPortInfo(url, skip_link_detection=True)
        port.vid, port.pid = 0x303A, 0x1001  # the C3's USB-Serial-JTAG
        monkeypatch.setattr(ports, "list_serial_ports", lambda: [port])
        rc = cli.main(
            ["run", str(TOOLSPEC / "desk_lamp.yaml"), "--target", board, "--port", "auto", "-o", str(outdir)]
        )
        out = capsys.readouterr().out
        assert rc == 0, out
        from test_esp32_flash import read_flash

        assert (
            read_flash(info.chip, url, 0x0, len(images["bootloader.bin"]), tmp_path / "b")
            == images["bootloader.bin"]
        )
        assert (
            read_flash(info.chip, url, 0x10000, len(images["firmware.bin"]), tmp_path / "a")
            == images["firmware.bin"]
        )
    assert f"using {url} (Espressif native USB, 303A:1001)" in out
    assert (
        out.index("generated PlatformIO project")
        < out.index("writing esp32c3 images")
        < out.index("Hash of data verified")
        < out.index("flashed; starting the monitor")
    )
    [cmd] = monitored
    assert cmd[1:3] == ["-m", "esp_idf_monitor"]
    assert cmd[cmd.index("--port") + 1] == url and cmd[cmd.index("--target") + 1] == "esp32c3"
    assert cmd[-1].endswith(str(Path(".pio") / "build" / board / "firmware.elf"))


def test_run_names_the_missing_board_before_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[str] = []
    monkeypatch.setattr(esp32, "pio_run", lambda *a, **k: built.append("pio") or 0)
    monkeypatch.setattr(ports, "list_serial_ports", lambda: [])
    rc = cli.main(["run", str(TOOLSPEC / "desk_lamp.yaml"), "--target", "esp32", "-o", str(tmp_path)])
    assert rc == 1 and built == []
    err = capsys.readouterr().err
    assert err.startswith("codegen: error: no ESP32 board found on USB")
    assert not any(tmp_path.iterdir())
