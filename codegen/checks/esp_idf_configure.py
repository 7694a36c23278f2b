"""ESP-IDF's own CMake configure and generate of the generated project, per release.

The generated ``src/idf_component.yml`` admits ESP-IDF releases from a floor per transport
(``esp32_transport.MIN_IDF``). This runs what ``idf.py reconfigure`` runs (``cmake -G Ninja``
in the project with ``IDF_PATH`` set) against each ESP-IDF tree given, for each transport
(serial, WebSocket, WebSocket with ``device.ota``, MQTT) of ``desk_lamp`` (or ``--spec``),
and reports whether the release configures the project, with the first error, the number of
components resolved and the time taken. A release the manifest admits must configure it.

The configure resolves every component the app component requires (``COMPONENTS=src``,
the app's closure, as ``codegen run --qemu`` builds), evaluates each one's
``CMakeLists.txt`` and Kconfig for the chip, and writes the Ninja files; it compiles nothing
for the chip. CMake still identifies the compiler, so ``riscv32-esp-elf-gcc`` (esp32c3) must
be on ``PATH`` (Espressif's, or ``scripts/esp_idf_gnu_riscv.sh``'s wrappers); its check
compiles without linking (``CMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY``), so a compiler
without the chip's C runtime files does. The component manager is off
(``IDF_COMPONENT_MANAGER=0``): the registry components of the manifest come from local
checkouts and are added to ``COMPONENTS`` (the requirement the manager would add to ``src``).

Run it with ``python -m mcpgen.codegen.checks.esp_idf_configure`` (or
``scripts/configure_esp_idf.sh``); the trees are named by ``MCPGEN_ESP_IDF_TREES``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from mcpgen.codegen.checks.esp_idf_headers import (
    ENV_PROTOCOLS,
    WEBSOCKET_COMPONENT,
    CheckSetupError,
    check_config,
    idf_version,
    ota_variant,
)
from mcpgen.codegen.emit.esp32_transport import MIN_IDF
from mcpgen.codegen.targets.esp32 import generate_project

ENV_TREES = "MCPGEN_ESP_IDF_TREES"  # ESP-IDF trees, separated by os.pathsep
ENV_MQTT = "MCPGEN_ESP_MQTT"  # espressif/esp-mqtt (the registry's espressif/mqtt, ESP-IDF 6.0+)
# (case, transport, device.ota)
CASES: tuple[tuple[str, str, bool], ...] = (
    ("serial", "serial", False),
    ("websocket", "websocket", False),
    ("websocket+ota", "websocket", True),
    ("mqtt", "mqtt", False),
)
ERROR_CHARS = 240  # a dependency cycle's message lists every component: one table cell
CASE_NAMES = tuple(name for name, _, _ in CASES)
CHIP_COMPILERS = {"esp32c3": "riscv32-esp-elf-gcc", "esp32": "xtensa-esp32-elf-gcc"}


@dataclass
class Result:
    release: str  # "5.5.5"
    case: str  # a name of CASES
    admitted: bool  # the generated manifest's `idf` floor admits the release
    ok: bool
    error: str  # the first error, "" when ok
    components: int  # components the configure resolved (project_description.json)
    seconds: float


def trees_from_env(environ: Optional[dict[str, str]] = None) -> list[Path]:
    env = dict(os.environ) if environ is None else environ
    return [Path(p).expanduser() for p in (env.get(ENV_TREES) or "").split(os.pathsep) if p.strip()]


def release_of(idf: Path) -> str:
    major, minor, patch = idf_version(idf)
    return f"{major}.{minor}.{patch}"


def admits(floor: str, release: str) -> bool:
    """``idf: ">=floor"`` admits ``release`` (both dotted numbers)."""

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split("."))

    return key(release) >= key(floor)


def registry_components(transport: str, release: str, environ: dict[str, str]) -> dict[str, Path]:
    """Component name -> local checkout standing in for the manifest's registry entries."""
    wanted: dict[str, Path] = {}
    if transport == "websocket":
        protocols = environ.get(ENV_PROTOCOLS)
        if not protocols:
            raise CheckSetupError(
                f"the WebSocket project needs espressif/esp_websocket_client: set {ENV_PROTOCOLS} "
                "to an espressif/esp-protocols checkout"
            )
        wanted["esp_websocket_client"] = Path(protocols).expanduser() / WEBSOCKET_COMPONENT
    if transport == "mqtt" and admits("6.0", release):  # esp-mqtt left ESP-IDF in 6.0
        mqtt = environ.get(ENV_MQTT)
        if not mqtt:
            raise CheckSetupError(
                f"ESP-IDF {release} has no mqtt component: set {ENV_MQTT} to an espressif/esp-mqtt "
                "checkout (the registry's espressif/mqtt)"
            )
        wanted["mqtt"] = Path(mqtt).expanduser()
    for name, path in wanted.items():
        if not (path / "CMakeLists.txt").is_file():
            raise CheckSetupError(f"{path}: no CMakeLists.txt (expected the component {name})")
    return wanted


def first_error(log: str, idf: Path) -> str:
    """The first ``CMake Error`` with its message, on one line, ESP-IDF's paths shortened."""
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("CMake Error"):
            message: list[str] = []
            for follow in lines[i + 1 :]:
                if not follow.strip():
                    if message:
                        break
                    continue
                if follow.startswith("Call Stack") or follow.startswith("CMake "):
                    break
                message.append(follow.strip())
            text = f"{line.rstrip(':')}: {' '.join(message)}".strip().replace(str(idf) + "/", "")
            return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 3] + "..."
    for line in lines:
        if "error" in line.lower():
            return line.strip()
    return "configure failed (no error line in its output)"


def configure(
    project: Path,
    idf: Path,
    build: Path,
    chip: str,
    extra: dict[str, Path],
    environ: dict[str, str],
) -> tuple[bool, str, int, float]:
    """(ok, first error, components resolved, seconds) of one configure + generate."""
    if build.exists():
        shutil.rmtree(build)
    build.mkdir(parents=True)
    staged = build.parent / f"{build.name}-components"  # a directory per component, named as the registry's
    if staged.exists():
        shutil.rmtree(staged)
    for name, path in extra.items():
        shutil.copytree(path, staged / name, ignore=shutil.ignore_patterns(".git", "test*", "examples"))
    components = ["src", *extra]
    cmd = [
        "cmake",
        "-G",
        "Ninja",
        "-S",
        str(project),
        "-B",
        str(build),
        f"-DIDF_TARGET={chip}",
        f"-DCOMPONENTS={';'.join(components)}",
        f"-DPYTHON={sys.executable}",
        "-DPYTHON_DEPS_CHECKED=1",
        "-DESP_PLATFORM=1",
        "-DCCACHE_ENABLE=0",
        "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY",
        f"-DSDKCONFIG={build / 'sdkconfig'}",
    ]
    if extra:
        cmd.append(f"-DEXTRA_COMPONENT_DIRS={';'.join(str(staged / n) for n in extra)}")
    env = {**environ, "IDF_PATH": str(idf), "IDF_COMPONENT_MANAGER": "0"}
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    output = proc.stdout + proc.stderr
    (build / "configure.log").write_text(" ".join(cmd) + "\n" + output, encoding="utf-8")
    description = build / "project_description.json"
    count = 0
    if description.is_file():
        count = len(json.loads(description.read_text(encoding="utf-8")).get("build_components", []))
    ok = proc.returncode == 0 and (build / "build.ninja").is_file()
    return ok, "" if ok else first_error(output, idf), count, seconds


def _quiet(_: str) -> None:
    pass


def run_matrix(
    trees: Sequence[Path],
    spec: Path,
    work: Path,
    chip: str = "esp32c3",
    cases: Sequence[str] = CASE_NAMES,
    environ: Optional[dict[str, str]] = None,
    log: Optional[Callable[[str], None]] = None,
) -> list[Result]:
    env = dict(os.environ) if environ is None else dict(environ)
    compiler = CHIP_COMPILERS.get(chip)
    if compiler is None or shutil.which(compiler, path=env.get("PATH")) is None:
        raise CheckSetupError(
            f"CMake identifies the {chip} compiler even for a configure: {compiler or chip} is not on PATH "
            "(Espressif's toolchain, or for esp32c3 scripts/esp_idf_gnu_riscv.sh's wrappers)"
        )
    for tool in ("cmake", "ninja"):
        if shutil.which(tool, path=env.get("PATH")) is None:
            raise CheckSetupError(f"{tool} is not on PATH")
    results: list[Result] = []
    projects: dict[str, Path] = {}
    for name, transport, ota in CASES:
        if name not in cases:
            continue
        spec_path = ota_variant(spec, work / name) if ota else spec
        config = {**env, **check_config(transport, work / name)}
        projects[name] = generate_project(spec_path, work / name / "out", log=_quiet, environ=config)
    for idf in trees:
        release = release_of(idf)
        for name, transport, _ in CASES:
            if name not in projects:
                continue
            extra = registry_components(transport, release, env)
            build = work / "build" / f"{release}-{name}"
            ok, error, count, seconds = configure(projects[name], idf, build, chip, extra, env)
            results.append(
                Result(release, name, admits(MIN_IDF[transport], release), ok, error, count, seconds)
            )
            if log is not None:
                log(
                    f"{release} {name}: {'configured' if ok else error} ({count} components, {seconds:.1f} s)"
                )
    return results


def table(results: Sequence[Result]) -> str:
    lines = [
        "| ESP-IDF | case | admitted | result | components | s |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        outcome = "configured" if r.ok else f"error: {r.error}"
        lines.append(
            f"| {r.release} | {r.case} | {'yes' if r.admitted else 'no'} | {outcome} | {r.components} "
            f"| {r.seconds:.1f} |"
        )
    return "\n".join(lines)


def untruthful(results: Sequence[Result]) -> list[Result]:
    """Releases the manifest admits that do not configure the project."""
    return [r for r in results if r.admitted and not r.ok]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="configure_esp_idf",
        description=f"ESP-IDF's CMake configure of the generated project for each tree in {ENV_TREES}",
    )
    parser.add_argument("--spec", type=Path, default=Path("toolspec/desk_lamp.yaml"))
    parser.add_argument("--chip", default="esp32c3", choices=sorted(CHIP_COMPILERS))
    parser.add_argument("--case", action="append", choices=CASE_NAMES, help="default: all")
    parser.add_argument("--keep", type=Path, help="work directory to keep (projects, builds, configure.log)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    trees = trees_from_env()
    if not trees:
        print(f"set {ENV_TREES} to ESP-IDF trees separated by '{os.pathsep}'", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="mcpgen-idf-configure-"))
    try:
        results = run_matrix(
            trees,
            args.spec,
            work,
            args.chip,
            args.case or CASE_NAMES,
            log=lambda m: print(m, file=sys.stderr),
        )
    except CheckSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps([asdict(r) for r in results], indent=1) if args.format == "json" else table(results))
    bad = untruthful(results)
    for r in bad:
        print(f"{r.release} {r.case}: admitted by idf_component.yml but does not configure", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
