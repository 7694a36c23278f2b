"""The ESP32 serial transport (MCP over UART0 / USB-Serial-JTAG, no Wi-Fi): how a build selects
it and what the generated project holds. The compile check against ESP-IDF's headers is in
test_esp_idf_headers.py; the same framing end to end (QEMU UART on a host pty, `codegen bridge
--serial`, the MCP SDK) in tests/qemu/test_qemu_serial_bridge.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC

from mcpgen.codegen.emit import esp32_transport
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.targets.esp32 import generate_project, project_dir


def _quiet(_: str) -> None:
    pass


def test_serial_is_chosen_by_the_variable_and_ignores_the_backend_url() -> None:
    assert esp32_transport.transport_of({"MCPGEN_TRANSPORT": "serial"}) == "serial"
    # A backend URL left in the environment does not conflict: the serial transport has none.
    assert (
        esp32_transport.transport_of({"MCPGEN_TRANSPORT": "Serial", "MCPGEN_BACKEND_URL": "ws://gw"})
        == "serial"
    )
    with pytest.raises(BuildError, match=r"MCPGEN_TRANSPORT='usb': expected one of websocket, mqtt, serial"):
        esp32_transport.transport_of({"MCPGEN_TRANSPORT": "usb"})


def test_serial_sdkconfig_lines() -> None:
    assert esp32_transport.sdkconfig_lines("serial", {}, repr) == ["CONFIG_MCPGEN_TRANSPORT_SERIAL=y"]
    lines = esp32_transport.sdkconfig_lines(
        "serial", {"MCPGEN_SERIAL_PORT": "USB_Serial_JTAG", "MCPGEN_SERIAL_BAUD": "921600"}, repr
    )
    assert lines == [
        "CONFIG_MCPGEN_TRANSPORT_SERIAL=y",
        "CONFIG_MCPGEN_SERIAL_USB_SERIAL_JTAG=y",
        "CONFIG_MCPGEN_SERIAL_BAUD=921600",
    ]
    with pytest.raises(
        BuildError,
        match=r"MCPGEN_SERIAL_PORT='uart1': expected one of uart0, usb_serial_jtag\n"
        r"  fix: export MCPGEN_SERIAL_PORT=uart0",
    ):
        esp32_transport.sdkconfig_lines("serial", {"MCPGEN_SERIAL_PORT": "uart1"}, repr)
    with pytest.raises(BuildError, match=r"MCPGEN_SERIAL_BAUD='fast': expected a speed in baud"):
        esp32_transport.sdkconfig_lines("serial", {"MCPGEN_SERIAL_BAUD": "fast"}, repr)
    # The serial settings are not written for the other transports.
    assert esp32_transport.sdkconfig_lines("websocket", {"MCPGEN_SERIAL_BAUD": "9600"}, repr) == [
        "CONFIG_MCPGEN_TRANSPORT_WEBSOCKET=y"
    ]


def test_serial_project(tmp_path: Path) -> None:
    project = generate_project(
        TOOLSPEC / "desk_lamp.yaml",
        tmp_path / "out",
        log=_quiet,
        environ={"MCPGEN_TRANSPORT": "serial", "MCPGEN_SERIAL_PORT": "uart0"},
    )
    defaults = (project / "sdkconfig.defaults").read_text().splitlines()
    assert "CONFIG_MCPGEN_TRANSPORT_SERIAL=y" in defaults and "CONFIG_MCPGEN_SERIAL_UART0=y" in defaults
    src = project / "src"
    assert (src / "port" / "transport_serial.cpp").is_file()
    assert (src / "mcpgen" / "line_reader.cpp").is_file() and (src / "mcpgen" / "line_reader.h").is_file()
    requires = (src / "CMakeLists.txt").read_text().split("PRIV_REQUIRES", 1)[1].split(")")[0].split()
    assert {"esp_driver_uart", "esp_driver_usb_serial_jtag"} <= set(requires)
    kconfig = (src / "Kconfig.projbuild").read_text()
    assert (
        "config MCPGEN_TRANSPORT_SERIAL" in kconfig and "depends on SOC_USB_SERIAL_JTAG_SUPPORTED" in kconfig
    )


def test_existing_sdkconfig_follows_a_change_to_serial(tmp_path: Path) -> None:
    """An sdkconfig written before the serial choice existed gets its line added."""
    outdir = tmp_path / "out"
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={})
    sdk = project_dir(outdir) / "sdkconfig.esp32c3"
    sdk.write_text(
        "CONFIG_MCPGEN_TRANSPORT_WEBSOCKET=y\n# CONFIG_MCPGEN_TRANSPORT_MQTT is not set\nCONFIG_X=1\n"
    )
    log: list[str] = []
    generate_project(
        TOOLSPEC / "desk_lamp.yaml", outdir, log=log.append, environ={"MCPGEN_TRANSPORT": "serial"}
    )
    lines = sdk.read_text().splitlines()
    assert "CONFIG_MCPGEN_TRANSPORT_SERIAL=y" in lines
    assert "# CONFIG_MCPGEN_TRANSPORT_WEBSOCKET is not set" in lines
    assert "# CONFIG_MCPGEN_TRANSPORT_MQTT is not set" in lines and "CONFIG_X=1" in lines
    assert any(line.endswith("to serial") for line in log)
    # and back: the serial line is switched off again
    generate_project(
        TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={"MCPGEN_TRANSPORT": "websocket"}
    )
    lines = sdk.read_text().splitlines()
    assert (
        "CONFIG_MCPGEN_TRANSPORT_WEBSOCKET=y" in lines
        and "# CONFIG_MCPGEN_TRANSPORT_SERIAL is not set" in lines
    )
    # a file without any choice line gets all of them
    assert esp32_transport.with_choice("CONFIG_X=1\n", "serial") == (
        "CONFIG_X=1\n# CONFIG_MCPGEN_TRANSPORT_MQTT is not set\n"
        "CONFIG_MCPGEN_TRANSPORT_SERIAL=y\n# CONFIG_MCPGEN_TRANSPORT_WEBSOCKET is not set\n"
    )


def test_codegen_run_interactive_refuses_a_network_transport(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the serial transport, -i is refused before anything is built, naming the fix."""
    from mcpgen.codegen.run import board as board_mod
    from mcpgen.codegen.targets import esp32
    from mcpgen.codegen.targets.base import BuildContext, BuildOptions

    built: list[str] = []
    monkeypatch.setattr(esp32, "pio_run", lambda *a, **k: built.append("pio") or 0)
    monkeypatch.delenv("MCPGEN_TRANSPORT", raising=False)
    monkeypatch.setenv("MCPGEN_BACKEND_URL", "mqtt://broker:1883")
    errors: list[str] = []
    ctx = BuildContext.load(TOOLSPEC / "desk_lamp.yaml", tmp_path / "out", BuildOptions(log=errors.append))
    rc = board_mod.run_board(ctx, "esp32", port="/dev/null", interactive=True)
    assert rc == 1 and built == [] and not (tmp_path / "out").exists()
    assert errors[0].startswith(
        "the interactive console talks MCP over the serial port, and this build's "
        "transport is mqtt\n  fix: build the serial transport: MCPGEN_TRANSPORT=serial "
        "codegen run SPEC --target esp32 -i"
    )
