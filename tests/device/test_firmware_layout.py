"""firmware_template/ shows what it is: a README per part, and the include rules of
firmware_template/README.md hold for every file (read from its ``#include`` lines).

* core includes only the core and the C standard library;
* generated code includes the core only;
* a port includes the core, the generated header, its own folder and SDK headers (names
  not in this tree) -- never another port's files, except the QEMU boards, which are
  built on the shared bare_metal runtime;
* the Server's internal parts (``server_impl.h`` and the headers of its parts) are
  included by the core only.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from device_testlib import DEFAULT_SPEC, LAMP_SPEC, REPO

from mcpgen.codegen import resources
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.spec.loader import load_spec

ROOT = resources.firmware_template()
CORE = ROOT / "core" / "mcpgen"
PORTS = ROOT / "ports"
SOURCES = (".h", ".cpp", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
# What the core may take from the C library (no OS, no C++ library: it builds everywhere).
C_HEADERS = {
    "stddef.h",
    "stdint.h",
    "stdbool.h",
    "string.h",
    "stdlib.h",
    "stdio.h",
    "math.h",
    "float.h",
    "limits.h",
    "inttypes.h",
    "stdarg.h",
    "ctype.h",
}
SHARED_PORTS = {"qemu_mps2": {"bare_metal"}, "qemu_riscv_virt": {"bare_metal"}}
GENERATED = {"mcp_tools.h"}
# The Server's and the resources code's parts (firmware_template/core/README.md): inside
# the core only, so they can change without touching a port or the generator.
INTERNAL = {"server_impl.h", "arguments.h", "paging.h", "resource_impl.h"}


def includes(text: str) -> list[tuple[str, str]]:
    return INCLUDE.findall(text)


def port_of(path: Path) -> str:
    return path.relative_to(PORTS).parts[0]


def files_named(name: str) -> list[Path]:
    """Files of this tree a quoted include of ``name`` could mean (by its last part)."""
    base = Path(name).name
    return [p for p in ROOT.rglob(base) if p.is_file()]


def core_problems(path: Path, text: str) -> list[str]:
    problems = []
    for kind, name in includes(text):
        if kind == "<":
            if name not in C_HEADERS:
                problems.append(f"{path.name}: <{name}> is not a C standard header the core may use")
        elif not (name.startswith("mcpgen/") and (CORE / name.removeprefix("mcpgen/")).is_file()):
            problems.append(f'{path.name}: "{name}" is not a core header (core includes only mcpgen/...)')
    return problems


def port_problems(path: Path, text: str) -> list[str]:
    port = port_of(path)
    allowed = {port, *SHARED_PORTS.get(port, set())}
    problems = []
    for kind, name in includes(text):
        if kind == "<" or name in GENERATED:
            continue
        if name.startswith("mcpgen/"):
            if not (CORE / name.removeprefix("mcpgen/")).is_file():
                problems.append(f'{path}: "{name}" is not a core header')
            elif name.removeprefix("mcpgen/") in INTERNAL:
                problems.append(f'{path}: "{name}" is internal to the core: use "mcpgen/mcp_core.h"')
            continue
        for target in files_named(name):
            if target.is_relative_to(CORE):
                problems.append(f'{path}: "{name}" is a core header: include it as "mcpgen/{target.name}"')
            elif target.is_relative_to(PORTS) and port_of(target) not in allowed:
                problems.append(f'{path}: "{name}" is a file of port {port_of(target)}')
    return problems


def test_every_part_has_a_readme() -> None:
    tree = REPO / "firmware_template"  # the checkout: the READMEs are for its readers
    for folder in (tree, tree / "core", tree / "ports", tree / "platformio"):
        assert (folder / "README.md").is_file(), folder
    ports_readme = (tree / "ports" / "README.md").read_text()
    for port in sorted(p.name for p in (tree / "ports").iterdir() if p.is_dir()):
        assert f"`{port}/`" in ports_readme, f"ports/README.md does not describe {port}/"


def test_the_internal_headers_are_the_cores() -> None:
    assert {p.name for p in CORE.iterdir()} >= INTERNAL


def test_core_includes_only_the_core_and_the_c_library() -> None:
    sources = [p for p in CORE.iterdir() if p.suffix in SOURCES]
    assert len(sources) >= 5
    problems = [p for src in sources for p in core_problems(src, src.read_text(encoding="utf-8"))]
    assert problems == []


def test_ports_include_the_core_and_their_own_files_only() -> None:
    sources = [p for p in PORTS.rglob("*") if p.suffix in SOURCES]
    assert {port_of(p) for p in sources} >= {"host", "esp_idf", "xiaozhi", "bare_metal", "qemu_mps2"}
    problems = [p for src in sources for p in port_problems(src, src.read_text(encoding="utf-8"))]
    assert problems == []


@pytest.mark.parametrize("spec", [DEFAULT_SPEC, LAMP_SPEC], ids=lambda p: p.stem)
def test_generated_code_includes_the_core_only(spec: Path) -> None:
    for name, text in emit_cpp.emit(load_spec(spec)).items():
        for kind, header in includes(text):
            ok = (
                (kind == "<" and header in C_HEADERS)
                or header in GENERATED
                or (
                    header.startswith("mcpgen/")
                    and (CORE / header.removeprefix("mcpgen/")).is_file()
                    and header.removeprefix("mcpgen/") not in INTERNAL
                )
            )
            assert ok, f"generated {name} includes {kind}{header}"


def test_the_rules_catch_violations() -> None:
    """The checks above fail on the mistakes they exist for."""
    text = '#include "tcp.h"\n#include <unistd.h>\n#include "mcpgen/session.h"\n'
    assert core_problems(CORE / "x.cpp", text) == [
        'x.cpp: "tcp.h" is not a core header (core includes only mcpgen/...)',
        "x.cpp: <unistd.h> is not a C standard header the core may use",
    ]
    esp = PORTS / "esp_idf" / "x.cpp"
    assert port_problems(esp, '#include "tcp.h"\n#include "esp_log.h"\n#include "session.h"\n') == [
        f'{esp}: "tcp.h" is a file of port host',
        f'{esp}: "session.h" is a core header: include it as "mcpgen/session.h"',
    ]
    assert port_problems(PORTS / "host" / "x.cpp", '#include "mcpgen/server_impl.h"\n') == [
        f'{PORTS / "host" / "x.cpp"}: "mcpgen/server_impl.h" is internal to the core: use "mcpgen/mcp_core.h"'
    ]
    assert port_problems(PORTS / "qemu_mps2" / "x.cpp", '#include "board.h"\n') == []
    assert port_problems(PORTS / "host" / "x.cpp", '#include "board.h"\n') != []
