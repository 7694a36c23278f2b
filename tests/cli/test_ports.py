"""``--port auto``: the board is found by the USB id of its serial chip (pyserial's port
list, faked here), a picker when several are connected, one clear line when none is."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_testlib import SPECS

from mcpgen.codegen import cli
from mcpgen.codegen.run import ports
from mcpgen.codegen.run.ports import PortError, chip_of, find_boards, resolve_port

serial_common = pytest.importorskip("serial.tools.list_ports_common")


def usb(device: str, vid: int | None = None, pid: int | None = None, description: str = "") -> object:
    """A port as pyserial lists it."""
    info = serial_common.ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.description = vid, pid, description
    return info


CP2102 = usb("/dev/ttyUSB0", 0x10C4, 0xEA60, "CP2102 USB to UART Bridge Controller")
S3_NATIVE = usb("/dev/ttyACM0", 0x303A, 0x1001, "USB JTAG/serial debug unit")
CH340 = usb("/dev/ttyUSB1", 0x1A86, 0x7523, "USB Serial")
MOUSE_SERIAL = usb("/dev/ttyACM3", 0x2341, 0x0043, "Arduino Uno")
BUILTIN = usb("/dev/ttyS0")


@pytest.mark.parametrize(
    ("vid", "pid", "chip"),
    [
        (0x303A, 0x1001, "Espressif native USB"),
        (0x303A, 0x0002, "Espressif native USB"),
        (0x10C4, 0xEA60, "Silicon Labs CP210x"),
        (0x1A86, 0x55D4, "WCH CH34x"),
        (0x1A86, 0x7523, "WCH CH34x"),
        (0x0403, 0x6001, "FTDI"),
        (0x0403, 0x6015, "FTDI"),
        (0x10C4, 0x8A2A, None),
        (0x0403, 0x6666, None),
        (0x2341, 0x0043, None),
        (None, None, None),
    ],
)
def test_chips_by_usb_id(vid: int | None, pid: int | None, chip: str | None) -> None:
    assert chip_of(vid, pid) == chip


def test_one_board_is_used_and_named() -> None:
    said: list[str] = []
    port = resolve_port("auto", ports=[BUILTIN, MOUSE_SERIAL, CP2102], out=said.append, interactive=False)
    assert port == "/dev/ttyUSB0"
    assert said == [
        "using /dev/ttyUSB0 (Silicon Labs CP210x, 10C4:EA60) - CP2102 USB to UART Bridge Controller"
    ]


def test_a_named_port_is_taken_as_it_is() -> None:
    assert resolve_port("socket://127.0.0.1:5555", ports=[]) == "socket://127.0.0.1:5555"


def test_none_is_one_clear_message() -> None:
    with pytest.raises(PortError) as exc:
        resolve_port("auto", ports=[BUILTIN, MOUSE_SERIAL], interactive=True)
    text = str(exc.value)
    assert text.startswith("no ESP32 board found on USB (looked for Espressif native USB 303A:*, CP210x")
    assert "other serial ports: /dev/ttyACM3, /dev/ttyS0" in text
    assert "fix: plug the board in" in text and "--port /dev/ttyUSB0" in text


def test_several_without_a_terminal_are_listed_and_refused() -> None:
    with pytest.raises(PortError) as exc:
        resolve_port("auto", ports=[CH340, S3_NATIVE, CP2102], interactive=False)
    text = str(exc.value)
    assert text.startswith("3 boards are connected and none was chosen:")
    assert text.index("/dev/ttyACM0") < text.index("/dev/ttyUSB0") < text.index("/dev/ttyUSB1")
    assert "fix: name one, e.g. --port /dev/ttyACM0" in text


def test_several_on_a_terminal_ask_until_a_valid_number() -> None:
    answers = iter(["", "7", "two", "3"])
    prompts: list[str] = []
    said: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    port = resolve_port(None, ports=[CH340, S3_NATIVE, CP2102], interactive=True, ask=ask, out=said.append)
    assert port == "/dev/ttyUSB1"
    assert said[0] == "several boards are connected:"
    assert said[1].startswith("  1) /dev/ttyACM0 (Espressif native USB, 303A:1001)")
    assert said[3].startswith("  3) /dev/ttyUSB1 (WCH CH34x, 1A86:7523)")
    assert prompts == ["which one? [1-3] "] * 4
    assert said.count("type a number from 1 to 3 (or Ctrl-D to stop)") == 3
    assert said[-1] == "using /dev/ttyUSB1"


def test_end_of_input_at_the_picker_is_refused() -> None:
    def ask(prompt: str) -> str:
        raise EOFError

    with pytest.raises(PortError, match="no board chosen; name one with --port PORT"):
        resolve_port("auto", ports=[CH340, CP2102], interactive=True, ask=ask, out=lambda _: None)


def test_find_boards_sorted() -> None:
    assert [b.device for b in find_boards([CP2102, BUILTIN, S3_NATIVE])] == ["/dev/ttyACM0", "/dev/ttyUSB0"]


@pytest.mark.parametrize("command", [["monitor"], ["flash", str(SPECS / "desk_lamp.yaml")]])
def test_flash_and_monitor_default_to_auto(
    command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(ports, "list_serial_ports", lambda: [BUILTIN])
    assert cli.main([*command, "-o", str(tmp_path)] if command[0] == "flash" else command) == 1
    err = capsys.readouterr().err
    assert err.startswith("codegen: error: no ESP32 board found on USB (looked for ")
    assert "other serial ports: /dev/ttyS0" in err


def test_run_on_a_board_refuses_the_console_before_building(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With a Wi-Fi transport (the default); the serial transport's console is tested in
    tests/qemu/test_qemu_serial_bridge.py."""
    monkeypatch.setattr(ports, "list_serial_ports", lambda: [CP2102])
    monkeypatch.delenv("MCPGEN_TRANSPORT", raising=False)
    monkeypatch.delenv("MCPGEN_BACKEND_URL", raising=False)
    rc = cli.main(["run", str(SPECS / "desk_lamp.yaml"), "--target", "esp32c3", "-i", "-o", str(tmp_path)])
    assert rc == 1
    err = capsys.readouterr().err
    assert "this build's transport is websocket" in err
    assert "MCPGEN_TRANSPORT=serial codegen run SPEC --target esp32c3 -i" in err
    assert not any(tmp_path.iterdir())  # nothing generated or built
