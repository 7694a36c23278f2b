"""``codegen/emit`` is pure: every emitter runs with the user's filesystem unavailable.

The spec sits in a folder with its release history and its handlers file; once the build
context is made (that reads the history), every part is emitted while any file access
outside the package's own templates and firmware sources raises. The user's handlers
file is read and written by ``targets/user_handlers.py``, the release history travels on
the ``BuildContext``, and files are written by ``targets/writer.py``.
"""

from __future__ import annotations

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
from mcpgen.codegen.spec.history import write_release
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.base import BuildContext


class FilesystemUnavailable(AssertionError):
    pass


def _block(monkeypatch: pytest.MonkeyPatch, user_dir: Path, touched: list[str]) -> None:
    """Any look at ``user_dir`` (the spec's folder: spec, history, handlers, output) and any
    write anywhere raise, and are noted in ``touched``. The package's own templates and
    firmware sources stay readable: they are the emitters' code, not the user's files."""
    root = os.path.realpath(user_dir)
    real_open, real_stat, real_iterdir = builtins.open, pathlib.Path.stat, pathlib.Path.iterdir

    def check(path: Any, mode: str = "r") -> None:
        name = os.path.realpath(os.fsdecode(path)) if not isinstance(path, int) else f"fd {path}"
        if name == root or name.startswith(root + os.sep) or any(c in mode for c in "wax+"):
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

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(pathlib.Path, "stat", guarded_stat)
    monkeypatch.setattr(pathlib.Path, "iterdir", guarded_iterdir)


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

    touched: list[str] = []
    with monkeypatch.context() as blocked:
        _block(blocked, tmp_path, touched)
        with pytest.raises(FilesystemUnavailable):  # the guard works
            (tmp_path / handlers).read_text(encoding="utf-8")
        touched.clear()
        emitted = {part: ctx.emit(part) for part in bundle.PARTS}
    assert not touched, touched
    assert all(emitted.values())
    release_modules = [p for p in emitted["python"] if "/_release_" in p and p.endswith(".py")]
    assert release_modules, "the release history reached the bindings through the context"
