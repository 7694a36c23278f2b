"""The generated ESP32 project builds the same component with `pio run` and with `idf.py build`.

ESP-IDF's rules (tools/cmake/project.cmake, docs/firmware.md "Building with idf.py"): idf.py
takes components from main/, EXTRA_COMPONENT_DIRS as the top-level CMakeLists.txt leaves it,
and components/*; PlatformIO passes its src_dir in EXTRA_COMPONENT_DIRS. The top-level file is
evaluated by the real CMake (script mode, a stand-in project.cmake), so no ESP-IDF is needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from esp32_testlib import TOOLSPEC

from mcpgen.codegen.checks import esp_idf_headers as chk
from mcpgen.codegen.targets import esp_idf_layout as layout
from mcpgen.codegen.targets.esp32 import build_esp32, generate_project, project_dir

# The top-level CMakeLists.txt of the projects generated before idf.py was supported.
OLD_PROJECT_FILE = (
    "cmake_minimum_required(VERSION 3.16.0)\n"
    "include($ENV{IDF_PATH}/tools/cmake/project.cmake)\nproject(desk_lamp)\n"
)


def _quiet(_: str) -> None:
    pass


@pytest.fixture(autouse=True)
def _cmake() -> None:
    if shutil.which("cmake") is None:  # installed by scripts/dev.sh
        pytest.fail("cmake not found: run scripts/dev.sh setup (apt package cmake)")


@pytest.fixture(scope="module")
def lamp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_project(
        TOOLSPEC / "desk_lamp.yaml",
        tmp_path_factory.mktemp("lamp"),
        log=_quiet,
        environ={"MCPGEN_WIFI_SSID": "lab"},
    )


def _pio_default_component(tmp: Path) -> Path:
    """Stands for the component PlatformIO's builder adds beside src/ (``__pio_env``)."""
    comp = tmp / "__pio_env"
    comp.mkdir(exist_ok=True)
    (comp / "CMakeLists.txt").write_text("idf_component_register()\n")
    return comp


def test_idf_py_builds_the_component_platformio_compiles(lamp: Path) -> None:
    app = layout.pio_component_dir(lamp).resolve()
    assert app == (lamp / "src").resolve()
    assert layout.idf_component_dirs(lamp) == [app]  # idf.py build: no EXTRA_COMPONENT_DIRS given
    assert chk.layout_problems(lamp) == []


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
def test_platformio_gets_src_once(lamp: Path, tmp_path: Path, spelling: str) -> None:
    """PlatformIO's espidf builder passes -DEXTRA_COMPONENT_DIRS=<its component>;<src_dir> itself."""
    default = _pio_default_component(tmp_path)
    src = lamp / "src" if spelling == "absolute" else Path("src")
    expected = [default.resolve(), (lamp / "src").resolve()]
    assert layout.extra_component_dirs(lamp, extra=[default, src]) == expected  # not appended again
    assert layout.idf_component_dirs(lamp, extra=[default, src]) == expected


def test_the_old_project_file_builds_nothing_with_idf_py(lamp: Path, tmp_path: Path) -> None:
    """Regression: the old file left src/ to PlatformIO; idf.py found no component of the project."""
    old = tmp_path / "old"
    shutil.copytree(lamp, old)
    (old / "CMakeLists.txt").write_text(OLD_PROJECT_FILE)
    assert layout.idf_component_dirs(old) == []
    assert layout.idf_component_dirs(old, extra=[old / "src"]) == [(old / "src").resolve()]  # pio run did
    problems = chk.layout_problems(old)
    assert len(problems) == 1 and "EXTRA_COMPONENT_DIRS" in problems[0]


_STAND_INS = """
function(idf_component_register)
    cmake_parse_arguments(arg "" "" "SRCS;INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${ARGN})
    foreach(src IN LISTS arg_SRCS)
        message("SRC=${src}")
    endforeach()
    message("PRIV_REQUIRES=${arg_PRIV_REQUIRES}")
    message("REQUIRES=${arg_REQUIRES}")
    message("INCLUDE_DIRS=${arg_INCLUDE_DIRS}")
endfunction()
function(target_compile_features)
endfunction()
function(target_compile_options)
endfunction()
function(set_source_files_properties)
endfunction()
"""


def _evaluate_component(component: Path, tmp: Path) -> dict[str, list[str]]:
    """Runs the component's CMakeLists.txt with CMake, idf_component_register recording its arguments."""
    # A configure run, not script mode: the component's file(GLOB_RECURSE ... CONFIGURE_DEPENDS)
    # is refused in script mode. No language, so no compiler is looked for.
    probe = tmp / "probe"
    probe.mkdir()
    (probe / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(layout_probe NONE)\n"
        + _STAND_INS
        + f'include("{(component / "CMakeLists.txt").as_posix()}")\n'
    )
    proc = subprocess.run(
        ["cmake", "-S", str(probe), "-B", str(probe / "build")],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, list[str]] = {}
    for line in proc.stderr.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in ("SRC", "PRIV_REQUIRES", "REQUIRES", "INCLUDE_DIRS"):
            out.setdefault(key, []).extend(v for v in value.split(";") if v)
    return out


def test_the_component_registers_every_source_and_its_requirements(lamp: Path, tmp_path: Path) -> None:
    component = layout.idf_component_dirs(lamp)[0]
    got = _evaluate_component(component, tmp_path)
    registered = sorted(Path(p).resolve() for p in got["SRC"])
    # every C++ file of the component (core, port, generated tables) and the handlers beside the spec
    expected = sorted(p.resolve() for p in chk.project_sources(lamp))
    assert registered == expected
    handlers = (TOOLSPEC / "desk_lamp_handlers.cpp").resolve()
    assert handlers in registered and handlers.parent != component
    for rel in ("port/mcpgen_esp_port.cpp", "mcpgen/mcp_server.cpp", "generated/mcp_tools.cpp"):
        assert (component / rel).resolve() in registered, rel
    # what CMake passes is what the header check reads from the same file
    assert set(got["PRIV_REQUIRES"]) | set(got.get("REQUIRES", [])) == layout.requirements(
        component / "CMakeLists.txt"
    )
    # the WebSocket build's (the lamp's transport); each transport's: test_esp32_requirements.py
    assert {"esp_wifi", "mbedtls", "nvs_flash"} <= set(got["PRIV_REQUIRES"])
    assert got["INCLUDE_DIRS"] == chk.component_flags(component / "CMakeLists.txt").include_dirs


# ESP-IDF's early expansion (tools/cmake/scripts/component_get_requirements.cmake): each
# component's CMakeLists.txt is included in script mode with CMAKE_BUILD_EARLY_EXPANSION set and
# an idf_component_register macro that records the requirements and returns.
_EARLY_EXPANSION = """
set(CMAKE_BUILD_EARLY_EXPANSION 1)
macro(idf_component_register)
    cmake_parse_arguments(_ "" "" "SRCS;INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${ARGN})
    set(__component_requires "${__REQUIRES}")
    set(__component_priv_requires "${__PRIV_REQUIRES}")
    return()
endmacro()
function(get_requirements dir)
    include(${dir}/CMakeLists.txt)
    message("REQUIRES=${__component_requires}")
    message("PRIV_REQUIRES=${__component_priv_requires}")
endfunction()
"""


def test_esp_idf_reads_the_component_requirements_in_script_mode(lamp: Path, tmp_path: Path) -> None:
    """Regression: file(GLOB_RECURSE ... CONFIGURE_DEPENDS) stopped this step (CMake refuses it in
    script mode), so neither `pio run` nor `idf.py build` got past configuring."""
    component = layout.idf_component_dirs(lamp)[0]
    driver = tmp_path / "early.cmake"
    driver.write_text(_EARLY_EXPANSION + f'get_requirements("{component.as_posix()}")\n')
    proc = subprocess.run(["cmake", "-P", str(driver)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = {k: v.split(";") for k, _, v in (line.partition("=") for line in proc.stderr.splitlines()) if v}
    assert set(got["PRIV_REQUIRES"]) == layout.requirements(component / "CMakeLists.txt")


def test_managed_components_and_defaults_sit_where_both_look(lamp: Path) -> None:
    component = layout.idf_component_dirs(lamp)[0]
    # the component manager reads idf_component.yml of every component in the build
    deps = layout.manifest_dependencies(component)
    assert "espressif/esp_websocket_client" in deps and "idf" in deps
    # only the WebSocket transport's: `mqtt` and its registry entry are the MQTT build's
    # (test_esp32_requirements.py)
    assert "mqtt" not in layout.requirements(component / "CMakeLists.txt")
    manifest = yaml.safe_load((component / "idf_component.yml").read_text())
    assert "espressif/mqtt" not in manifest["dependencies"]
    # sdkconfig.defaults: read from the project directory (CMAKE_SOURCE_DIR) by both
    defaults = (lamp / "sdkconfig.defaults").read_text()
    assert 'CONFIG_MCPGEN_WIFI_SSID="lab"' in defaults
    # the partition table it names is resolved against the project directory
    name = next(
        line.split("=", 1)[1].strip('"')
        for line in defaults.splitlines()
        if line.startswith("CONFIG_PARTITION_TABLE_CUSTOM_FILENAME=")
    )
    assert (lamp / name).is_file()


def test_idf_py_sdkconfig_follows_new_values(tmp_path: Path) -> None:
    """idf.py keeps its configuration in sdkconfig (PlatformIO: sdkconfig.<env>); both follow the spec."""
    outdir = tmp_path / "out"
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={"MCPGEN_WIFI_SSID": "old"})
    sdk = project_dir(outdir) / "sdkconfig"
    sdk.write_text('CONFIG_MCPGEN_WIFI_SSID="old"\nCONFIG_IDF_TARGET="esp32c3"\n')
    generate_project(TOOLSPEC / "desk_lamp.yaml", outdir, log=_quiet, environ={"MCPGEN_WIFI_SSID": "new"})
    assert sdk.read_text() == 'CONFIG_MCPGEN_WIFI_SSID="new"\nCONFIG_IDF_TARGET="esp32c3"\n'


def test_component_registration_parse(tmp_path: Path) -> None:
    cmake = tmp_path / "CMakeLists.txt"
    cmake.write_text(
        'idf_component_register(\n    SRCS "a.cpp" ${more}  # comment\n    INCLUDE_DIRS "."\n'
        "    REQUIRES esp_timer\n    PRIV_REQUIRES nvs_flash\n        lwip\n)\n"
    )
    assert layout.component_registration(cmake) == {
        "SRCS": ["a.cpp", "${more}"],
        "INCLUDE_DIRS": ["."],
        "REQUIRES": ["esp_timer"],
        "PRIV_REQUIRES": ["nvs_flash", "lwip"],
    }
    assert layout.requirements(cmake) == {"esp_timer", "nvs_flash", "lwip"}
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(layout.LayoutError, match="no idf_component_register"):
        layout.component_registration(tmp_path / "x.txt")


def test_build_without_pio_prints_the_idf_py_commands(tmp_path: Path) -> None:
    out: list[str] = []
    assert build_esp32(TOOLSPEC / "desk_lamp.yaml", tmp_path, "esp32c3", log=out.append, run_pio=False) == 0
    assert f"cd {project_dir(tmp_path)} && idf.py set-target esp32c3 && idf.py build" in "\n".join(out)
