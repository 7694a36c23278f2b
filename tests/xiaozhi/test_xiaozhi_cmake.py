"""The generated mcpgen.cmake in a main/CMakeLists.txt laid out like upstream's.

Upstream main/CMakeLists.txt assigns SOURCES and INCLUDE_DIRS with set() and later calls
idf_component_register(SRCS ${SOURCES} ... INCLUDE_DIRS ${INCLUDE_DIRS} ...). ESP-IDF is
not needed to test where the include may go: a small host CMake project stands in for
idf_component_register with a target named like ESP-IDF's COMPONENT_LIB.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from xiaozhi_testlib import DEFAULT_SPEC

from mcpgen.codegen.targets.xiaozhi import build_xiaozhi

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")

TOP = """\
cmake_minimum_required(VERSION 3.16)
project(fake_xiaozhi NONE)
# Stands in for ESP-IDF's: records the sources on the component's target.
function(idf_component_register)
  cmake_parse_arguments(ARG "" "" "SRCS;INCLUDE_DIRS" ${ARGN})
  add_library(${COMPONENT_LIB} INTERFACE ${ARG_SRCS})
  message(STATUS "component sources: ${ARG_SRCS}")
  message(STATUS "component include dirs: ${ARG_INCLUDE_DIRS}")
endfunction()
set(COMPONENT_LIB __idf_main)
add_subdirectory(main)
"""

INCLUDE = "include(${CMAKE_CURRENT_SOURCE_DIR}/mcpgen/mcpgen.cmake)\n"
ASSIGN = 'set(SOURCES "app.cc")\nset(INCLUDE_DIRS ".")\n'
REGISTER = "idf_component_register(SRCS ${SOURCES} INCLUDE_DIRS ${INCLUDE_DIRS})\n"


@pytest.fixture(scope="module")
def glue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("xz_cmake")
    spec_dir = tmp / "spec"
    spec_dir.mkdir()
    shutil.copy(DEFAULT_SPEC, spec_dir)
    shutil.copy(DEFAULT_SPEC.with_name("default_device_handlers.cpp"), spec_dir)
    return build_xiaozhi(spec_dir / DEFAULT_SPEC.name, tmp / "out", log=lambda _: None)


def configure(glue: Path, tmp_path: Path, main_cmakelists: str) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "src"
    (src / "main").mkdir(parents=True)
    (src / "CMakeLists.txt").write_text(TOP, encoding="utf-8")
    (src / "main" / "CMakeLists.txt").write_text(main_cmakelists, encoding="utf-8")
    for name in ("app.cc", "more.cc"):
        (src / "main" / name).write_text("", encoding="utf-8")
    shutil.copytree(glue, src / "main" / "mcpgen")
    return subprocess.run(
        ["cmake", "-S", str(src), "-B", str(tmp_path / "build")], capture_output=True, text=True, timeout=120
    )


def test_include_above_idf_component_register_adds_every_unit(glue: Path, tmp_path: Path):
    proc = configure(glue, tmp_path, ASSIGN + "list(APPEND SOURCES more.cc)\n" + INCLUDE + REGISTER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [sources] = [line for line in proc.stdout.splitlines() if "component sources:" in line]
    units = sorted(p.relative_to(glue).as_posix() for p in glue.rglob("*") if p.suffix in (".cc", ".cpp"))
    for unit in units:
        assert f"main/mcpgen/{unit}" in sources
    assert "app.cc;more.cc;" in sources  # the firmware's own sources are kept, in order
    [dirs] = [line for line in proc.stdout.splitlines() if "component include dirs:" in line]
    assert dirs.endswith(";" + str(tmp_path / "src" / "main" / "mcpgen"))


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(INCLUDE + ASSIGN + REGISTER, id="before-both-set-lines"),
        pytest.param(
            'set(SOURCES "app.cc")\n' + INCLUDE + 'set(INCLUDE_DIRS ".")\n' + REGISTER, id="between-set-lines"
        ),
    ],
)
def test_include_before_the_set_lines_is_a_clear_error(glue: Path, tmp_path: Path, layout: str):
    proc = configure(glue, tmp_path, layout)
    assert proc.returncode != 0
    message = " ".join(proc.stderr.split())  # CMake wraps long messages
    assert "mcpgen.cmake is included before main/CMakeLists.txt assigns SOURCES and INCLUDE_DIRS" in message
    assert "Move the include(.../mcpgen/mcpgen.cmake) line to directly above idf_component_register(" in (
        message
    )


def test_sources_dropped_by_a_later_set_are_a_clear_error(glue: Path, tmp_path: Path):
    proc = configure(glue, tmp_path, ASSIGN + INCLUDE + 'set(SOURCES "app.cc")\n' + REGISTER)
    assert proc.returncode != 0
    message = " ".join(proc.stderr.split())
    assert "the mcpgen sources are not in __idf_main: something assigns SOURCES after" in message


def test_script_mode_requirement_scan_does_not_defer(glue: Path, tmp_path: Path):
    # ESP-IDF first runs component CMakeLists in script mode, where DEFER is unavailable.
    script = tmp_path / "scan.cmake"
    script.write_text(
        ASSIGN + f'include("{glue / "mcpgen.cmake"}")\nmessage(STATUS "n=${{SOURCES}}")\n', encoding="utf-8"
    )
    proc = subprocess.run(["cmake", "-P", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "mcpgen_xiaozhi_tools.cc" in proc.stdout


def test_readme_and_snippet_say_where_the_include_goes(glue: Path):
    for name in ("README.md", "mcpgen.cmake"):
        text = " ".join((glue / name).read_text(encoding="utf-8").replace("#", " ").split())
        assert "set(SOURCES ...)" in text, name
        assert "set(INCLUDE_DIRS ...)" in text, name
        assert "directly above idf_component_register(" in text.replace("`", ""), name
