"""A spec's released versions, recorded beside it and committed by the user.

``toolspec/desk_lamp.yaml`` keeps its releases in ``toolspec/desk_lamp.history/``, one JSON
file per release named after ``device.version`` (``0.3.1.json``): the normalized spec
(``Spec.canonical()``) and its fingerprint, sorted keys, two-space indent. A release adds
one small file, so a review sees exactly what was released; nothing else changes.

``load_history`` checks every file (JSON syntax, shape, the device, the fingerprint against
the spec it records) and reports each problem as a ``SpecError`` at its line in that file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.canonical import CanonicalError, spec_from_canonical
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.spec_errors import SpecError, excerpt

FORMAT = "mcpgen-release/1"
HISTORY_SUFFIX = ".history"


@dataclass(frozen=True)
class Release:
    """One released version: ``spec`` is rebuilt from the file and hashes to ``fingerprint``."""

    version: str
    fingerprint: str
    spec: Spec
    file: str


class HistoryErrors(Exception):
    """The history could not be read; ``errors`` locate every problem."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = errors
        super().__init__("\n".join(e.format() for e in errors))


def history_dir(spec_path: str | Path) -> Path:
    """``toolspec/desk_lamp.history`` for ``toolspec/desk_lamp.yaml``."""
    p = Path(spec_path)
    return p.with_name(p.stem + HISTORY_SUFFIX)


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    """Sort key of a version: numeric parts as numbers (``0.10.0`` after ``0.9.2``)."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"[.\-+]", version))


def major(version: str) -> int:
    """The leading number of ``version`` (0 when it has none)."""
    m = re.match(r"\d+", version)
    return int(m.group(0)) if m else 0


def release_text(spec: Spec) -> str:
    """The content of a release file: deterministic, one key per line, ends with a newline."""
    doc = {
        "format": FORMAT,
        "device": spec.device.name,
        "version": spec.device.version,
        "fingerprint": spec.fingerprint,
        "spec": spec.canonical(),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_history(spec_path: str | Path, device: str | None = None) -> list[Release]:
    """The releases of the spec at ``spec_path``, oldest first; [] without a history folder.

    ``device`` (the spec's ``device.name``) must match every release: a history copied from
    another device is an error, not a silent pass. Raises ``HistoryErrors``.
    """
    folder = history_dir(spec_path)
    if not folder.is_dir():
        return []
    releases: list[Release] = []
    errors: list[SpecError] = []
    for path in sorted(folder.glob("*.json")):
        try:
            releases.append(load_release(path, device))
        except HistoryErrors as exc:
            errors.extend(exc.errors)
    if errors:
        raise HistoryErrors(errors)
    return sorted(releases, key=lambda r: version_key(r.version))


def load_release(path: str | Path, device: str | None = None) -> Release:
    """One release file, checked; raises ``HistoryErrors`` with the located problem."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise HistoryErrors([SpecError(file, 0, 0, "", f"cannot read the release file: {e}")]) from None

    def fail(key: str, message: str, hint: str) -> HistoryErrors:
        line, column = _key_pos(text, key)
        return HistoryErrors([SpecError(file, line, column, key, message, hint, excerpt(text, line, column))])

    try:
        doc: Any = json.loads(text)
    except json.JSONDecodeError as e:
        return _raise(
            HistoryErrors(
                [
                    SpecError(
                        file,
                        e.lineno,
                        e.colno,
                        "",
                        f"the release file is not valid JSON: {e.msg}",
                        "restore it from version control (git checkout -- FILE); "
                        "release files are written by `codegen release`, not by hand",
                        excerpt(text, e.lineno, e.colno),
                    )
                ]
            )
        )
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise fail(
            "format",
            f'not a release file (expected "format": "{FORMAT}")',
            "release files are written by `codegen release SPEC`; restore this one from version control",
        )
    for key in ("device", "version", "fingerprint"):
        if not isinstance(doc.get(key), str):
            raise fail(key, f"`{key}` must be a string", "restore the file from version control")
    if device is not None and doc["device"] != device:
        raise fail(
            "device",
            f"this release is of device {doc['device']!r}, not {device!r}",
            "the history folder belongs to another spec: move it beside that spec, "
            "or delete it to start this spec's history",
        )
    try:
        spec = spec_from_canonical(doc.get("spec"), file)
    except CanonicalError as e:
        raise fail(
            "spec", f"the recorded spec is damaged: {e}", "restore the file from version control"
        ) from None
    if spec.fingerprint != doc["fingerprint"]:
        raise fail(
            "fingerprint",
            f"the recorded spec hashes to {spec.fingerprint}, not the recorded "
            f"{doc['fingerprint']}: the file was edited",
            "restore the file from version control",
        )
    if spec.device.version != doc["version"] or Path(path).stem != doc["version"]:
        raise fail(
            "version",
            f"version {doc['version']!r} does not match the file name or the recorded spec",
            f"the file of version {doc['version']} is named {doc['version']}.json",
        )
    return Release(doc["version"], doc["fingerprint"], spec, file)


def _raise(exc: HistoryErrors) -> Release:
    raise exc


def _key_pos(text: str, key: str) -> tuple[int, int]:
    """Line and column of the top-level ``"key":`` in a release file (1:1 if absent)."""
    m = re.search(r'^  "' + re.escape(key) + r'"\s*:', text, re.M)
    if m is None:
        return 1, 1
    line = text.count("\n", 0, m.start()) + 1
    return line, 3


def write_release(spec_path: str | Path, spec: Spec) -> Path:
    """Writes ``spec``'s release file (atomically: a crash leaves no half file)."""
    folder = history_dir(spec_path)
    folder.mkdir(exist_ok=True)
    target = folder / f"{spec.device.version}.json"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".release-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(release_text(spec))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


__all__ = [
    "FORMAT",
    "HistoryErrors",
    "Release",
    "history_dir",
    "load_history",
    "load_release",
    "major",
    "release_text",
    "version_key",
    "write_release",
]


def releases_of(spec: Spec) -> list[Release]:
    """The releases recorded beside ``spec``'s file (``codegen release``); [] without a
    history or a file. Raises BuildError with the located problems when the history is
    damaged. Read once per build, into ``BuildContext.releases``: emitters never read it."""
    if not spec.source:
        return []
    try:
        return load_history(spec.source, spec.device.name)
    except HistoryErrors as exc:
        raise BuildError(f"the spec's release history is damaged:\n{exc}") from None
