"""The builds of the end-to-end helpers are made once per session and spec: tests/e2e,
tests/console, tests/mqtt and tests/device share the simulator and the bindings instead of each
compiling its own; an edited spec is a new build."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import e2e_testlib
import pytest
from e2e_testlib import REPO, build


def test_a_spec_is_built_once_per_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[tuple[str, Path]] = []

    def host(spec: Path, out: Path) -> Path:
        compiled.append(("simulator", out))
        return out / "sim"

    def bindings(spec: Path, out: Path, *, compile: bool) -> types.ModuleType:
        compiled.append(("bindings", out))
        return types.ModuleType("desk_lamp_tools")

    monkeypatch.setattr(e2e_testlib, "host_simulator", host)
    monkeypatch.setattr(e2e_testlib, "bindings_module", bindings)
    monkeypatch.setattr(e2e_testlib, "_BUILT", {})
    spec = tmp_path / "desk_lamp.yaml"
    spec.write_text((REPO / "toolspec" / "desk_lamp.yaml").read_text())

    first = build("lamp", spec, tmp_path / "a")  # tests/e2e's fixture
    again = build("lamp", spec, tmp_path / "b")  # tests/console's, later in the same session
    assert again is first and first.exe == tmp_path / "a" / "sim"
    assert compiled == [("simulator", tmp_path / "a"), ("bindings", tmp_path / "a")]

    spec.write_text(spec.read_text() + "\n# edited\n")
    edited = build("lamp", spec, tmp_path / "c")
    assert edited is not first
    assert compiled[2:] == [("simulator", tmp_path / "c"), ("bindings", tmp_path / "c")]


def test_a_simulator_is_compiled_once_per_session_for_every_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # device_testlib.host_simulator: tests/device, tests/e2e, tests/console and tests/mqtt
    import device_testlib

    from mcpgen.codegen.targets import host

    compiled: list[Path] = []

    def build_host(spec: Path, out: Path, **_: Any) -> Path:
        compiled.append(out)
        return out / "sim"

    monkeypatch.setattr(host, "build_host", build_host)
    monkeypatch.setattr(device_testlib, "_HOST_BUILDS", {})
    spec = tmp_path / "default_device.yaml"
    spec.write_text((REPO / "toolspec" / "default_device.yaml").read_text())
    exe = device_testlib.host_simulator(spec, tmp_path / "device")
    assert device_testlib.host_simulator(spec, tmp_path / "mqtt") == exe == tmp_path / "device" / "sim"
    spec.write_text(spec.read_text() + "\n# edited\n")
    assert device_testlib.host_simulator(spec, tmp_path / "edited") == tmp_path / "edited" / "sim"
    assert compiled == [tmp_path / "device", tmp_path / "edited"]


def test_bindings_are_built_and_imported_once_per_session_and_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # device_testlib.bindings_module: tests/e2e, tests/console and tests/mqtt
    import device_testlib

    from mcpgen.codegen.targets import python

    built: list[tuple[Path, bool]] = []

    def build_bindings(spec: Path, out: Path, *, log: Any, compile: bool) -> Path:
        built.append((out, compile))
        return out / "python"

    monkeypatch.setattr(python, "build_bindings", build_bindings)
    monkeypatch.setattr(python, "import_bindings", lambda pydir, package: types.ModuleType(package))
    monkeypatch.setattr(device_testlib, "_BINDINGS", {})
    spec = tmp_path / "default_device.yaml"
    spec.write_text((REPO / "toolspec" / "default_device.yaml").read_text())
    module = device_testlib.bindings_module(spec, tmp_path / "e2e", compile=True)
    assert module.__name__ == "xiaozhi_sim_tools"
    assert device_testlib.bindings_module(spec, tmp_path / "mqtt", compile=True) is module
    assert device_testlib.bindings_module(spec, tmp_path / "pure", compile=False) is not module
    assert built == [(tmp_path / "e2e", True), (tmp_path / "pure", False)]
