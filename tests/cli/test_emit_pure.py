"""``codegen/emit`` is pure: every emitter runs with the user's filesystem unavailable.

The spec sits in a folder with its release history and its handlers file; once the build
context is made (that reads the history), every part is emitted while any file access
outside the package's own templates and firmware sources raises. The user's handlers
file is read and written by ``targets/user_handlers.py``, the release history travels on
the ``BuildContext``, and files are written by ``targets/writer.py``. The ESP32 project
(``emit/esp32.py``) gets what ``targets/esp32.py`` found on the machine (the settings, the
handlers file's place, the MQTT CA certificate's text) as its inputs.
"""

from __future__ import annotations

import ast
import builtins
import io
import os
import pathlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from mcpgen.codegen import resources
from mcpgen.codegen.emit import bundle
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import esp32 as emit_esp32
from mcpgen.codegen.emit import xiaozhi as emit_xiaozhi
from mcpgen.codegen.spec.history import write_release
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.base import BuildContext


class FilesystemUnavailable(AssertionError):
    pass


def _block(monkeypatch: pytest.MonkeyPatch, user_dir: Path, touched: list[str]) -> None:
    """Any look at ``user_dir`` (the spec's folder: spec, history, handlers, CA file, output)
    and any write anywhere raise, and are noted in ``touched``. The package's own templates
    and firmware sources stay readable: they are the emitters' code, not the user's files.
    ``os.stat``/``os.lstat`` are guarded too, so resolving a user's path
    (``Path.resolve``, ``os.path.realpath``) or asking whether it exists is caught."""
    roots = {os.path.realpath(user_dir), os.path.abspath(user_dir)}
    real_open, real_stat, real_iterdir = builtins.open, pathlib.Path.stat, pathlib.Path.iterdir
    real_os = {name: getattr(os, name) for name in ("stat", "lstat", "scandir", "listdir", "open")}

    def check(path: Any, mode: str = "r") -> None:
        # abspath, not realpath: realpath calls os.lstat, which is guarded here
        name = os.path.abspath(os.fsdecode(path)) if not isinstance(path, int) else f"fd {path}"
        inside = any(name == root or name.startswith(root + os.sep) for root in roots)
        if inside or any(c in mode for c in "wax+"):
            touched.append(f"{name} ({mode})")
            raise FilesystemUnavailable(f"emit/ touched {name}")

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        check(file, mode)
        return real_open(file, mode, *args, **kwargs)

    def guarded_stat(self: pathlib.Path, **kwargs: Any) -> os.stat_result:
        check(self)
        return real_stat(self, **kwargs)

    def guarded_iterdir(self: pathlib.Path) -> Any:
        check(self)
        return real_iterdir(self)

    def guarded_os(name: str) -> Any:
        def call(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            flags = args[0] if name == "open" and args else kwargs.get("flags", 0)
            writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
            check(path, "w" if name == "open" and flags & writes else "r")
            return real_os[name](path, *args, **kwargs)

        return call

    def refused(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            touched.append(f"os.{name}{args}")
            raise FilesystemUnavailable(f"emit/ called os.{name}{args}")

        return call

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(pathlib.Path, "stat", guarded_stat)
    monkeypatch.setattr(pathlib.Path, "iterdir", guarded_iterdir)
    for name in real_os:
        monkeypatch.setattr(os, name, guarded_os(name))
    for name in ("mkdir", "makedirs", "remove", "unlink", "rename", "replace", "rmdir", "symlink", "utime"):
        monkeypatch.setattr(os, name, refused(name))


def _emitters() -> set[str]:
    """The modules of ``codegen/emit`` that define ``emit``: every one must be run below."""
    folder = Path(bundle.__file__).parent
    found = set()
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == "emit" for node in tree.body):
            found.add(path.stem)
    return found


def test_every_emitter_runs_with_the_users_filesystem_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec_path = tmp_path / "default_device.yaml"
    shutil.copyfile(resources.example_spec("default_device"), spec_path)
    handlers = "default_device_handlers.cpp"
    shutil.copyfile(resources.toolspec_dir() / handlers, tmp_path / handlers)
    text = spec_path.read_text(encoding="utf-8")
    older = text.replace("version: 1.0.0", "version: 0.9.0", 1)
    older = older.replace("description: ", "description: Old. ", 1)
    old_path = tmp_path / "old" / "default_device.yaml"
    old_path.parent.mkdir()
    old_path.write_text(older, encoding="utf-8")
    write_release(spec_path, load_spec(old_path))
    ctx = BuildContext.load(spec_path, tmp_path / "out")
    assert ctx.releases, "the context carries the history read beside the spec"

    ca = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n"
    (tmp_path / "ca.pem").write_text(ca, encoding="ascii")
    esp32_inputs = emit_esp32.ProjectInputs(  # as targets/esp32.py finds them, before the guard
        spec_file=spec_path.name,
        handlers_from_project=f"../../../{handlers}",
        handlers_from_src=f"../../../../{handlers}",
        settings={
            "MCPGEN_BACKEND_URL": "mqtts://broker:8883",
            "MCPGEN_MQTT_CA_FILE": str(tmp_path / "ca.pem"),
        },
        mqtt_ca_pem=ca,
        mqtt_ca_source="ca.pem",
    )

    touched: list[str] = []
    with monkeypatch.context() as blocked:
        _block(blocked, tmp_path, touched)
        for peek in (  # the guard works
            lambda: (tmp_path / handlers).read_text(encoding="utf-8"),
            lambda: (tmp_path / handlers).resolve(strict=True),
            lambda: os.path.relpath((tmp_path / handlers).resolve(), tmp_path / "out"),
            lambda: (tmp_path / "ca.pem").exists(),
            lambda: (tmp_path / "out").mkdir(),
        ):
            with pytest.raises(FilesystemUnavailable):
                peek()
        touched.clear()
        emitted = {part: ctx.emit(part) for part in bundle.PARTS}
        emitted["esp32"] = emit_esp32.emit(ctx.spec, esp32_inputs, emitted["cpp"])
        shipped = emit_xiaozhi.shipped_sources()  # the drop-in's core and port files
        stubs = emit_cpp.handler_stubs(ctx.spec.tools, spec_path.name)  # --add-missing-handlers
    assert not touched, touched
    assert all(emitted.values())
    assert _emitters() == {"bundle", *emitted}, "run every emitter of codegen/emit here"
    project = emitted["esp32"]
    assert "src/generated/mcp_tools.cpp" in project and "QUJD" in project["src/port/mqtt_ca_pem.h"]
    assert f"../../../../{handlers}" in project["src/handlers.cmake"]
    assert "CONFIG_MCPGEN_TRANSPORT_MQTT=y" in project["sdkconfig.defaults"]
    assert "xiaozhi/mcpgen_xiaozhi_port.cc" in shipped
    assert stubs.count("is not implemented yet") == len(ctx.spec.tools)
    release_modules = [p for p in emitted["python"] if "/_release_" in p and p.endswith(".py")]
    assert release_modules, "the release history reached the bindings through the context"
