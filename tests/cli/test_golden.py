"""Golden files: the generated output of the example specs, byte for byte.

After an intended change to an emitter, refresh them with
``UPDATE_GOLDEN=1 python -m pytest tests/cli/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import docs as emit_docs
from mcpgen.codegen.emit import python as emit_python
from mcpgen.codegen.spec.loader import load_spec

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
EXAMPLES = ["default_device", "desk_lamp"]


def generated(name: str) -> dict[str, str]:
    # A relative source path, so the banner is the same on every machine.
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        spec = load_spec(Path("toolspec") / f"{name}.yaml")
    finally:
        os.chdir(cwd)
    files: dict[str, str] = {}
    for emitter in (emit_cpp, emit_python, emit_docs):
        files.update(emitter.emit(spec))
    return files


@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_output_matches_golden(name: str) -> None:
    files = generated(name)
    root = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert on_disk == set(files), "generated file set changed; run with UPDATE_GOLDEN=1 and review"
    for rel, text in files.items():
        assert (root / rel).read_text(encoding="utf-8") == text, f"{name}/{rel} differs from golden"


@pytest.mark.parametrize("name", EXAMPLES)
def test_generation_is_deterministic(name: str) -> None:
    assert generated(name) == generated(name)


def _python_goldens() -> list[str]:
    found = (p for name in EXAMPLES for ext in ("*.py", "*.pyi") for p in (GOLDEN / name).rglob(ext))
    return sorted(str(p) for p in found)


def _run(cmd: list[str], cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_generated_python_passes_the_projects_ruff() -> None:
    # ruff.toml excludes tests/golden from the tree-wide run; files named on the command line
    # are checked all the same, with the project's rules and line length.
    ruff = [sys.executable, "-m", "ruff"]
    config = ["--config", str(REPO / "ruff.toml")]
    lint = _run([*ruff, "check", *config, "--output-format", "concise", *_python_goldens()])
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _run([*ruff, "format", *config, "--check", "--diff", *_python_goldens()])
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_generated_bindings_pass_mypy_strict(tmp_path: Path) -> None:
    # A copy, so mypy's cache never lands among the goldens; the stubs are what users' mypy reads.
    pkg = "desk_lamp_tools"
    shutil.copytree(GOLDEN / "desk_lamp" / "python" / pkg, tmp_path / pkg)
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    mypy = [sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini", "--cache-dir", ".cache"]
    result = _run([*mypy, "-p", pkg], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_generated_cpp_passes_the_projects_clang_format() -> None:
    beside = Path(sys.executable).with_name("clang-format")
    tool = str(beside) if beside.exists() else shutil.which("clang-format")
    if tool is None:
        pytest.skip("clang-format is not installed (pip install clang-format, as pyproject.toml pins)")
    files = sorted(str(p) for name in EXAMPLES for p in (GOLDEN / name).rglob("mcp_tools.*"))
    assert len(files) == 2 * len(EXAMPLES)
    # --style=file: the root .clang-format, whatever the goldens' folder holds.
    style = f"--style=file:{REPO / '.clang-format'}"
    result = _run([tool, style, "--dry-run", "--Werror", *files])
    assert result.returncode == 0, result.stdout + result.stderr
