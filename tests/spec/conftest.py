"""Fixtures for the spec loader tests: write a dedented YAML spec and check it."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpgen.codegen.spec.loader import check_spec
from mcpgen.codegen.spec.spec_errors import SpecError


def dedent(text: str) -> str:
    """Dedent and drop the first newline, so line 1 is the first line of the text."""
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def write_spec(tmp_path: Path) -> Callable[..., Path]:
    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def errors_of(write_spec: Callable[..., Path]) -> Callable[[str], list[SpecError]]:
    def run(text: str) -> list[SpecError]:
        return check_spec(write_spec(text))

    return run


@pytest.fixture
def one_error(errors_of: Callable[[str], list[SpecError]]) -> Callable[[str], SpecError]:
    """The single error of a spec (fails the test if there are none or several)."""

    def run(text: str) -> SpecError:
        errors = errors_of(text)
        assert len(errors) == 1, "\n".join(e.format() for e in errors) or "no errors"
        return errors[0]

    return run
