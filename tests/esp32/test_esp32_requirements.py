"""The components a generated ESP32 project requires follow its transport and device.ota.

ESP-IDF resolves component requirements before it reads the sdkconfig, so the Kconfig choice
of the transport cannot trim them: codegen writes them per transport into src/CMakeLists.txt
and src/idf_component.yml (codegen/emit/esp32_transport.py). A serial device must link
no Wi-Fi, lwIP, mbedTLS or HTTP client; before this, every project required them all, and the
serial drivers (first in ESP-IDF 5.3) even in a manifest that admitted ESP-IDF 5.1.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from esp32_testlib import TOOLSPEC

from mcpgen.codegen.emit import esp32_transport
from mcpgen.codegen.targets import esp_idf_layout as layout
from mcpgen.codegen.targets.esp32 import generate_project

NETWORK_ONLY = {"esp_wifi", "esp_netif", "esp_event", "mbedtls", "mqtt", "tcp_transport", "lwip"}
OTA_ONLY = {
    "esp_https_ota",
    "esp_http_client",
    "app_update",
    "bootloader_support",
    "esp_app_format",
    "esp_partition",
    "esp_timer",
}
SERIAL_ONLY = {"esp_driver_uart", "esp_driver_usb_serial_jtag"}
ENVIRON = {
    "websocket": {"MCPGEN_TRANSPORT": "websocket"},
    "mqtt": {"MCPGEN_TRANSPORT": "mqtt", "MCPGEN_BACKEND_URL": "mqtt://broker:1883"},
    "serial": {"MCPGEN_TRANSPORT": "serial"},
}


def _quiet(_: str) -> None:
    pass


def _ota_spec(tmp: Path) -> Path:
    text = (TOOLSPEC / "desk_lamp.yaml").read_text(encoding="utf-8")
    spec = tmp / "lamp_ota.yaml"
    spec.write_text(text.replace("device:\n", "device:\n  ota: true\n", 1), encoding="utf-8")
    shutil.copyfile(TOOLSPEC / "desk_lamp_handlers.cpp", tmp / "lamp_ota_handlers.cpp")
    return spec


def _component(tmp: Path, transport: str, ota: bool) -> Path:
    spec = _ota_spec(tmp) if ota else TOOLSPEC / "desk_lamp.yaml"
    return generate_project(spec, tmp / "out", log=_quiet, environ=ENVIRON[transport]) / "src"


@pytest.mark.parametrize("ota", [False, True], ids=["plain", "ota"])
def test_serial_project_requires_no_network_component(tmp_path: Path, ota: bool) -> None:
    src = _component(tmp_path, "serial", ota)
    requires = layout.requirements(src / "CMakeLists.txt")
    assert SERIAL_ONLY | {"nvs_flash"} <= requires
    assert not requires & {"esp_wifi", "esp_netif", "esp_event", "mqtt", "tcp_transport", "lwip"}
    assert (OTA_ONLY <= requires) is ota and ("mbedtls" in requires) is ota  # SHA-256 of the image
    if not ota:
        assert requires == SERIAL_ONLY | {"nvs_flash"}
    # No managed component: nothing to download, and no esp_websocket_client to link.
    assert layout.manifest_dependencies(src) == {"idf": ">=5.3"}


@pytest.mark.parametrize("transport", ["websocket", "mqtt"])
def test_network_project_requires_no_serial_driver(tmp_path: Path, transport: str) -> None:
    src = _component(tmp_path, transport, False)
    requires = layout.requirements(src / "CMakeLists.txt")
    assert {"nvs_flash", "esp_wifi", "esp_netif", "esp_event", "mbedtls"} <= requires
    assert not requires & (SERIAL_ONLY | OTA_ONLY)
    mqtt = transport == "mqtt"
    assert ("mqtt" in requires) is mqtt and ("tcp_transport" in requires) is mqtt
    deps = layout.manifest_dependencies(src)
    assert deps["idf"] == ">=5.1"
    assert ("espressif/esp_websocket_client" in deps) is (transport == "websocket")
    assert ("espressif/mqtt" in deps) is (transport == "mqtt")
    manifest = yaml.safe_load((src / "idf_component.yml").read_text(encoding="utf-8"))
    if transport == "mqtt":  # esp-mqtt left ESP-IDF in 6.0 for the registry: only from there
        assert manifest["dependencies"]["espressif/mqtt"]["rules"] == [{"if": "idf_version >=6.0"}]
        assert "esp-mqtt" in (src / "idf_component.yml").read_text(encoding="utf-8")  # its comment kept


def test_every_requirement_is_said_why(tmp_path: Path) -> None:
    """Each required component is on a line of its own with the part of the port that needs it."""
    text = (_component(tmp_path, "mqtt", True) / "CMakeLists.txt").read_text(encoding="utf-8")
    reg = text.split("idf_component_register(", 1)[1].split("\n)\n", 1)[0]
    assert "@mcpgen" not in reg and "(" not in reg.split("PRIV_REQUIRES", 1)[1]
    for name in ("esp_wifi", "mqtt", "esp_https_ota", "esp_timer"):
        assert re.search(rf"^ +{name}  # (the mqtt transport|device\.ota): \S", reg, re.MULTILINE), name
    # mbedtls once, for the transport that needs it first
    assert len(re.findall(r"^ +mbedtls  #", reg, re.MULTILINE)) == 1


def test_manifest_minimum_is_the_first_release_with_the_components() -> None:
    """ESP-IDF's git tags: esp_driver_uart / esp_driver_usb_serial_jtag appear in v5.3 (the UART
    and USB-Serial-JTAG drivers were in `driver` before); the rest exists in 5.1."""
    assert esp32_transport.MIN_IDF == {"websocket": "5.1", "mqtt": "5.1", "serial": "5.3"}
    for transport in esp32_transport.TRANSPORTS:
        names = {n for n, _ in esp32_transport.component_requirements(transport, True)}
        assert bool(names & SERIAL_ONLY) is (transport == "serial"), transport


def test_esp_idf_reads_each_transports_requirements_in_script_mode(tmp_path: Path) -> None:
    """ESP-IDF's early expansion (script mode) reads exactly the requirements the project lists."""
    if shutil.which("cmake") is None:
        pytest.fail("cmake not found: run scripts/dev.sh setup (apt package cmake)")
    for transport in esp32_transport.TRANSPORTS:
        src = _component(tmp_path / transport, transport, False)
        driver = tmp_path / f"{transport}.cmake"
        driver.write_text(
            "set(CMAKE_BUILD_EARLY_EXPANSION 1)\n"
            "macro(idf_component_register)\n"
            '    cmake_parse_arguments(_ "" "" "SRCS;INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${ARGN})\n'
            '    message("PRIV_REQUIRES=${__PRIV_REQUIRES}")\n'
            "endmacro()\n"
            "macro(target_compile_features)\nendmacro()\nmacro(target_compile_options)\nendmacro()\n"
            "macro(set_source_files_properties)\nendmacro()\n"
            f'include("{(src / "CMakeLists.txt").as_posix()}")\n',
            encoding="utf-8",
        )
        proc = subprocess.run(["cmake", "-P", str(driver)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        got = set(proc.stderr.split("PRIV_REQUIRES=", 1)[1].split("\n", 1)[0].split(";"))
        assert got == layout.requirements(src / "CMakeLists.txt"), transport


def _deps(source: Path, src: Path, defines: list[str], stubs: Path) -> str:
    """The headers ``source`` includes under ``defines`` (g++ -MM -MG: missing ones listed, not fatal)."""
    cmd = ["g++", "-std=gnu++17", "-MM", "-MG", *defines, f"-I{src}", f"-I{src / 'generated'}", f"-I{stubs}"]
    proc = subprocess.run([*cmd, str(source)], capture_output=True, text=True)
    return proc.stdout + proc.stderr


def test_the_serial_port_includes_no_wifi_header(tmp_path: Path) -> None:
    """The port's shared file includes esp_wifi.h / esp_netif.h / esp_event.h only for the network
    transports, and a sdkconfig switched to one in menuconfig alone stops with what to do."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not found")
    src = _component(tmp_path, "serial", False)
    port = src / "port" / "mcpgen_esp_port.cpp"
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    serial = _deps(port, src, ["-DCONFIG_MCPGEN_TRANSPORT_SERIAL=1"], stubs)
    assert "nvs_flash.h" in serial
    for header in ("esp_wifi.h", "esp_netif.h", "esp_event.h"):
        assert header not in serial, header
    switched = _deps(port, src, ["-DCONFIG_MCPGEN_TRANSPORT_WEBSOCKET=1"], stubs)
    assert "generated for the serial transport" in switched
    assert "MCPGEN_TRANSPORT=websocket or mqtt" in switched
    for header in ("esp_wifi.h", "esp_netif.h", "esp_event.h"):  # as the network transports' build finds them
        (stubs / header).write_text("", encoding="utf-8")
    network = _deps(port, src, ["-DCONFIG_MCPGEN_TRANSPORT_WEBSOCKET=1"], stubs)
    assert "error" not in network and "esp_wifi.h" in network
    websocket = src / "port" / "transport_websocket.cpp"
    ws = _deps(websocket, src, ["-DCONFIG_MCPGEN_TRANSPORT_WEBSOCKET=1"], stubs)
    assert "again with MCPGEN_TRANSPORT=websocket" in ws
