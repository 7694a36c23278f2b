"""The ``Target`` interface and the one path every build takes: load, emit, write.

A target turns the spec model into something that runs. ``codegen build`` and ``codegen
run`` load the spec once and hand the model to the target; the build drivers still
accept a spec path for callers that have none loaded (tests, benchmarks), and then load
it through :func:`load_for_build` so every driver reports a bad spec the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from mcpgen.codegen.emit.writer import write_tree
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.loader import SpecErrors, load_spec
from mcpgen.codegen.spec.model import Spec

Log = Callable[[str], None]


def load_for_build(spec_path: Path, spec: Optional[Spec] = None) -> Spec:
    """``spec`` when the caller already loaded it, else the spec at ``spec_path``.

    An invalid or unreadable spec raises :class:`BuildError` naming the file and listing
    every problem with its position.
    """
    if spec is not None:
        return spec
    try:
        return load_spec(spec_path)
    except SpecErrors as exc:
        raise BuildError(f"{spec_path}: {exc}") from exc


def emit_and_write(
    spec_path: Path,
    outdir: Path,
    emit: Callable[[Spec], dict[str, str]],
    spec: Spec,
    *,
    what: str = "",
) -> tuple[dict[str, str], list[Path]]:
    """Runs one emitter and writes its files under ``outdir`` (only the changed ones).

    An emitter refuses what its target cannot express with ``ValueError``; that becomes
    a :class:`BuildError` naming the spec (and ``what`` was being generated, if given).
    Returns the emitted files and the paths written.
    """
    try:
        files = emit(spec)
    except ValueError as exc:
        doing = f"cannot generate {what}: " if what else ""
        raise BuildError(f"{spec_path}: {doing}{exc}") from exc
    return files, write_tree(outdir, files)


@dataclass(frozen=True)
class BuildOptions:
    """What ``codegen build`` passes to every target; each target reads what concerns it."""

    log: Log = print
    verbose: bool = False
    quiet: bool = False
    compile_bindings: bool = True  # host, python: compile the bindings with Cython
    run_pio: bool = True  # esp32 boards: run PlatformIO after writing the project
    extra: Mapping[str, Any] = field(default_factory=dict)  # target-specific options


@dataclass(frozen=True)
class Built:
    """One line of a build's result: what was made (``simulator``) and where."""

    label: str
    path: Path
    note: str = ""

    def format(self) -> str:
        return f"{self.label}: {self.path}{f' ({self.note})' if self.note else ''}"


class Target:
    """One thing ``codegen build --target NAME`` makes. Subclasses set ``name`` and
    ``summary`` and implement :meth:`build`. Booting a built target (``codegen run``) is
    ``run/``'s job (``run.console.RUNNERS``): targets only build.

    Adding a target: one module with a subclass, one entry in ``targets.registry``.
    """

    name: str = ""
    summary: str = ""  # one line for ``codegen build --help``

    def build(self, spec: Spec, spec_path: Path, outdir: Path, options: BuildOptions) -> list[Built]:
        """Generates and compiles; returns what was made. Raises BuildError on failure."""
        raise NotImplementedError
