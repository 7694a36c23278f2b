"""Load a YAML tool spec: parse with positions, validate everything, build the model.

``load_spec(path)`` returns the immutable ``codegen.spec.model.Spec`` or raises ``SpecErrors``
listing every problem of the file; ``check_spec(path)`` returns that list instead
(empty when the spec is valid). The format is documented in ``toolspec/README.md``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.rules import SpecChecker
from mcpgen.codegen.spec.spec_errors import SpecError, SpecErrors, excerpt
from mcpgen.codegen.spec.yaml_source import YamlSyntaxError, compose

__all__ = ["SpecError", "SpecErrors", "check_and_load", "check_spec", "load_spec", "load_spec_text"]


def _check(text: str, source: str) -> tuple[Spec | None, list[SpecError]]:
    try:
        root = compose(text)
    except YamlSyntaxError as e:
        shown = excerpt(text, e.line, e.column)
        return None, [SpecError(source, e.line, e.column, "", e.message, e.hint, shown)]
    checker = SpecChecker(source)
    spec = checker.check(root)
    errors = sorted((_with_excerpt(e, text) for e in checker.errors), key=lambda e: (e.line, e.column))
    return (spec if not errors else None), errors


def _with_excerpt(error: SpecError, text: str) -> SpecError:
    """Every error with a position shows the source lines around it, a caret under the column."""
    if error.excerpt or error.line <= 0:
        return error
    return replace(error, excerpt=excerpt(text, error.line, error.column))


def _read(path: str | Path) -> tuple[str | None, list[SpecError]]:
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return None, [SpecError(source, 0, 0, "", f"cannot read the spec: {e.strerror or e}")]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        # The bytes before the bad one decode; columns count characters, as editors do.
        column = len(data[line_start : e.start].decode("utf-8", "replace")) + 1
        shown = excerpt(data.decode("utf-8", "replace"), line, column)
        return None, [
            SpecError(
                source, line, column, "", "the spec is not valid UTF-8", "save the file as UTF-8", shown
            )
        ]


def load_spec_text(text: str, source: str = "<memory>") -> Spec:
    """Like ``load_spec`` for YAML already in memory; ``source`` names it in errors."""
    spec, errors = _check(text, source)
    if errors or spec is None:
        raise SpecErrors(errors)
    return spec


def check_spec(path: str | Path) -> list[SpecError]:
    """Every problem of the spec at ``path``, sorted by position; empty when it is valid."""
    return check_and_load(path)[1]


def check_and_load(path: str | Path) -> tuple[Spec | None, list[SpecError]]:
    """The model and every problem of the spec at ``path`` from one parse: ``(spec, [])``
    when it is valid, ``(None, errors)`` otherwise."""
    text, errors = _read(path)
    if text is None:
        return None, errors
    return _check(text, str(path))


def load_spec(path: str | Path) -> Spec:
    """The validated model of the spec at ``path``; raises ``SpecErrors`` when it is invalid.

    ``Spec.source`` and every error's ``file`` are ``str(path)``, the path as given.
    """
    text, errors = _read(path)
    if text is None:
        raise SpecErrors(errors)
    return load_spec_text(text, str(path))
