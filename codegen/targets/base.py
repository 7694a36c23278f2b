"""The ``Target`` interface and the one path every build takes: load once, emit, write, compile.

A front door (``codegen build``/``run``/``flash``, or a ``build_*`` function called by a
test or a benchmark) loads and checks the spec once into a :class:`BuildContext`, and
everything below takes that context: the model, never a path to load again. Every
generated file comes from :mod:`mcpgen.codegen.emit.bundle`, through
:meth:`BuildContext.generate`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from mcpgen.codegen.emit import bundle
from mcpgen.codegen.emit.writer import write_tree
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.log import Log
from mcpgen.codegen.spec.loader import SpecErrors, load_spec
from mcpgen.codegen.spec.model import Spec


@dataclass(frozen=True)
class BuildOptions:
    """What ``codegen build`` passes to every target; each target reads what concerns it."""

    log: Log = print
    verbose: bool = False
    quiet: bool = False
    compile_bindings: bool = True  # host, python: compile the bindings with Cython
    run_pio: bool = True  # esp32 boards: run PlatformIO after writing the project


# What a build says before an emitter's refusal (a ``ValueError``), by part.
_REFUSAL = {"python": "cannot generate Python bindings: ", "xiaozhi": "cannot build for the xiaozhi target: "}


@dataclass(frozen=True)
class BuildContext:
    """One build: the loaded model, the file it came from, where the build goes, and how.

    Made once by a front door and handed down unchanged; ``spec_path`` is kept because the
    handlers file sits beside the spec and messages name it, never to load it again.
    """

    spec: Spec
    spec_path: Path
    outdir: Path
    options: BuildOptions = BuildOptions()

    @classmethod
    def load(cls, spec_path: Path, outdir: Path, options: Optional[BuildOptions] = None) -> BuildContext:
        """Loads and checks the spec at ``spec_path``. An invalid or unreadable spec raises
        :class:`BuildError` naming the file and listing every problem with its position."""
        spec_path = Path(spec_path)
        try:
            spec = load_spec(spec_path)
        except SpecErrors as exc:
            raise BuildError(f"{spec_path}: {exc}") from exc
        return cls(spec, spec_path, Path(outdir), options or BuildOptions())

    @property
    def log(self) -> Log:
        return self.options.log

    def resolved(self) -> BuildContext:
        """The same build with absolute paths (for builds that run tools in other directories)."""
        return replace(self, spec_path=self.spec_path.resolve(), outdir=self.outdir.resolve())

    def with_log(self, log: Log) -> BuildContext:
        """The same build reporting to ``log``."""
        return replace(self, options=replace(self.options, log=log))

    def emit(self, part: str) -> dict[str, str]:
        """Every file of one part of the output (``bundle.PARTS``), not written.

        An emitter refuses what its target cannot express with ``ValueError``; that becomes
        a :class:`BuildError` naming the spec.
        """
        try:
            return bundle.emit(self.spec, part)
        except ValueError as exc:
            raise BuildError(f"{self.spec_path}: {_REFUSAL.get(part, '')}{exc}") from exc

    def generate(self, part: str) -> tuple[dict[str, str], list[Path]]:
        """Emits one part and writes it under ``outdir`` (only the changed files); returns the
        emitted files and the paths written."""
        files = self.emit(part)
        return files, write_tree(self.outdir, files)


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

    def build(self, ctx: BuildContext) -> list[Built]:
        """Generates and compiles; returns what was made. Raises BuildError on failure."""
        raise NotImplementedError
