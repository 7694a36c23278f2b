"""The generated PlatformIO project: PlatformIO's own config parser accepts it, the
configuration comes from the environment, and `pio run` fails fast and clearly offline."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC, require

from mcpgen.codegen.targets import esp32 as be
from mcpgen.codegen.targets.esp32 import BOARDS, build_esp32, generate_project, pio_command, project_dir

PIO_BOARDS = {"esp32": "esp32dev", "esp32s3": "esp32-s3-devkitc-1", "esp32c3": "esp32-c3-devkitm-1"}


def _quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def lamp_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = {
        "MCPGEN_WIFI_SSID": "lab-net",
        "MCPGEN_WIFI_PASSWORD": 'pa"ss\\word',
        "MCPGEN_BACKEND_URL": "ws://192.168.1.10:8765/mcp",
        "MCPGEN_BACKEND_TOKEN": "tok-1",
    }
    outdir = tmp_path_factory.mktemp("lamp")
    return generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ=env)


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_pio_project_config_accepts_the_generated_project(lamp_project: Path, board: str) -> None:
    require("platformio", "platformio")
    pio = pio_command()
    assert pio is not None
    out = subprocess.run(
        [*pio, "project", "config", "-d", str(lamp_project), "--json-output"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    sections = {name: dict(options) for name, options in json.loads(out.stdout)}
    env = sections[f"env:{board}"]
    assert env["board"] == PIO_BOARDS[board]
    assert env["framework"] == ["espidf"]
    assert env["platform"].startswith("espressif32")
    assert env["board_build.partitions"] == "partitions.csv"


def test_project_contains_core_generated_code_handlers_and_port(lamp_project: Path) -> None:
    src = lamp_project / "src"
    for rel in (
        "mcpgen/mcp_core.h",
        "mcpgen/mcp_server.cpp",
        "mcpgen/session.cpp",
        "generated/mcp_tools.h",
        "generated/mcp_tools.cpp",
        "handlers.cmake",
        "port/mcpgen_esp_port.cpp",
        "CMakeLists.txt",
        "Kconfig.projbuild",
        "idf_component.yml",
    ):
        assert (src / rel).is_file(), rel
    assert "LightSetRgbArgs" in (src / "generated/mcp_tools.h").read_text()
    assert "project(desk_lamp)" in (lamp_project / "CMakeLists.txt").read_text()
    assert "esp_websocket_client" in (src / "idf_component.yml").read_text()
    transport = (src / "port/transport_websocket.cpp").read_text()
    for header in ("Authorization", "Protocol-Version", "Device-Id", "Client-Id"):
        assert f"{header}: " in transport
    assert 'server.hello("websocket"' in transport
    assert "xTaskCreate(worker" in (src / "port/mcpgen_esp_port.cpp").read_text()
    csv = (lamp_project / "partitions.csv").read_text()
    assert be.app_offset(lamp_project / "partitions.csv") == 0x10000 and "factory" in csv


def test_configuration_comes_from_the_environment(lamp_project: Path, tmp_path: Path) -> None:
    defaults = (lamp_project / "sdkconfig.defaults").read_text()
    assert 'CONFIG_MCPGEN_WIFI_SSID="lab-net"' in defaults
    assert 'CONFIG_MCPGEN_WIFI_PASSWORD="pa\\"ss\\\\word"' in defaults
    assert 'CONFIG_MCPGEN_BACKEND_URL="ws://192.168.1.10:8765/mcp"' in defaults
    assert 'CONFIG_MCPGEN_BACKEND_TOKEN="tok-1"' in defaults
    # Nothing is baked into the sources.
    for path in (lamp_project / "src").rglob("*"):
        if path.is_file():
            assert "lab-net" not in path.read_text(errors="replace"), path
    # An existing sdkconfig.<env> (seeded once from the defaults) follows new values.
    outdir = tmp_path / "out"
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={"MCPGEN_WIFI_SSID": "old"})
    sdk = project_dir(outdir) / "sdkconfig.esp32"
    sdk.write_text('CONFIG_MCPGEN_WIFI_SSID="old"\nCONFIG_MCPGEN_BACKEND_URL="ws://keep"\n')
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={"MCPGEN_WIFI_SSID": "new"})
    assert sdk.read_text() == 'CONFIG_MCPGEN_WIFI_SSID="new"\nCONFIG_MCPGEN_BACKEND_URL="ws://keep"\n'


def test_missing_platformio_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(be, "pio_command", lambda: None)
    out: list[str] = []
    assert build_esp32(TOOLSPEC / "desk_lamp.yaml", tmp_path, "esp32c3", log=out.append) == 1
    text = "\n".join(out)
    assert "pip install platformio" in text
    assert f"pio run -d {project_dir(tmp_path)} -e esp32c3" in text


@pytest.mark.slow
def test_offline_pio_run_fails_fast_with_a_clear_message(tmp_path: Path, monkeypatch) -> None:
    """Runs the real `pio run` with no way to download the platform: bounded time, clear message.

    An empty PlatformIO home and a dead proxy make this offline on any machine.
    """
    require("platformio", "platformio")
    monkeypatch.setenv("PLATFORMIO_CORE_DIR", str(tmp_path / "pio-home"))
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setattr(be, "registry_reachable", lambda timeout=5.0: False)
    monkeypatch.setattr(be, "OFFLINE_TIMEOUT", 15.0)
    out: list[str] = []
    start = time.monotonic()
    rc = build_esp32(TOOLSPEC / "default_device.yaml", tmp_path / "out", "esp32s3", log=out.append)
    elapsed = time.monotonic() - start
    text = "\n".join(out)
    assert rc == 1
    assert elapsed < 60, f"took {elapsed:.0f} s"
    project = project_dir(tmp_path / "out")
    assert "PlatformIO could not download the espressif32 platform" in text
    assert f"generated: {project}" in text
    assert f"pio run -d {project} -e esp32s3" in text
    assert (project / "platformio.ini").is_file()
    assert any(line.startswith("$ ") and " run -d " in line for line in out), "pio output is streamed"
