"""The ESP32 MQTT transport: how a build selects it, what the generated project holds, and the
topic / Response Topic / goodbye / hello rules of ``core/mcpgen/mqtt_conventions.h`` (the one
copy both MQTT ports include), compiled with the host g++ and checked against the runtime's own
topic names (MqttGateway, MqttFleet).
The compile check against ESP-IDF's headers is in test_esp_idf_headers.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC

from mcpgen.codegen import resources
from mcpgen.codegen.emit import esp32_transport
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.targets.esp32 import generate_project, project_dir, read_mqtt_ca
from mcpgen.runtime import MqttFleet, MqttGateway

PORT = resources.firmware_template() / "ports" / "esp_idf"
CORE = resources.firmware_template() / "core"
MQTT_ENV = {
    "MCPGEN_WIFI_SSID": "lab",
    "MCPGEN_BACKEND_URL": "mqtt://10.0.0.2:1883",
    "MCPGEN_MQTT_USERNAME": "lamp-1",
    "MCPGEN_MQTT_PASSWORD": "pw",
    "MCPGEN_MQTT_TOPIC_PREFIX": "site/7",
    "MCPGEN_MQTT_DEVICE_ID": "lamp-1",
    "MCPGEN_MQTT_HELLO": "n",
}
CA = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n"


def _quiet(_: str) -> None:
    pass


# ---------------------------------------------------------------------------- selecting the transport


def test_transport_follows_the_variable_or_the_url_scheme() -> None:
    assert esp32_transport.transport_of({}) == "websocket"
    assert esp32_transport.transport_of({"MCPGEN_BACKEND_URL": "wss://gw/mcp"}) == "websocket"
    assert esp32_transport.transport_of({"MCPGEN_BACKEND_URL": "mqtts://broker:8883"}) == "mqtt"
    assert esp32_transport.transport_of({"MCPGEN_TRANSPORT": "MQTT"}) == "mqtt"
    with pytest.raises(BuildError, match=r"MCPGEN_TRANSPORT='udp': expected one of websocket, mqtt"):
        esp32_transport.transport_of({"MCPGEN_TRANSPORT": "udp"})
    with pytest.raises(
        BuildError,
        match=r"MCPGEN_TRANSPORT=mqtt but MCPGEN_BACKEND_URL='ws://gw' is a "
        r"websocket URL\n  fix: give a mqtt:// or mqtts:// URL",
    ):
        esp32_transport.transport_of({"MCPGEN_TRANSPORT": "mqtt", "MCPGEN_BACKEND_URL": "ws://gw"})
    with pytest.raises(BuildError, match="MCPGEN_MQTT_HELLO='maybe': expected y or n"):
        esp32_transport.sdkconfig_lines("mqtt", {"MCPGEN_MQTT_HELLO": "maybe"}, repr)


def test_mqtt_project_configuration(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text(CA)
    project = generate_project(
        TOOLSPEC / "desk_lamp.yaml",
        tmp_path / "out",
        log=_quiet,
        environ=dict(MQTT_ENV, MCPGEN_MQTT_CA_FILE=str(ca)),
    )
    defaults = (project / "sdkconfig.defaults").read_text()
    for line in (
        "CONFIG_MCPGEN_TRANSPORT_MQTT=y",
        'CONFIG_MCPGEN_BACKEND_URL="mqtt://10.0.0.2:1883"',
        'CONFIG_MCPGEN_MQTT_USERNAME="lamp-1"',
        'CONFIG_MCPGEN_MQTT_PASSWORD="pw"',
        'CONFIG_MCPGEN_MQTT_TOPIC_PREFIX="site/7"',
        'CONFIG_MCPGEN_MQTT_DEVICE_ID="lamp-1"',
        "# CONFIG_MCPGEN_MQTT_HELLO is not set",
    ):
        assert line in defaults.splitlines(), line
    src = project / "src"
    for rel in (
        "port/transport_mqtt.cpp",
        "port/transport_websocket.cpp",
        "port/esp_port.h",
        "mcpgen/mqtt_conventions.h",
        "port/mqtt_ca_pem.h",
    ):
        assert (src / rel).is_file(), rel
    assert "mqtt" in (src / "CMakeLists.txt").read_text().split("PRIV_REQUIRES", 1)[1].split(")")[0].split()
    kconfig = (src / "Kconfig.projbuild").read_text()
    assert "select MQTT_PROTOCOL_5" in kconfig
    # The CA is embedded as a C string, line by line.
    pem = (src / "port" / "mqtt_ca_pem.h").read_text()
    assert '"-----BEGIN CERTIFICATE-----\\n"' in pem and '"QUJD\\n"' in pem and "from ca.pem" in pem
    # A WebSocket build has no MQTT lines (their Kconfig symbols depend on the MQTT choice).
    ws = generate_project(
        TOOLSPEC / "desk_lamp.yaml", tmp_path / "ws", log=_quiet, environ={"MCPGEN_BACKEND_URL": "ws://gw"}
    )
    ws_defaults = (ws / "sdkconfig.defaults").read_text()
    assert "CONFIG_MCPGEN_TRANSPORT_WEBSOCKET=y" in ws_defaults and "MCPGEN_MQTT" not in ws_defaults
    assert 'kMcpgenMqttCaPem[] =\n    ""' in (ws / "src" / "port" / "mqtt_ca_pem.h").read_text()


def test_bad_ca_file_is_named(tmp_path: Path) -> None:
    der = tmp_path / "ca.der"
    der.write_text("not a pem")
    with pytest.raises(BuildError, match=r"MCPGEN_MQTT_CA_FILE=.*ca.der: no '-----BEGIN CERTIFICATE-----'"):
        read_mqtt_ca({"MCPGEN_MQTT_CA_FILE": str(der)})
    with pytest.raises(BuildError, match=r"MCPGEN_MQTT_CA_FILE=.*missing.pem: cannot read it"):
        read_mqtt_ca({"MCPGEN_MQTT_CA_FILE": str(tmp_path / "missing.pem")})


def test_existing_sdkconfig_follows_a_transport_change(tmp_path: Path) -> None:
    outdir = tmp_path / "out"
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={})
    sdk = project_dir(outdir) / "sdkconfig.esp32"
    sdk.write_text(
        'CONFIG_MCPGEN_BACKEND_URL="ws://a"\nCONFIG_MCPGEN_TRANSPORT_WEBSOCKET=y\n'
        "# CONFIG_MCPGEN_TRANSPORT_MQTT is not set\nCONFIG_X=1\n"
    )
    log: list[str] = []
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=log.append, environ=dict(MQTT_ENV))
    text = sdk.read_text()
    assert "CONFIG_MCPGEN_TRANSPORT_MQTT=y\n" in text
    assert "# CONFIG_MCPGEN_TRANSPORT_WEBSOCKET is not set\n" in text
    assert "\nCONFIG_X=1\n" in text  # the rest is kept
    assert any("set the transport in" in line and line.endswith("to mqtt") for line in log)
    # A file without the choice keeps the default quietly.
    assert esp32_transport.with_choice("CONFIG_X=1\n", "websocket") == "CONFIG_X=1\n"


# ---------------------------------------------------------------------------- the conventions, on the host


@pytest.fixture(scope="module")
def conventions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ not found")
    exe = tmp_path_factory.mktemp("conv") / "mqtt_conventions_driver"
    cmd = [
        cxx,
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fno-exceptions",
        "-fno-rtti",
        "-O1",
        f"-I{PORT}",
        f"-I{CORE}",
        str(Path(__file__).with_name("mqtt_conventions_driver.cpp")),
        str(CORE / "mcpgen" / "json_reader.cpp"),
        str(CORE / "mcpgen" / "json_writer.cpp"),
        "-o",
        str(exe),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return exe


def _ask(exe: Path, *commands: str) -> list[str]:
    proc = subprocess.run(
        [str(exe)], input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_topics_are_the_runtimes(conventions: Path) -> None:
    gateway = MqttGateway("127.0.0.1", 1883, topic_prefix="site/7")
    fleet = MqttFleet("127.0.0.1", 1883, topic_prefix="site/7", worker_id="w2")
    device = "aa:bb:cc:dd:ee:ff"  # the station MAC, the default device id
    leaves = ("up", "down", "state")
    got = _ask(conventions, *(f"topic site/7 {device} {leaf}" for leaf in leaves))
    assert got == [gateway.topic(device, leaf) for leaf in leaves]
    assert got == [fleet.topic(device, leaf) for leaf in leaves]
    # A fleet worker's reply topic is answered on; wildcards and empty ones are not.
    reply = fleet.reply_topic(device)
    assert _ask(conventions, f"response {reply}", "response a/+/b", "response a/#", "response x" * 300) == [
        "1",
        "0",
        "0",
        "0",
    ]
    assert _ask(
        conventions,
        f"topic p {'d' * 600} up",
        "level kitchen-lamp",
        "level a/b",
        "level a+",
        "level #",
        "prefix site/7",
        "prefix a/",
        "prefix /a",
        "prefix a/+",
    ) == ["-", "1", "0", "0", "0", "1", "0", "0", "0"]


def test_goodbye_and_hello(conventions: Path) -> None:
    got = _ask(
        conventions,
        'goodbye s1 {"type":"goodbye"}',
        'goodbye s1 {"session_id":"s1","type":"goodbye"}',
        'goodbye s1 {"session_id":"old","type":"goodbye"}',  # another session's: stale
        'goodbye - {"session_id":"old","type":"goodbye"}',
        'goodbye s1 {"type":"mcp","payload":{"text":"goodbye"}}',
        'goodbye s1 {"type":"goodbye"',
        "hello dev-uuid tok 1024",
        "hello dev-uuid - 1024",
        'hello a"b - 1024',
        "hello dev-uuid tok 20",
    )
    assert got[:6] == ["1", "1", "0", "1", "0", "0"]
    assert json.loads(got[6]) == {"type": "hello", "client_id": "dev-uuid", "token": "tok"}
    assert json.loads(got[7]) == {"type": "hello", "client_id": "dev-uuid"}
    assert json.loads(got[8]) == {"type": "hello", "client_id": 'a"b'}
    assert got[9] == "-"  # does not fit: nothing half-written is sent
