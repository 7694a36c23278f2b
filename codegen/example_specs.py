"""``codegen examples``: copies the example specs that ship in the package to a folder.

A pip user has no checkout: the examples the docs use (``toolspec/desk_lamp.yaml``...)
live inside the installed package. Copying them out gives a spec to edit, its handlers
file beside it (where ``codegen build`` looks for it) and the editor schema that the
spec's ``$schema`` line names (``./toolspec.schema.json``), so nothing the user edits
points into a virtual environment.
"""

from __future__ import annotations

import filecmp
import shutil
from collections.abc import Callable
from pathlib import Path

from mcpgen.codegen import resources
from mcpgen.codegen.errors import BuildError

SCHEMA_NAME = "toolspec.schema.json"


def names() -> list[str]:
    """The examples' names (spec file stems), e.g. ``default_device``, ``desk_lamp``."""
    return sorted(p.stem for p in resources.toolspec_dir().glob("*.yaml"))


def files_of(name: str) -> list[Path]:
    """The packaged files of example ``name``: its spec, its handlers and the schema."""
    if name not in names():
        raise BuildError(
            f"no example named {name!r}; the examples are: {', '.join(names())} "
            "(e.g. codegen examples desk_lamp)"
        )
    folder = resources.toolspec_dir()
    found = [folder / f"{name}.yaml", folder / f"{name}_handlers.cpp", resources.spec_schema()]
    return [p for p in found if p.is_file()]


def place_schema(directory: Path) -> Path:
    """Copies the editor schema into ``directory`` (unless the same file is there) and returns it."""
    dest = directory / SCHEMA_NAME
    source = resources.spec_schema()
    if not (dest.is_file() and filecmp.cmp(source, dest, shallow=False)):
        directory.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)  # a newer mcpgen's schema replaces an older copy
    return dest


def copy_examples(wanted: list[str], directory: Path, log: Callable[[str], None]) -> list[Path]:
    """Copies each example in ``wanted`` (all when empty) into ``directory``; returns the specs.

    A spec or handlers file that exists there with other content is kept (it may hold the
    user's edits): that is an error naming the file, before anything is written.
    """
    chosen = wanted or names()
    files = [f for name in chosen for f in files_of(name) if f.name != SCHEMA_NAME]
    clashes = [
        directory / f.name
        for f in files
        if (directory / f.name).exists() and not filecmp.cmp(f, directory / f.name, shallow=False)
    ]
    if clashes:
        raise BuildError(
            f"{clashes[0]} exists and differs from the example; keep your edits and "
            f"copy elsewhere with -o DIR (e.g. -o examples)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copyfile(f, directory / f.name)
        log(f"wrote {directory / f.name}")
    place_schema(directory)
    return [directory / f"{name}.yaml" for name in chosen]
