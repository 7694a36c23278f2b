"""Where ``pio run`` and ``idf.py build`` find the generated ESP32 project's component.

The generated project (``codegen build --target esp32*``) is built by two front ends of
the same ESP-IDF CMake build. Both must compile the same application component, with the
same sources, requirements, managed dependencies and sdkconfig defaults:

* **PlatformIO** (``framework = espidf``) keeps sources in ``src_dir`` of ``platformio.ini``
  (``src/`` by default) and passes that directory to ESP-IDF's CMake in
  ``EXTRA_COMPONENT_DIRS`` unless it is ``main/``; the component is named after it.
* **idf.py** takes components from ``main/``, then each entry of ``EXTRA_COMPONENT_DIRS``
  (a directory with a ``CMakeLists.txt`` is a component, otherwise its subdirectories
  with one are), then ``components/*``, with ``EXTRA_COMPONENT_DIRS`` as the project's
  top-level ``CMakeLists.txt`` leaves it before ``include(.../project.cmake)``
  (ESP-IDF ``tools/cmake/project.cmake``, ``__project_init``).
* For both, ESP-IDF's component manager reads ``idf_component.yml`` in the directory of
  every component of the build, and ``sdkconfig.defaults`` is read from the project
  directory (the CMake source directory both configure).

``idf_component_dirs`` evaluates the top-level ``CMakeLists.txt`` with the real CMake (in
script mode, with a stand-in ``project.cmake`` that reports the variables ESP-IDF's would
read), so the rule is checked against what CMake makes of the file, not against a re-reading
of it. The rest is plain parsing of the generated files.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import yaml

# The keywords of idf_component_register whose values are lists.
REGISTER_KEYWORDS = (
    "SRCS",
    "SRC_DIRS",
    "EXCLUDE_SRCS",
    "INCLUDE_DIRS",
    "PRIV_INCLUDE_DIRS",
    "REQUIRES",
    "PRIV_REQUIRES",
    "LDFRAGMENTS",
    "EMBED_FILES",
    "EMBED_TXTFILES",
    "KCONFIG",
    "KCONFIG_PROJBUILD",
    "WHOLE_ARCHIVE",
)

# What the stand-in project.cmake prints: the variables ESP-IDF's __project_init reads.
_REPORT = "mcpgen-layout:"
_STAND_IN = (
    "# Stand-in for ESP-IDF's tools/cmake/project.cmake: reports what __project_init would read.\n"
    "macro(project name)\n"
    f'    message("{_REPORT}COMPONENT_DIRS=${{COMPONENT_DIRS}}")\n'
    f'    message("{_REPORT}EXTRA_COMPONENT_DIRS=${{EXTRA_COMPONENT_DIRS}}")\n'
    "endmacro()\n"
)


class LayoutError(Exception):
    """The project cannot be read as ESP-IDF reads it: the message says where and why."""


def pio_component_dir(project: Path) -> Path:
    """The application component PlatformIO builds: ``src_dir`` of ``platformio.ini`` (default ``src``)."""
    ini = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";", "#"))
    ini.read(project / "platformio.ini", encoding="utf-8")
    src_dir = ini.get("platformio", "src_dir", fallback="src")
    return project / src_dir.replace("${PROJECT_DIR}", str(project))


def _evaluate(project: Path, cmake: str, extra: Optional[Sequence[Path]]) -> dict[str, list[str]]:
    """The component-directory variables after the top-level CMakeLists.txt has run."""
    exe = shutil.which(cmake)
    if exe is None:
        raise LayoutError(
            f"{cmake} not found: it evaluates {project / 'CMakeLists.txt'} (apt-get install cmake)"
        )
    with tempfile.TemporaryDirectory(prefix="mcpgen-layout-") as tmp:
        stand_in = Path(tmp) / "tools" / "cmake" / "project.cmake"
        stand_in.parent.mkdir(parents=True)
        stand_in.write_text(_STAND_IN, encoding="utf-8")
        cmd = [exe]
        if extra is not None:  # as PlatformIO's espidf builder passes it
            cmd.append("-DEXTRA_COMPONENT_DIRS:PATH=" + ";".join(str(p) for p in extra))
        cmd += ["-P", str(project / "CMakeLists.txt")]
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=project, env=dict(os.environ, IDF_PATH=tmp)
        )
    values: dict[str, list[str]] = {}
    for line in proc.stderr.splitlines():
        if line.startswith(_REPORT):
            name, _, value = line[len(_REPORT) :].partition("=")
            values[name] = [v for v in value.split(";") if v]
    if proc.returncode != 0 or "EXTRA_COMPONENT_DIRS" not in values:
        raise LayoutError(
            f"{project / 'CMakeLists.txt'}: cmake -P did not reach project() "
            f"(exit {proc.returncode}):\n{proc.stderr[-2000:]}"
        )
    return values


def _component_dir(path: Path) -> list[Path]:
    """ESP-IDF's ``__project_component_dir``: the directory, or its subdirectories that are components."""
    if (path / "CMakeLists.txt").is_file():
        return [path.resolve()]
    if not path.is_dir():
        return []
    return [p.resolve() for p in sorted(path.iterdir()) if (p / "CMakeLists.txt").is_file()]


def idf_component_dirs(
    project: Path, *, cmake: str = "cmake", extra: Optional[Sequence[Path]] = None
) -> list[Path]:
    """The project's own component directories as ESP-IDF's ``__project_init`` finds them.

    ``extra``: ``EXTRA_COMPONENT_DIRS`` given on the command line (PlatformIO's ``-D``); None
    for ``idf.py build``, which passes none. A directory is listed once however often it is named
    (ESP-IDF registers it again, as an override of itself).
    """
    values = _evaluate(project, cmake, extra)
    found: list[Path] = []
    if values.get("COMPONENT_DIRS"):
        candidates = [project / d for d in values["COMPONENT_DIRS"]]
    else:
        candidates = [
            project / "main",
            *(project / d for d in values["EXTRA_COMPONENT_DIRS"]),
            project / "components",
        ]
    for candidate in candidates:
        for comp in _component_dir(candidate):
            if comp not in found:
                found.append(comp)
    return found


def extra_component_dirs(
    project: Path, *, cmake: str = "cmake", extra: Optional[Sequence[Path]] = None
) -> list[Path]:
    """``EXTRA_COMPONENT_DIRS`` as ESP-IDF receives it, each entry resolved (duplicates kept)."""
    return [(project / d).resolve() for d in _evaluate(project, cmake, extra)["EXTRA_COMPONENT_DIRS"]]


def cmake_words(body: str) -> list[str]:
    """The arguments of a CMake command body: comments dropped, quotes removed."""
    body = "\n".join(line.split("#", 1)[0] for line in body.splitlines())
    return [w.strip('"') for w in re.findall(r'"[^"]*"|\S+', body)]


def component_registration(cmakelists: Path) -> dict[str, list[str]]:
    """The list arguments of ``idf_component_register(...)`` in a component's CMakeLists.txt."""
    text = cmakelists.read_text(encoding="utf-8")
    reg = re.search(r"idf_component_register\((.*?)\)\s*$", text, re.DOTALL | re.MULTILINE)
    if reg is None:
        raise LayoutError(f"{cmakelists}: no idf_component_register(...)")
    args: dict[str, list[str]] = {}
    key: Optional[str] = None
    for word in cmake_words(reg.group(1)):
        if word in REGISTER_KEYWORDS:
            key = word
            args.setdefault(key, [])
        elif key is not None:
            args[key].append(word)
    return args


def requirements(cmakelists: Path) -> set[str]:
    """The components a component's CMakeLists.txt requires (REQUIRES and PRIV_REQUIRES)."""
    reg = component_registration(cmakelists)
    return {*reg.get("REQUIRES", []), *reg.get("PRIV_REQUIRES", [])}


def manifest_dependencies(component: Path) -> dict[str, str]:
    """``dependencies`` of the component's ``idf_component.yml`` (name -> version), {} without one."""
    manifest = component / "idf_component.yml"
    if not manifest.is_file():
        return {}
    data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
    deps = data.get("dependencies") or {}
    if not isinstance(deps, dict):
        raise LayoutError(f"{manifest}: 'dependencies' is not a mapping")
    return {
        str(name): str(spec.get("version", "*") if isinstance(spec, dict) else spec)
        for name, spec in deps.items()
    }
