"""The PlatformIO/ESP-IDF project compiles the user's handlers file where it is: no copy
in src/ that an IDE user could edit and the next build overwrite."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_testlib import codegen, copy_spec

# Stands in for ESP-IDF: records the sources the component registers, resolved like CMake does.
FAKE_IDF = """\
cmake_minimum_required(VERSION 3.16)
project(probe NONE)
function(idf_component_register)
  cmake_parse_arguments(A "" "" "SRCS;INCLUDE_DIRS;PRIV_REQUIRES" ${ARGN})
  foreach(s IN LISTS A_SRCS)
    get_filename_component(p "${s}" REALPATH BASE_DIR "${MCPGEN_SRC}")
    file(APPEND "${MCPGEN_OUT}" "${p}\\n")
  endforeach()
endfunction()
function(target_compile_features)
endfunction()
function(target_compile_options)
endfunction()
function(set_source_files_properties)
endfunction()
include("${MCPGEN_SRC}/CMakeLists.txt")
"""


def _project(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "specs").mkdir()
    spec = copy_spec(tmp_path / "specs")
    return spec, tmp_path / "out" / "firmware" / "platformio"


def _build(spec: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return codegen(
        "build", str(spec), "--target", "esp32s3", "--no-pio", "-o", str(tmp_path / "out"), cwd=tmp_path
    )


def _cmake_sources(project: Path, tmp_path: Path) -> list[Path]:
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "CMakeLists.txt").write_text(FAKE_IDF)
    out = tmp_path / "sources.txt"
    proc = subprocess.run(
        [
            "cmake",
            "-S",
            str(probe),
            "-B",
            str(probe / "b"),
            f"-DMCPGEN_SRC={project / 'src'}",
            f"-DMCPGEN_OUT={out}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [Path(line) for line in out.read_text().splitlines()]


def test_cmake_compiles_the_users_handlers_file_in_place(tmp_path: Path) -> None:
    if shutil.which("cmake") is None:
        pytest.skip("cmake not installed")
    spec, project = _project(tmp_path)
    proc = _build(spec, tmp_path)
    assert proc.returncode == 0, proc.stderr
    handlers = (tmp_path / "specs" / "desk_lamp_handlers.cpp").resolve()
    assert not (project / "src" / handlers.name).exists(), "no copy of the handlers in the project"
    sources = _cmake_sources(project, tmp_path)
    assert handlers in sources, sources
    assert (project / "src" / "mcpgen" / "mcp_server.cpp").resolve() in sources
    assert (project / "src" / "generated" / "mcp_tools.cpp").resolve() in sources
    # An edit is made once, in one file, and survives the next build untouched.
    handlers.write_text(handlers.read_text() + "\n// tuned in the IDE\n")
    assert _build(spec, tmp_path).returncode == 0
    assert handlers.read_text().endswith("// tuned in the IDE\n")


def test_pio_project_config_names_the_handlers_file(tmp_path: Path) -> None:
    pytest.importorskip("platformio")
    spec, project = _project(tmp_path)
    assert _build(spec, tmp_path).returncode == 0
    from mcpgen.codegen.targets.esp32 import pio_command

    pio = pio_command()
    assert pio is not None
    out = subprocess.run(
        [*pio, "project", "config", "-d", str(project), "--json-output"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    sections = {name: dict(options) for name, options in json.loads(out.stdout)}
    rel = sections["env"]["custom_mcpgen_handlers"]
    assert (project / rel).resolve() == (tmp_path / "specs" / "desk_lamp_handlers.cpp").resolve()


def test_a_copy_left_by_an_older_codegen(tmp_path: Path) -> None:
    spec, project = _project(tmp_path)
    handlers = tmp_path / "specs" / "desk_lamp_handlers.cpp"
    copy = project / "src" / handlers.name
    copy.parent.mkdir(parents=True)
    # Unchanged: removed, so it is not compiled twice.
    shutil.copy(handlers, copy)
    proc = _build(spec, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not copy.exists() and "removed" in proc.stdout
    # Edited in the IDE: the build stops, names both files, and deletes nothing.
    copy.write_text(handlers.read_text() + "\n// edited in the generated project\n")
    proc = _build(spec, tmp_path)
    assert proc.returncode == 1
    assert str(handlers.resolve()) in proc.stderr or str(handlers) in proc.stderr
    assert "move those changes into" in proc.stderr and "Traceback" not in proc.stderr
    assert copy.read_text().endswith("// edited in the generated project\n")
