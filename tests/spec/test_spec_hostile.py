"""Hostile spec input (issue 40): deep nesting, 5000-digit integers and NUL bytes each end in
a located error (file, line, column, field, what was expected), never in "unexpected
error ... please report it"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.codegen.spec.loader import check_spec
from mcpgen.codegen.spec.yaml_source import MAX_INTEGER_DIGITS, MAX_NESTING

HEAD = 'device: {name: t, version: "1"}\ntools:\n  - name: self.a\n    description: d\n'


def errors_in(tmp_path: Path, text: str | bytes) -> list:
    path = tmp_path / "hostile.yaml"
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return check_spec(path)


def codegen_check(tmp_path: Path, text: str | bytes) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "hostile.yaml"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return subprocess.run(
        [sys.executable, "-m", "mcpgen.codegen.cli", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("opening", ["[", "{a: "], ids=["lists", "mappings"])
def test_deep_flow_nesting_is_a_located_error(tmp_path: Path, opening: str) -> None:
    text = HEAD + "    params:\n      x: {type: integer, default: " + opening * 10_000 + "\n"
    errors = errors_in(tmp_path, text)
    assert len(errors) == 1, [e.format() for e in errors]
    e = errors[0]
    assert e.file.endswith("hostile.yaml") and e.line == 6
    assert f"nested more than {MAX_NESTING} levels" in e.message
    assert e.hint


def test_deep_block_nesting_is_a_located_error(tmp_path: Path) -> None:
    lines = [HEAD.rstrip("\n"), "    returns:"]
    for depth in range(400):
        lines.append("  " * (depth + 3) + "k:")
    errors = errors_in(tmp_path, "\n".join(lines) + " 1\n")
    assert len(errors) == 1 and "nested more than" in errors[0].message, [e.format() for e in errors]
    assert errors[0].line > 6


def test_nesting_a_real_spec_needs_still_loads(tmp_path: Path) -> None:
    """32 levels of result objects (the model's own limit) take about 64 YAML levels."""
    body = "type: integer"
    for depth in range(31):
        body = f"type: object\nproperties:\n  f{depth}:\n" + "\n".join(
            "    " + line for line in body.splitlines()
        )
    returns = "\n".join("      " + line for line in body.splitlines())
    errors = errors_in(tmp_path, HEAD + "    returns:\n" + returns + "\n")
    assert not any("nested" in e.message for e in errors), [e.format() for e in errors]


@pytest.mark.parametrize("literal", ["9" * 5000, "-" + "1" * 5000, "0x" + "f" * 5000, "0o" + "7" * 5000])
def test_an_integer_of_thousands_of_digits_is_a_located_error(tmp_path: Path, literal: str) -> None:
    text = HEAD + "    params:\n      x: {type: integer, max: " + literal + "}\n"
    errors = errors_in(tmp_path, text)
    assert len(errors) == 1, [e.format() for e in errors]
    e = errors[0]
    assert (e.line, e.column, e.path) == (6, 31, "tools[0].params.x.max")
    assert f"expected at most {MAX_INTEGER_DIGITS}" in e.message and "digits" in e.message
    assert "19 digits" in e.hint
    assert len(e.format()) < 2000, "the message does not quote the number"


def test_a_long_integer_as_a_key_or_in_a_list_is_located(tmp_path: Path) -> None:
    text = HEAD + "    params:\n      x: {type: string, enum: [a, " + "7" * 5000 + "]}\n"
    errors = errors_in(tmp_path, text)
    assert errors and all(e.line == 6 for e in errors), [e.format() for e in errors]
    text = HEAD + "    params:\n      " + "7" * 5000 + ": {type: integer}\n"
    errors = errors_in(tmp_path, text)
    assert errors and all(e.line == 6 for e in errors), [e.format() for e in errors]


def test_a_nul_byte_in_the_file_is_a_located_error(tmp_path: Path) -> None:
    errors = errors_in(tmp_path, HEAD.encode() + b"    title: a\x00b\n")
    assert len(errors) == 1
    e = errors[0]
    assert (e.line, e.column) == (5, 13)
    assert "a NUL byte is not allowed" in e.message


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ('    params:\n      x: {type: string, default: "a\\0b"}\n', "tools[0].params.x.default"),
        ('    title: "a\\0b"\n', "tools[0].title"),
        ('    params:\n      "a\\0b": {type: integer}\n', "tools[0].params"),
    ],
    ids=["default", "title", "param-name"],
)
def test_a_nul_character_in_a_value_is_a_located_error(tmp_path: Path, line: str, path: str) -> None:
    """`"\\0"` is a valid YAML escape; a NUL in a value would cut the C string it becomes."""
    errors = errors_in(tmp_path, HEAD + line)
    assert errors, "refused"
    assert any(e.path.startswith(path) and "NUL" in e.message and e.line >= 5 for e in errors), [
        e.format() for e in errors
    ]


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "    params:\n      x: {type: integer, default: " + "[" * 10_000 + "\n",
        HEAD + "    params:\n      x: {type: integer, max: " + "9" * 5000 + "}\n",
        HEAD + '    title: "a\\0b"\n',
        (HEAD + "    title: a\x00b\n"),
    ],
    ids=["deep", "digits", "nul-escape", "nul-byte"],
)
def test_codegen_check_reports_hostile_input_as_spec_errors(tmp_path: Path, text: str) -> None:
    done = codegen_check(tmp_path, text)
    assert done.returncode == 1
    assert "please report" not in done.stderr and "unexpected" not in done.stderr, done.stderr
    assert "hostile.yaml:" in done.stderr, done.stderr
