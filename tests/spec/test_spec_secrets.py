"""``!secret NAME`` in the spec's ``firmware:`` section: resolved from the environment or
``secrets.yaml`` beside the spec, refused with a located error when missing, and never in a
generated file except ``sdkconfig.defaults`` (the one place, named in the output)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.codegen.spec.loader import check_spec, load_spec
from mcpgen.codegen.spec.secrets import env_name

REPO = Path(__file__).resolve().parents[2]
LAMP = REPO / "toolspec" / "desk_lamp.yaml"
PASSWORD = "hunter2-Zq7!pass"
TOKEN = "tok-8c1f0a2e-never-in-sources"
FIRMWARE = """
firmware:
  wifi_ssid: home-net
  wifi_password: !secret wifi_password
  backend_url: wss://backend.example/mcp
  backend_token: !secret backend-token
"""


def spec_with_secrets(tmp_path: Path) -> Path:
    spec = tmp_path / "desk_lamp.yaml"
    spec.write_text(LAMP.read_text(encoding="utf-8") + FIRMWARE, encoding="utf-8")
    handlers = (REPO / "toolspec" / "desk_lamp_handlers.cpp").read_bytes()
    (tmp_path / "desk_lamp_handlers.cpp").write_bytes(handlers)
    return spec


@pytest.fixture(autouse=True)
def _no_secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("wifi_password", "backend-token"):
        monkeypatch.delenv(env_name(name), raising=False)
    for var in (
        "MCPGEN_WIFI_SSID",
        "MCPGEN_WIFI_PASSWORD",
        "MCPGEN_BACKEND_URL",
        "MCPGEN_BACKEND_TOKEN",
        "MCPGEN_TRANSPORT",
    ):
        monkeypatch.delenv(var, raising=False)


def test_env_names() -> None:
    assert env_name("wifi_password") == "MCPGEN_SECRET_WIFI_PASSWORD"
    assert env_name("backend-token") == "MCPGEN_SECRET_BACKEND_TOKEN"


def test_from_the_file_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec_path = spec_with_secrets(tmp_path)
    (tmp_path / "secrets.yaml").write_text(f"wifi_password: '{PASSWORD}'\nbackend-token: from-file\n")
    monkeypatch.setenv("MCPGEN_SECRET_BACKEND_TOKEN", TOKEN)  # the environment wins over the file
    spec = load_spec(spec_path)
    got = {s.key: (s.env, s.value, s.secret) for s in spec.firmware}
    assert got == {
        "wifi_ssid": ("MCPGEN_WIFI_SSID", "home-net", None),
        "wifi_password": ("MCPGEN_WIFI_PASSWORD", PASSWORD, "wifi_password"),
        "backend_url": ("MCPGEN_BACKEND_URL", "wss://backend.example/mcp", None),
        "backend_token": ("MCPGEN_BACKEND_TOKEN", TOKEN, "backend-token"),
    }
    assert PASSWORD not in repr(spec) and TOKEN not in repr(spec.firmware)
    # Firmware settings are not the tool surface: the fingerprint is the spec's without them.
    assert spec.fingerprint == load_spec(LAMP).fingerprint
    assert PASSWORD not in spec.canonical_json()


def test_a_value_written_as_a_number_keeps_its_text(tmp_path: Path) -> None:
    spec_path = spec_with_secrets(tmp_path)
    (tmp_path / "secrets.yaml").write_text("wifi_password: 00123456\nbackend-token: x\n")
    assert {s.key: s.value for s in load_spec(spec_path).firmware}["wifi_password"] == "00123456"


def test_a_missing_secret_is_a_located_error(tmp_path: Path) -> None:
    spec_path = spec_with_secrets(tmp_path)
    (tmp_path / "secrets.yaml").write_text("backend-token: x\n")
    [error] = check_spec(spec_path)
    line = spec_path.read_text().splitlines().index("  wifi_password: !secret wifi_password") + 1
    assert (error.line, error.column, error.path) == (line, 18, "firmware.wifi_password")
    assert error.message == (
        f"secret `wifi_password` not found (looked in the environment variable "
        f"MCPGEN_SECRET_WIFI_PASSWORD and {tmp_path / 'secrets.yaml'})"
    )
    assert "add `wifi_password: ...` to" in error.hint and "export MCPGEN_SECRET_WIFI_PASSWORD=" in error.hint
    # The command line says the same with file:line:col, and fails.
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgen", "check", str(spec_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    assert f"{spec_path}:{line}:18: firmware.wifi_password: secret `wifi_password` not found" in proc.stderr


def test_secret_outside_firmware_and_bad_secrets_file(tmp_path: Path) -> None:
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(LAMP.read_text().replace("name: desk-lamp", "name: !secret device_name", 1))
    [error] = check_spec(spec_path)
    assert error.path == "device.name"
    assert "only allowed for the settings of the `firmware:` section" in error.message
    spec_path = spec_with_secrets(tmp_path)
    (tmp_path / "secrets.yaml").write_text("- just\n- a list\n")
    errors = check_spec(spec_path)
    assert errors and all("expected a mapping of `name: value` lines" in e.message for e in errors)


def test_no_generated_file_holds_a_secret_but_sdkconfig_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.codegen.cli import generate_all
    from mcpgen.codegen.targets.esp32 import generate_project

    spec_path = spec_with_secrets(tmp_path)
    (tmp_path / "secrets.yaml").write_text(f"wifi_password: '{PASSWORD}'\n")
    monkeypatch.setenv("MCPGEN_SECRET_BACKEND_TOKEN", TOKEN)
    out = tmp_path / "out"
    said: list[str] = []
    assert generate_all(spec_path, out / "generated", said.append) is not None
    project = generate_project(spec_path, out / "esp32", log=said.append)
    holders = sorted(
        str(p.relative_to(out))
        for p in out.rglob("*")
        if p.is_file() and (PASSWORD.encode() in p.read_bytes() or TOKEN.encode() in p.read_bytes())
    )
    assert holders == ["esp32/firmware/platformio/sdkconfig.defaults"]
    text = (project / "sdkconfig.defaults").read_text()
    assert f'CONFIG_MCPGEN_WIFI_PASSWORD="{PASSWORD}"' in text
    assert f'CONFIG_MCPGEN_BACKEND_TOKEN="{TOKEN}"' in text
    assert 'CONFIG_MCPGEN_WIFI_SSID="home-net"' in text
    assert any(
        line.startswith("secrets backend-token, wifi_password are written only to ")
        and str(project / "sdkconfig.defaults") in line
        for line in said
    )
    assert not any(PASSWORD in line or TOKEN in line for line in said)


def test_the_environment_overrides_a_firmware_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgen.codegen.targets.esp32 import generate_project

    spec_path = spec_with_secrets(tmp_path)
    (tmp_path / "secrets.yaml").write_text("wifi_password: p\nbackend-token: t\n")
    monkeypatch.setenv("MCPGEN_WIFI_SSID", "other-net")
    project = generate_project(spec_path, tmp_path / "out", log=lambda _: None)
    assert 'CONFIG_MCPGEN_WIFI_SSID="other-net"' in (project / "sdkconfig.defaults").read_text()


def test_codegen_new_gives_gitignore_advice(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgen", "new", "my-robot", "--directory", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"echo secrets.yaml >> {tmp_path / '.gitignore'}" in proc.stdout
    assert "!secret name" in proc.stdout
