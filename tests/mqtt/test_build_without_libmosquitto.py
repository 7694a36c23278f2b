"""Without libmosquitto-dev the host simulator still builds; --mqtt then names the package."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcpgen.codegen.resources import example_spec
from mcpgen.codegen.targets import host as build_host


def test_probe_finds_the_installed_header() -> None:
    assert build_host.mqtt_available()  # conftest skips this directory without it
    assert not build_host.mqtt_available(cxx="/bin/false")


def test_build_without_mqtt_works_and_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_host, "mqtt_available", lambda cxx="g++": False)
    lines: list[str] = []
    exe = build_host.build_host(example_spec("default_device"), tmp_path / "b", log=lines.append)
    assert "libmosquitto-dev not found: building without --mqtt (apt-get install libmosquitto-dev)" in lines
    libs = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "libmosquitto" not in libs
    # stdio still works ...
    out = subprocess.run(
        [str(exe), "--stdio"],
        input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert '"id":1' in out.stdout and '"result":{}' in out.stdout
    # ... and --mqtt fails with one line naming the package.
    proc = subprocess.run(
        [str(exe), "--mqtt", "127.0.0.1:1", "--device-id", "x"], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 2
    assert "built without MQTT support: install libmosquitto-dev" in proc.stderr
