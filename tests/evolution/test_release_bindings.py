"""The bindings of a spec with a history: one module per older release, picked by the
device's fingerprint (runtime.session.compat), each with its own checks, result kinds and events;
the .pyi stays the newest version's surface."""

from __future__ import annotations

import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcpgen.codegen.emit import python as emit_python
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.history import load_history, write_release
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.base import BuildContext
from mcpgen.codegen.targets.python import build_bindings, import_bindings
from mcpgen.runtime import NotSupported, ValidationError
from mcpgen.runtime.core import codec
from mcpgen.runtime.session.compat import accepted, compatibility

V1 = """\
device: {name: evo-dev, version: 1.2.0}
resources:
  info:
    description: The device's info.
    mime_type: text/plain
    content: text
    uri: evo://info
events:
  ping:
    description: Ping.
    params:
      n: {type: integer, min: 0, max: 5}
tools:
  - name: self.level.set
    description: Set the level.
    params:
      level: {type: integer, min: 0, max: 10}
    returns: integer
  - name: status
    description: The status.
    returns: integer
"""

# 2.0.0: a major release may break: `status` returns a string now; plus a new event, a new
# root-level tool, a new optional parameter, a wider range and a new resource.
V2 = """\
device: {name: evo-dev, version: 2.0.0}
resources:
  info:
    description: The device's info.
    mime_type: text/plain
    content: text
    uri: evo://info
  status:
    description: The device's status.
    mime_type: text/plain
    content: text
    uri: evo://status
    subscribe: true
events:
  ping:
    description: Ping.
    params:
      n: {type: integer, min: 0, max: 5}
  pong:
    description: Pong.
tools:
  - name: self.level.set
    description: Set the level.
    params:
      level: {type: integer, min: 0, max: 20}
      ramp: {type: boolean, default: false}
    returns: integer
  - name: status
    description: The status.
    returns: string
  - name: reboot
    description: Reboot.
    returns: boolean
"""


class FakeDevice:
    """Records what the bindings would send; answers every call with ``reply``."""

    device_id = "evo-1"

    def __init__(self, fingerprint: str, reply: Any = 1, server_info: Any = None) -> None:
        self.fingerprint = fingerprint
        self.reply = reply
        self.server_info = server_info or {}
        self.calls: list[tuple[str, dict, int]] = []
        self.requests: list[tuple[str, dict]] = []
        self.kinds: dict[str, str] = {}

    async def request(self, method: str, params: dict, timeout: Any = None) -> Any:
        self.requests.append((method, params))
        return {"contents": [{"uri": params.get("uri"), "text": "txt"}]}

    def set_return_kinds(self, kinds: dict[str, str]) -> None:
        self.kinds.update(kinds)

    async def invoke(self, name: str, arguments: dict, kind: int, timeout: Any = None) -> Any:
        self.calls.append((name, arguments, kind))
        return self.reply

    def on_event(self, callback: Any) -> Any:
        return lambda: None

    def on_close(self, callback: Any) -> None:
        pass

    closed = False


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, str, str]:
    tmp = tmp_path_factory.mktemp("evo")
    spec_path = tmp / "evo_dev.yaml"
    spec_path.write_text(V1, encoding="utf-8")
    v1 = load_spec(spec_path)
    write_release(spec_path, v1)
    spec_path.write_text(V2, encoding="utf-8")
    v2 = load_spec(spec_path)
    pydir = build_bindings(spec_path, tmp / "out", log=lambda _m: None, compile=False)
    return import_bindings(pydir, "evo_dev_tools"), v1.fingerprint, v2.fingerprint


async def test_an_older_device_gets_its_own_checks_kinds_and_events(
    built: tuple[ModuleType, str, str],
) -> None:
    mod, fp1, fp2 = built
    assert mod.RELEASES == {fp1: "1.2.0", fp2: "2.0.0"}
    old = FakeDevice(fp1)
    dev = mod.EvoDev(old)
    assert dev.version == "1.2.0"
    assert await dev.level.set(level=10) == 1
    with pytest.raises(ValidationError):
        await dev.level.set(level=15)  # v1's range, not v2's
    await dev.status()
    assert old.calls[-1] == ("status", {}, codec.KIND_INTEGER)  # v1's return kind
    assert old.kinds["status"] == "integer"
    n = len(old.calls)
    with pytest.raises(NotSupported, match="ramp"):
        await dev.level.set(level=1, ramp=True)
    with pytest.raises(NotSupported, match="reboot"):
        await dev.reboot()  # a root-level tool only v2 has
    with pytest.raises(NotSupported, match="pong"):
        dev.events.pong()
    with pytest.raises(NotSupported, match="pong"):
        dev.on_pong(print)
    assert callable(dev.on_ping(print))
    assert len(old.calls) == n  # nothing sent
    assert dev.events.ping() is not None
    assert not dev.supports("reboot") and dev.supports("status")
    assert not dev.supports("self.level.set", "ramp")

    new = FakeDevice(fp2, reply="ok")
    dev2 = mod.EvoDev(new)
    assert dev2.version == "2.0.0"
    assert await dev2.level.set(level=15, ramp=True) == "ok"
    assert new.calls[-1] == ("self.level.set", {"level": 15, "ramp": True}, codec.KIND_INTEGER)
    await dev2.status()
    assert new.calls[-1][2] == codec.KIND_STRING
    assert await dev2.reboot() == "ok" and dev2.supports("self.level.set", "ramp")


async def test_every_release_has_the_resources_the_stubs_declare(built: tuple[ModuleType, str, str]) -> None:
    mod, fp1, fp2 = built
    old = FakeDevice(fp1)
    dev = mod.EvoDev(old)
    assert await dev.resources.info.read() == "txt"  # a resource 1.2.0 serves
    assert old.requests == [("resources/read", {"uri": "evo://info"})]
    with pytest.raises(NotSupported, match="status"):
        await dev.resources.status.read()  # only 2.0.0 serves it: nothing sent
    with pytest.raises(NotSupported, match="status"):
        dev.resources.status.updates()
    assert len(old.requests) == 1
    new = FakeDevice(fp2)
    assert await mod.EvoDev(new).resources.status.read() == "txt"
    assert new.requests == [("resources/read", {"uri": "evo://status"})]


async def test_a_release_without_resources_still_has_the_attribute(tmp_path: Path) -> None:
    spec_path = tmp_path / "evo_dev.yaml"
    bare = V1.replace(
        "resources:\n  info:\n    description: The device's info.\n    mime_type: text/plain\n"
        "    content: text\n    uri: evo://info\n",
        "",
    )
    assert "resources" not in bare
    spec_path.write_text(bare, encoding="utf-8")
    v1 = load_spec(spec_path)
    write_release(spec_path, v1)
    spec_path.write_text(V2, encoding="utf-8")
    pydir = build_bindings(spec_path, tmp_path / "out", log=lambda _m: None, compile=False)
    mod = import_bindings(pydir, "evo_dev_tools")
    dev = mod.EvoDev(FakeDevice(v1.fingerprint))
    assert dev.version == "1.2.0"
    with pytest.raises(NotSupported, match="info"):
        await dev.resources.info.read()


def test_unknown_fingerprints_follow_the_policy(
    built: tuple[ModuleType, str, str], caplog: pytest.LogCaptureFixture
) -> None:
    mod, fp1, _fp2 = built
    with caplog.at_level(logging.WARNING):
        info = {"name": "evo-dev", "version": "2.1.0-dev"}
        dev = mod.EvoDev(FakeDevice("ffffffffffffffff", server_info=info))
    # reported as what it is, never as the newest release it does not run
    assert dev.version == "2.1.0-dev" and "ffffffffffffffff" in caplog.text
    assert "not a released one" in caplog.text and "'2.1.0-dev'" in caplog.text
    assert "NOT by the device's own schemas" in caplog.text and "version 2.0.0's ranges" in caplog.text
    assert "(device.call() validates against the schemas the device reported)" in caplog.text
    assert mod.EvoDev(FakeDevice("eeeeeeeeeeeeeeee"), policy="warn").version == "unknown"
    assert mod.EvoDev(FakeDevice(fp1), policy="off").version == "2.0.0"


def test_the_stubs_are_the_newest_surface_and_output_is_deterministic(tmp_path: Path) -> None:
    spec_path = tmp_path / "evo_dev.yaml"
    spec_path.write_text(V1, encoding="utf-8")
    write_release(spec_path, load_spec(spec_path))
    spec_path.write_text(V2, encoding="utf-8")
    spec = load_spec(spec_path)
    releases = load_history(spec_path, "evo-dev")
    files = emit_python.emit(spec, releases)
    assert files == emit_python.emit(spec, releases)
    # the build reads the history once, beside the spec; the emitter only gets it
    assert BuildContext.load(spec_path, tmp_path / "out").emit("python") == files
    assert "# Released version 1.2.0 (fingerprint " in files["python/evo_dev_tools/_release_1_2_0.py"]
    alone = emit_python.emit(spec, [])
    pyi = "python/evo_dev_tools/_bindings.pyi"
    assert files[pyi] == alone[pyi]
    assert "def reboot(self) -> Awaitable[str]" not in files[pyi] and "def reboot(self)" in files[pyi]


def test_compatibility_of_a_fingerprint() -> None:
    releases = {"aa": "1.0.0", "bb": "1.1.0"}
    assert compatibility(releases, "aa").version == "1.0.0" and compatibility(releases, "aa").compatible
    assert not compatibility(releases, "cc").compatible and not compatibility(releases, None).compatible
    assert accepted(releases) == {"aa", "bb"} and accepted("aa") == {"aa"} and accepted(None) == frozenset()


def test_a_damaged_history_stops_generation_with_its_location(tmp_path: Path) -> None:
    spec_path = tmp_path / "evo_dev.yaml"
    spec_path.write_text(V1, encoding="utf-8")
    write_release(spec_path, load_spec(spec_path))
    (tmp_path / "evo_dev.history" / "1.2.0.json").write_text("{\n  oops\n", encoding="utf-8")
    with pytest.raises(BuildError, match=r"1\.2\.0\.json:2:3: the release file is not valid JSON"):
        BuildContext.load(spec_path, tmp_path / "out")
