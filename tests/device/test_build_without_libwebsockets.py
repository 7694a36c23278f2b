"""Without libwebsockets-dev the host simulator still builds; --ws then names the package."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcpgen.codegen.resources import example_spec
from mcpgen.codegen.targets import host as build_host


def test_probe_finds_libwebsockets() -> None:
    assert build_host.ws_available()  # scripts/dev.sh installs libwebsockets-dev
    assert not build_host.ws_available(cxx="/bin/false")


def test_build_without_libwebsockets_works_and_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_host, "ws_available", lambda cxx="g++": False)
    lines: list[str] = []
    exe = build_host.build_host(example_spec("default_device"), tmp_path / "b", log=lines.append)
    assert "libwebsockets-dev not found: building without --ws (apt-get install libwebsockets-dev)" in lines
    libs = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "libwebsockets" not in libs
    out = subprocess.run(
        [str(exe), "--stdio"],
        input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert '"id":1' in out.stdout and '"result":{}' in out.stdout
    proc = subprocess.run([str(exe), "--ws", "ws://127.0.0.1:1/"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "install libwebsockets-dev (apt-get install libwebsockets-dev)" in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one line
    assert proc.stderr.startswith("error: --ws: this simulator was built without WebSocket support")
    # with OTA options too: refused at once, before the OTA supervisor starts anything
    proc = subprocess.run(
        [str(exe), "--ws", "ws://127.0.0.1:1/", "--ota-dir", str(tmp_path / "ota")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "ota").exists()


def test_the_end_of_the_build_says_which_transport_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_host, "ws_available", lambda cxx="g++": False)
    note = build_host.missing_transports()
    assert note.startswith("no --ws: libwebsockets-dev was not found; apt-get install libwebsockets-dev")
    line = build_host.Built("simulator", Path("sim"), note).format()
    assert line == f"simulator: sim ({note})"
    monkeypatch.setattr(build_host, "ws_available", lambda cxx="g++": True)
    assert build_host.missing_transports() == ""
