"""Compiles the generated ESP32 project against the real ESP-IDF headers with the host g++.

PlatformIO cannot download the Xtensa/RISC-V toolchains everywhere, so this check stands
in for the compile step of ``pio run``: every ``*.cpp`` of the generated project's ``src/``
(the port, the portable core, the generated tables, the handlers) goes through
``g++ -fsyntax-only`` with

* the C++ dialect and warning flags of the ESP-IDF version at hand (read from its
  ``tools/cmake/build.cmake``), the options its root ``CMakeLists.txt`` derives from the
  sdkconfig (``-fno-exceptions``, ``-fno-rtti``, ...), and the port's own options (read
  from the generated ``src/CMakeLists.txt``);
* an ``sdkconfig.h`` that ESP-IDF's own ``kconfgen`` (PyPI ``esp-idf-kconfig``) makes
  from the generated ``sdkconfig.defaults`` for the board's chip;
* the include directories of the components the port uses, for the chip's architecture
  (Xtensa for esp32/esp32s3, RISC-V for esp32c3), and ``esp_websocket_client`` from an
  ``espressif/esp-protocols`` checkout;
* the target's data model and C library: ``-m32`` (ILP32), ``-nostdinc`` with the C
  headers of the ESP newlib instead of glibc's, ``int32_t``/``uint32_t`` as ``long`` as
  on xtensa-esp-elf and riscv32-esp-elf (so ``printf`` formats are checked as the real
  compiler checks them: ``%u`` for a ``uint32_t`` is an error), the host's identity macros
  (``__linux__``, ``__i386__``, ...) undefined and the target's (``__XTENSA__``,
  ``__riscv``, ...) defined, so headers take their target branches.

No shim for architecture builtins is needed: the inline functions of the Xtensa/RISC-V
headers that the port reaches use inline assembly, which the compiler copies as text
without checking. The check runs in two modes: ``-fsyntax-only`` (parsing, types, overload
resolution, format strings) and ``-S -o /dev/null`` at the sdkconfig's optimization level,
which adds the warnings of the optimizer (``-Wstringop-truncation``, ``-Wmaybe-uninitialized``,
...) that ``-fsyntax-only`` cannot see; the host's assembly output is discarded. Not covered:
C++ standard library headers (the ESP toolchain's libstdc++ is not available; the core and
the port use C headers only), linking, and the assembler.

Run it by hand with ``python -m mcpgen.codegen.checks.esp_idf_headers`` (or
``scripts/check_esp_idf.sh``); ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mcpgen.codegen.log import Log
from mcpgen.codegen.targets import esp_idf_layout

ENV_IDF = "MCPGEN_ESP_IDF"
ENV_PROTOCOLS = "MCPGEN_ESP_PROTOCOLS"
ENV_NEWLIB = "MCPGEN_ESP_NEWLIB"
ENV_NAMES = (ENV_IDF, ENV_PROTOCOLS, ENV_NEWLIB)
WEBSOCKET_COMPONENT = Path("components") / "esp_websocket_client"


class CheckSetupError(Exception):
    """The check cannot run (missing checkout, tool or header): the message says what to do."""


def app_component(project: Path) -> Path:
    """The application component of the generated project: the directory PlatformIO compiles,
    which the project's CMakeLists.txt names for idf.py too (``esp_idf_layout``)."""
    return esp_idf_layout.pio_component_dir(project)


def layout_problems(project: Path, log: Callable[[str], None] = print) -> list[str]:
    """What idf.py would build differently from PlatformIO: its components must be exactly
    the one the check compiles (needs cmake to evaluate the project's CMakeLists.txt)."""
    app = app_component(project).resolve()
    try:
        found = esp_idf_layout.idf_component_dirs(project)
    except esp_idf_layout.LayoutError as exc:
        log(f"  the idf.py layout was not checked: {exc}")
        return []
    if found == [app]:
        return []
    return [
        f"{project / 'CMakeLists.txt'}: idf.py would build the components {[str(p) for p in found]}, "
        f"PlatformIO builds {app}: name it in EXTRA_COMPONENT_DIRS there"
    ]


# ---------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Chip:
    name: str  # IDF_TARGET
    arch: str  # "xtensa" or "riscv"
    # What xtensa-esp-elf-gcc / riscv32-esp-elf-gcc predefine that the headers test.
    macros: tuple[str, ...]


_XTENSA_MACROS = ("__XTENSA__=1", "__xtensa__=1", "__XTENSA_EL__=1", "__XTENSA_WINDOWED_ABI__=1")
_RISCV_MACROS = (
    "__riscv=1",
    "__riscv_xlen=32",
    "__riscv_flen=0",
    "__riscv_float_abi_soft=1",
    "__riscv_mul=1",
    "__riscv_div=1",
    "__riscv_muldiv=1",
    "__riscv_compressed=1",
    "__riscv_cmodel_medlow=1",
)

CHIPS: dict[str, Chip] = {
    "esp32": Chip("esp32", "xtensa", _XTENSA_MACROS),
    "esp32s3": Chip("esp32s3", "xtensa", _XTENSA_MACROS),
    "esp32c3": Chip("esp32c3", "riscv", _RISCV_MACROS),
}


# Public include directories (relative to ESP-IDF's components/) of the components the port
# and the headers it includes need, as their CMakeLists.txt declare them in 5.1 to 5.5 (no
# private ones: a header found only there would not be found by the real build). {target}
# is the chip, {arch} xtensa/riscv. Directories that a version does not have are skipped.
IDF_INCLUDE_DIRS: tuple[str, ...] = (
    "newlib/platform_include",
    "freertos/config/include",
    "freertos/config/include/freertos",
    "freertos/config/{arch}/include",
    "freertos/FreeRTOS-Kernel/include",
    "freertos/FreeRTOS-Kernel/portable/{arch}/include",
    "freertos/FreeRTOS-Kernel/portable/{arch}/include/freertos",
    "freertos/esp_additions/include",
    "freertos/esp_additions/include/freertos",
    "freertos/esp_additions/arch/{arch}/include",
    "esp_hw_support/include",
    "esp_hw_support/include/soc",
    "esp_hw_support/include/soc/{target}",
    "esp_hw_support/dma/include",
    "esp_hw_support/ldo/include",
    "esp_hw_support/debug_probe/include",
    "esp_hw_support/mspi_timing_tuning/include",
    "esp_hw_support/power_supply/include",
    "heap/include",
    "log/include",
    "soc/include",
    "soc/{target}",
    "soc/{target}/include",
    "soc/{target}/register",
    "hal/platform_port/include",
    "hal/{target}/include",
    "hal/include",
    "esp_rom/include",
    "esp_rom/{target}/include",
    "esp_rom/{target}/include/{target}",
    "esp_rom/{target}",
    "esp_common/include",
    "esp_system/include",
    "{arch}/{target}/include",
    "{arch}/include",
    "{arch}/deprecated_include",
    "esp_timer/include",
    "esp_event/include",
    "esp_netif/include",
    "esp_wifi/include",
    "esp_wifi/include/local",
    "esp_wifi/wifi_apps/include",
    "esp_wifi/wifi_apps/nan_app/include",
    "esp_phy/include",
    "esp_phy/{target}/include",
    "nvs_flash/include",
    "esp_partition/include",
    "spi_flash/include",
    "mbedtls/port/include",
    "mbedtls/mbedtls/include",
    "mbedtls/esp_crt_bundle/include",
    "esp-tls",
    "esp-tls/esp-tls-crypto",
    "tcp_transport/include",
    "http_parser",
    "lwip/include",
    "lwip/include/apps",
    "lwip/include/apps/sntp",
    "lwip/lwip/src/include",
    "lwip/port/include",
    "lwip/port/freertos/include",
    "lwip/port/esp32xx/include",
    "lwip/port/esp32xx/include/arch",
    "lwip/port/esp32xx/include/sys",
    "vfs/include",
    "esp_https_ota/include",  # device.ota (port/mcpgen_esp_ota.cpp) from here to esp_bootloader_format
    "esp_http_client/include",
    "app_update/include",
    "bootloader_support/include",
    "esp_app_format/include",
    "esp_bootloader_format/include",
    "mqtt/esp-mqtt/include",  # the MQTT transport (mqtt_client.h; submodule components/mqtt/esp-mqtt)
    "esp_driver_gpio/include",
    "esp_driver_uart/include",  # the serial transport (driver/uart.h)
    "esp_driver_usb_serial_jtag/include",  # the serial transport (driver/usb_serial_jtag.h)
    "esp_pm/include",
    "esp_ringbuf/include",
    "efuse/include",
    "efuse/{target}/include",
    "esp_mm/include",
    "esp_security/include",
    "pthread/include",
)


@dataclass
class Sources:
    """Local checkouts: ESP-IDF (with its submodules), espressif/esp-protocols, and the C library.

    ``newlib`` is either the include directory of an ESP toolchain
    (``.../xtensa-esp-elf/xtensa-esp-elf/include``, with the ``newlib.h`` its build made) or a
    checkout of espressif/newlib-esp32 (``newlib/libc/include``; its ``newlib.h`` is a
    placeholder, so the check writes the configuration header, see ``newlib_config_headers``).
    """

    idf: Path
    protocols: Path
    newlib: Path

    @classmethod
    def from_env(cls, environ: Optional[dict[str, str]] = None) -> Optional[Sources]:
        env = os.environ if environ is None else environ
        values = [env.get(name) for name in ENV_NAMES]
        if not all(values):
            return None
        idf, protocols, newlib = (Path(v) for v in values if v)
        return cls(idf, protocols, newlib)

    def validate(self) -> None:
        if not (self.idf / "components" / "esp_common" / "include" / "esp_idf_version.h").is_file():
            raise CheckSetupError(
                f"{ENV_IDF}={self.idf}: not an ESP-IDF checkout "
                "(no components/esp_common/include/esp_idf_version.h)"
            )
        for sub, what in (
            ("mbedtls/mbedtls/include/mbedtls/ssl.h", "mbedtls"),
            ("lwip/lwip/src/include/lwip/sockets.h", "lwip"),
        ):
            if not (self.idf / "components" / sub).is_file():
                raise CheckSetupError(
                    f"{ENV_IDF}={self.idf}: the {what} submodule is missing "
                    f"(components/{sub}): git submodule update --init "
                    f"components/{what}/{what}"
                )
        ws = self.protocols / WEBSOCKET_COMPONENT / "include" / "esp_websocket_client.h"
        if not ws.is_file():
            raise CheckSetupError(
                f"{ENV_PROTOCOLS}={self.protocols}: no {WEBSOCKET_COMPONENT}/include/"
                "esp_websocket_client.h (an espressif/esp-protocols checkout is expected)"
            )
        if not (self.newlib_include / "sys" / "reent.h").is_file():
            raise CheckSetupError(
                f"{ENV_NEWLIB}={self.newlib}: neither a newlib include directory "
                "(no sys/reent.h) nor an espressif/newlib-esp32 checkout "
                "(no newlib/libc/include)"
            )

    @property
    def websocket(self) -> Path:
        return self.protocols / WEBSOCKET_COMPONENT

    @property
    def newlib_include(self) -> Path:
        checkout = self.newlib / "newlib" / "libc" / "include"
        return checkout if checkout.is_dir() else self.newlib


def newlib_config_headers(sources: Sources) -> dict[str, str]:
    """``newlib.h`` and ``_newlib_version.h`` when ``sources.newlib`` is a source checkout, else {}.

    newlib's ``configure`` writes both; a checkout has placeholders. These are the options ESP
    toolchains build newlib with that change declarations the port can see (C99 and long long
    printf formats, retargetable locks, long double = double).
    """
    installed = sources.newlib_include / "newlib.h"
    if installed.is_file() and "dummy file" not in installed.read_text(encoding="utf-8", errors="replace"):
        return {}
    version = ["4", "3", "0"]
    m4 = sources.newlib / "newlib" / "acinclude.m4"
    if m4.is_file():
        pattern = r"NEWLIB_(?:MAJOR|MINOR|PATCHLEVEL)_VERSION\],\[(\d+)\]"
        found = re.findall(pattern, m4.read_text(encoding="utf-8"))
        if len(found) == 3:
            version = found
    options = (
        "_WANT_IO_C99_FORMATS",
        "_WANT_IO_LONG_LONG",
        "_WANT_IO_POS_ARGS",
        "_RETARGETABLE_LOCKING",
        "_HAVE_LONG_DOUBLE",
        "_LDBL_EQ_DBL",
        "_ATEXIT_DYNAMIC_ALLOC",
        "_FVWRITE_IN_STREAMIO",
        "_FSEEK_OPTIMIZATION",
        "_WIDE_ORIENT",
        "_UNBUF_STREAM_OPT",
    )
    newlib_h = (
        "/* newlib options of ESP toolchains, for the mcpgen ESP-IDF check */\n"
        "#ifndef __NEWLIB_H__\n#define __NEWLIB_H__ 1\n#include <_newlib_version.h>\n"
        "#define _MB_LEN_MAX 1\n" + "".join(f"#define {o} 1\n" for o in options) + "#endif\n"
    )
    version_h = (
        "#ifndef _NEWLIB_VERSION_H__\n#define _NEWLIB_VERSION_H__ 1\n"
        f'#define _NEWLIB_VERSION "{".".join(version)}"\n#define __NEWLIB__ {version[0]}\n'
        f"#define __NEWLIB_MINOR__ {version[1]}\n"
        f"#define __NEWLIB_PATCHLEVEL__ {version[2]}\n#endif\n"
    )
    return {"newlib.h": newlib_h, "_newlib_version.h": version_h}


def newlib_version(sources: Sources) -> str:
    """newlib's version as its headers (or the check's configuration header) say."""
    text = newlib_config_headers(sources).get("_newlib_version.h")
    if text is None:
        path = sources.newlib_include / "_newlib_version.h"
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
    m = re.search(r'_NEWLIB_VERSION\s+"([^"]+)"', text)
    return m.group(1) if m else "?"


def idf_version(idf: Path) -> tuple[int, int, int]:
    """(major, minor, patch) from ``esp_idf_version.h``."""
    text = (idf / "components" / "esp_common" / "include" / "esp_idf_version.h").read_text(encoding="utf-8")
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"#define\s+ESP_IDF_VERSION_{name}\s+(\d+)", text)
        if m is None:
            raise CheckSetupError(f"{idf}: no ESP_IDF_VERSION_{name} in esp_idf_version.h")
        parts.append(int(m.group(1)))
    return parts[0], parts[1], parts[2]


def describe(path: Path) -> str:
    """``git describe --tags`` of a checkout, else its ``version.txt``, else ''."""
    if (path / ".git").exists() and shutil.which("git"):
        proc = subprocess.run(
            ["git", "-C", str(path), "describe", "--tags", "--always", "--dirty"],
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            return proc.stdout.strip()
    version_txt = path / "version.txt"
    if version_txt.is_file():
        return version_txt.read_text(encoding="utf-8").strip()
    return ""


def component_version(component: Path) -> str:
    """``version:`` of a component's ``idf_component.yml`` ('' when there is none)."""
    manifest = component / "idf_component.yml"
    if manifest.is_file():
        m = re.search(r'^version:\s*"?([^"\s]+)"?', manifest.read_text(encoding="utf-8"), re.MULTILINE)
        if m:
            return m.group(1)
    return ""


# ---------------------------------------------------------------------------- flags


_CMAKE_STRING = re.compile(r'"([^"]*)"')


def _cmake_block(text: str, start: str) -> list[str]:
    """The quoted words of every ``list(APPEND <start> ...)`` call in ``text``."""
    words: list[str] = []
    for m in re.finditer(rf"list\(APPEND\s+{start}\s+(.*?)\)", text, re.DOTALL):
        body = "\n".join(line.split("#", 1)[0] for line in m.group(1).splitlines())
        words += _CMAKE_STRING.findall(body)
    return words


def idf_common_flags(idf: Path) -> tuple[list[str], list[str]]:
    """(options for every C++ file, -D definitions) that ESP-IDF's build.cmake sets for chip targets."""
    build = (idf / "tools" / "cmake" / "build.cmake").read_text(encoding="utf-8")
    m = re.search(
        r"function\(__build_set_default_build_specifications\)(.*?)endfunction\(\)", build, re.DOTALL
    )
    if m is None:
        raise CheckSetupError(f"{idf}/tools/cmake/build.cmake: no __build_set_default_build_specifications")
    spec = m.group(1)
    options = _cmake_block(spec, "compile_options") + _cmake_block(spec, "cxx_compile_options")
    defines = _cmake_block(spec, "compile_definitions")
    std = [o for o in options if o.startswith("-std=")]
    if not std:  # up to 5.4 the standard is set in __build_set_lang_version
        lang = re.search(r"function\(__build_set_lang_version\)(.*?)endfunction\(\)", build, re.DOTALL)
        cxx = re.search(r"set\(cxx_std\s+(\S+)\)", lang.group(1)) if lang else None
        if cxx is None:
            raise CheckSetupError(f"{idf}/tools/cmake/build.cmake: cannot find the C++ standard")
        options.append(f"-std={cxx.group(1)}")
    options = [o for o in options if not o.startswith("-g")]  # debug info: nothing to check
    return options, [f"-D{d}" for d in defines]


# Components whose CMakeLists.txt add definitions every source of the app component sees
# (``idf_build_set_property(COMPILE_DEFINITIONS ...)``, or INTERFACE/PUBLIC definitions of a
# component every build links): pthread's _POSIX_READER_WRITER_LOCKS, soc's SOC_MMU_PAGE_SIZE
# and SOC_XTAL_FREQ_MHZ, ... mbedtls's MBEDTLS_CONFIG_FILE only reaches a component that requires it.
DEFINITION_COMPONENTS = ("pthread", "soc", "esp_system", "esp_hw_support", "newlib", "log")
_BUILD_DEFINITION = re.compile(r'idf_build_set_property\(COMPILE_DEFINITIONS\s+"?([^"\s)]+)"?\s+APPEND\)')
_TARGET_DEFINITION = re.compile(  # ${COMPONENT_LIB}, or mbedtls's loop over its libraries (${target})
    r"target_compile_definitions\(\$\{\w+\}\s+(?:INTERFACE|PUBLIC)\s+([^)]*)\)"
)
# What only Espressif's fork of Mbed TLS declares (components/mbedtls/mbedtls is that fork;
# ESP-IDF's mbedtls/esp_config.h and port headers need it).
_ESPRESSIF_MBEDTLS_MARK = "mbedtls_gcm_context_soft"


def espressif_mbedtls(idf: Path) -> bool:
    """True when ``components/mbedtls/mbedtls`` is Espressif's fork (not an upstream stand-in)."""
    gcm = idf / "components" / "mbedtls" / "mbedtls" / "include" / "mbedtls" / "gcm.h"
    return gcm.is_file() and _ESPRESSIF_MBEDTLS_MARK in gcm.read_text(encoding="utf-8", errors="replace")


def _definitions_of(text: str) -> list[str]:
    found = [m.group(1) for m in _BUILD_DEFINITION.finditer(text)]
    for m in _TARGET_DEFINITION.finditer(text):
        body = "\n".join(line.split("#", 1)[0] for line in m.group(1).splitlines())
        for word in re.findall(r'"(?:[^"\\]|\\.)*"|\S+', body):
            if word.startswith('"') and word.endswith('"'):
                word = word[1:-1].replace('\\"', '"')
            found.append(word.removeprefix("-D"))
    return [d for d in found if "${" not in d and d != "ESP_PLATFORM"]


def build_definitions(sources: Sources, requires: set[str]) -> tuple[list[str], list[str]]:
    """(-D options, notes): the definitions ESP-IDF's build gives the app component's sources
    besides ``build.cmake``'s defaults, read where ESP-IDF sets them (``ESP_PLATFORM`` and
    ``IDF_VER`` in ``build.cmake``; ``DEFINITION_COMPONENTS``; mbedtls's config file when the
    component requires mbedtls). The notes say what is stood in."""
    idf = sources.idf
    major, minor, patch = idf_version(idf)
    version_txt = idf / "version.txt"
    version = (
        version_txt.read_text(encoding="utf-8").strip()
        if version_txt.is_file()
        else (describe(idf) or f"v{major}.{minor}.{patch}")
    )
    defines = ["ESP_PLATFORM", f'IDF_VER="{version[:32]}"']
    for comp in DEFINITION_COMPONENTS:
        cmakelists = idf / "components" / comp / "CMakeLists.txt"
        if cmakelists.is_file():
            defines += _definitions_of(cmakelists.read_text(encoding="utf-8"))
    notes = []
    if "mbedtls" in requires:
        if espressif_mbedtls(idf):
            mbedtls = idf / "components" / "mbedtls" / "CMakeLists.txt"
            defines += _definitions_of(mbedtls.read_text(encoding="utf-8"))
        else:
            notes.append(
                f"{ENV_IDF}={idf}: components/mbedtls/mbedtls is not Espressif's fork of Mbed TLS "
                "(no mbedtls_gcm_context_soft), so MBEDTLS_CONFIG_FILE=mbedtls/esp_config.h is left "
                "out: mbedTLS is checked under the stand-in's own configuration"
            )
    return [f"-D{d}" for d in dict.fromkeys(defines)], notes


def compile_commands_definitions(path: Path, app: Path) -> list[str]:
    """The -D options of the app component's first source in a real configure's
    ``compile_commands.json`` (``idf.py reconfigure`` writes it in the build directory)."""
    import json
    import shlex

    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckSetupError(f"{path}: cannot read it as compile_commands.json ({exc})") from exc
    for entry in entries:
        if Path(entry.get("file", "")).resolve().is_relative_to(app.resolve()):
            args = entry.get("arguments") or shlex.split(entry.get("command", ""))
            return [a for a in args if a.startswith("-D")]
    raise CheckSetupError(
        f"{path}: no source of {app} in it: configure the same generated project "
        "(idf.py -C PROJECT reconfigure) and pass its build/compile_commands.json"
    )


def config_flags(sdkconfig_h: Path) -> list[str]:
    """What ESP-IDF's root CMakeLists.txt adds for C++ from the sdkconfig (GCC)."""
    text = sdkconfig_h.read_text(encoding="utf-8")

    def on(name: str) -> bool:
        return re.search(rf"^#define CONFIG_{name} 1$", text, re.MULTILINE) is not None

    flags = []
    for name, opt in (("SIZE", "-Os"), ("DEBUG", "-Og"), ("NONE", "-O0"), ("PERF", "-O2")):
        if on(f"COMPILER_OPTIMIZATION_{name}"):
            flags.append(opt)
    flags += [
        "-fexceptions" if on("COMPILER_CXX_EXCEPTIONS") else "-fno-exceptions",
        "-frtti" if on("COMPILER_CXX_RTTI") else "-fno-rtti",
    ]
    if on("COMPILER_WARN_WRITE_STRINGS"):
        flags.append("-Wwrite-strings")
    if on("COMPILER_OPTIMIZATION_ASSERTIONS_DISABLE"):
        flags.append("-DNDEBUG")
    if on("COMPILER_DISABLE_GCC12_WARNINGS"):
        flags += ["-Wno-address", "-Wno-use-after-free"]
    if on("COMPILER_DISABLE_GCC13_WARNINGS"):
        flags += ["-Wno-xor-used-as-pow", "-Wno-self-move", "-Wno-dangling-reference"]
    flags += [
        "-fstrict-volatile-bitfields",
        "-fno-jump-tables",
        "-fno-tree-switch-conversion",
        "-fuse-cxa-atexit",
    ]
    return flags


@dataclass
class ComponentFlags:
    """What the generated ``src/CMakeLists.txt`` asks for."""

    include_dirs: list[str]
    options: list[str]
    per_file: dict[str, list[str]] = field(default_factory=dict)  # relative to src/


def _cmake_words(body: str) -> list[str]:
    body = "\n".join(line.split("#", 1)[0] for line in body.splitlines())
    return [w.strip('"') for w in re.findall(r'"[^"]*"|\S+', body)]


def component_flags(cmakelists: Path) -> ComponentFlags:
    """Include directories and compile options of the app component (``src/CMakeLists.txt``)."""
    text = cmakelists.read_text(encoding="utf-8")
    reg = re.search(r"idf_component_register\((.*?)\)", text, re.DOTALL)
    if reg is None:
        raise CheckSetupError(f"{cmakelists}: no idf_component_register(...)")
    words = _cmake_words(reg.group(1))
    include_dirs: list[str] = []
    if "INCLUDE_DIRS" in words:
        for w in words[words.index("INCLUDE_DIRS") + 1 :]:
            if w.isupper():
                break
            include_dirs.append(w)
    options: list[str] = []
    for m in re.finditer(
        r"target_compile_options\(\$\{COMPONENT_LIB\}\s+(?:PRIVATE|PUBLIC)\s+(.*?)\)", text, re.DOTALL
    ):
        options += _cmake_words(m.group(1))
    per_file: dict[str, list[str]] = {}
    for m in re.finditer(r"set_source_files_properties\((.*?)\)", text, re.DOTALL):
        ws = _cmake_words(m.group(1))
        if "COMPILE_OPTIONS" not in ws:
            continue
        files = ws[: ws.index("PROPERTIES")]
        opts = ws[ws.index("COMPILE_OPTIONS") + 1 :]
        for f in files:
            rel = f.replace("${CMAKE_CURRENT_LIST_DIR}/", "")
            per_file[rel] = [o for opt in opts for o in opt.split(";") if o]
    return ComponentFlags(include_dirs, options, per_file)


def host_target_flags(chip: Chip, cxx: str, newlib_config: Path, newlib_include: Path) -> list[str]:
    """Make the host g++ see the headers as the ESP toolchain does (see the module docstring)."""

    def gcc_dir(name: str) -> Optional[str]:
        out = subprocess.run([cxx, f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
        return out if out and Path(out).is_dir() else None

    flags = ["-m32", "-nostdinc", "-nostdinc++"]
    # Host identity off, target identity on (newlib and ESP-IDF headers test these).
    for macro in (
        "__linux__",
        "__linux",
        "linux",
        "__gnu_linux__",
        "__unix__",
        "__unix",
        "unix",
        "__i386__",
        "__i386",
        "i386",
        "__i686__",
        "__i686",
        "i686",
        "__pentiumpro__",
        "__pentiumpro",
        "__SSE__",
        "__SSE2__",
        "__MMX__",
        "__SSE_MATH__",
        "__SSE2_MATH__",
        "__SEG_FS",
        "__SEG_GS",
    ):
        flags.append(f"-U{macro}")
    # xtensa-esp-elf and riscv32-esp-elf: int32_t is long (newlib's stdint follows these).
    for name, value in (
        ("INT32", "long int"),
        ("UINT32", "long unsigned int"),
        ("INT_LEAST32", "long int"),
        ("UINT_LEAST32", "long unsigned int"),
    ):
        flags += [f"-U__{name}_TYPE__", f"-D__{name}_TYPE__={value}"]
    flags += [f"-D{m}" for m in chip.macros]
    flags += ["-isystem", str(newlib_config)]  # newlib.h for a source checkout, before its placeholder
    for name in ("include", "include-fixed"):
        found = gcc_dir(name)
        if found:
            flags += ["-isystem", found]
    flags += ["-isystem", str(newlib_include)]
    return flags


# ---------------------------------------------------------------------------- sdkconfig


def make_sdkconfig_header(sources: Sources, project: Path, chip: Chip, out_dir: Path) -> Path:
    """``sdkconfig.h`` for ``chip`` from the project's ``sdkconfig.defaults`` with ESP-IDF's kconfgen."""
    idf = sources.idf
    out_dir.mkdir(parents=True, exist_ok=True)
    comps = sorted(p for p in (idf / "components").iterdir() if p.is_dir())
    kconfigs = [p / "Kconfig" for p in comps if (p / "Kconfig").is_file()]
    kconfigs.append(sources.websocket / "Kconfig")
    # components/mqtt/CMakeLists.txt names its Kconfig inside the esp-mqtt submodule.
    kconfigs.append(idf / "components" / "mqtt" / "esp-mqtt" / "Kconfig")
    projbuilds = [p / "Kconfig.projbuild" for p in comps if (p / "Kconfig.projbuild").is_file()]
    projbuilds.append(app_component(project) / "Kconfig.projbuild")
    renames = [
        p / name
        for p in comps
        for name in ("sdkconfig.rename", f"sdkconfig.rename.{chip.name}")
        if (p / name).is_file()
    ]
    kconfigs_in = out_dir / "kconfigs.in"
    projbuild_in = out_dir / "kconfigs_projbuild.in"
    kconfigs_in.write_text("".join(f'source "{p}"\n' for p in kconfigs if p.is_file()), encoding="utf-8")
    projbuild_in.write_text("".join(f'source "{p}"\n' for p in projbuilds if p.is_file()), encoding="utf-8")
    major, minor, patch = idf_version(idf)
    header = out_dir / "sdkconfig.h"
    env = {
        "IDF_TARGET": chip.name,
        "IDF_TOOLCHAIN": "gcc",
        "IDF_VERSION": f"{major}.{minor}.{patch}",
        "IDF_INIT_VERSION": f"{major}.{minor}.{patch}",
        "IDF_ENV_FPGA": "",
        "IDF_PATH": str(idf),
        "IDF_MINIMAL_BUILD": "n",
        "COMPONENT_KCONFIGS_SOURCE_FILE": str(kconfigs_in),
        "COMPONENT_KCONFIGS_PROJBUILD_SOURCE_FILE": str(projbuild_in),
        "COMPONENT_SDKCONFIG_RENAMES": ";".join(str(p) for p in renames),
    }
    cmd = [
        sys.executable,
        "-m",
        "kconfgen",
        "--list-separator",
        "semicolon",
        "--kconfig",
        str(idf / "Kconfig"),
        "--sdkconfig-rename",
        str(idf / "sdkconfig.rename"),
        "--config",
        str(out_dir / "sdkconfig"),
        "--defaults",
        str(project / "sdkconfig.defaults"),
    ]
    for name, value in env.items():
        cmd += ["--env", f"{name}={value}"]
    cmd += ["--output", "header", str(header), "--output", "config", str(out_dir / "sdkconfig")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not header.is_file():
        if "No module named kconfgen" in proc.stderr:
            raise CheckSetupError(
                "esp-idf-kconfig is not installed: pip install 'mcpgen[esp32]' "
                "(or: pip install esp-idf-kconfig)"
            )
        raise CheckSetupError(
            f"kconfgen failed for {chip.name} (exit {proc.returncode}):\n"
            f"{' '.join(cmd)}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return header


def _config_values(text: str) -> dict[str, str]:
    """``CONFIG_X`` -> value of an sdkconfig-format text (``# CONFIG_X is not set`` is ``n``)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        unset = re.match(r"#\s*(CONFIG_\w+) is not set$", line)
        if unset:
            values[unset.group(1)] = "n"
        elif line.startswith("CONFIG_") and "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def defaults_not_applied(defaults: Path, sdkconfig: Path) -> list[str]:
    """Lines of ``sdkconfig.defaults`` that the resulting sdkconfig does not have as written.

    kconfgen ignores a symbol this ESP-IDF version does not know (a typo, a renamed option)
    and may override one whose dependencies are not met: both would silently build a
    different firmware than the defaults describe.
    """
    wanted = _config_values(defaults.read_text(encoding="utf-8"))
    got = _config_values(sdkconfig.read_text(encoding="utf-8"))
    problems = []
    for name, value in wanted.items():
        if name not in got:
            problems.append(f"{defaults.name}: {name} is not an option of this ESP-IDF version")
        elif got[name] != value:
            problems.append(f"{defaults.name}: {name}={value} did not apply (the sdkconfig has {got[name]})")
    return problems


# ---------------------------------------------------------------------------- compile


# Options the port links against: without them the calls compile but do not link.
REQUIRED_CONFIG: dict[str, str] = {
    "WS_TRANSPORT": "esp_websocket_client builds nothing without the WebSocket transport",
    "MBEDTLS_CERTIFICATE_BUNDLE": "esp_crt_bundle_attach (wss://) needs the certificate bundle",
}

REQUIRED_CONFIG_MQTT: dict[str, str] = {
    "MQTT_PROTOCOL_5": "the MQTT transport's Response Topic / Correlation Data are MQTT 5 properties",
}


@dataclass
class FileResult:
    source: Path
    command: list[str]
    returncode: int
    output: str

    @property
    def warnings(self) -> list[str]:
        return [line for line in self.output.splitlines() if ": warning: " in line]

    @property
    def ok(self) -> bool:
        """Compiled without any warning: the flags ESP-IDF leaves as warnings
        (-Wno-error=deprecated-declarations, ...) fail the check too, since a deprecated
        API is the next version's build error."""
        return self.returncode == 0 and not self.warnings


@dataclass
class BoardResult:
    board: str
    idf: str
    full: bool
    files: list[FileResult]
    config_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.files) and not self.config_problems


def idf_include_dirs(sources: Sources, chip: Chip) -> list[Path]:
    comps = sources.idf / "components"
    dirs = []
    for rel in IDF_INCLUDE_DIRS:
        path = comps / rel.format(target=chip.name, arch=chip.arch)
        if path.is_dir():
            dirs.append(path.resolve())
    dirs.append((sources.websocket / "include").resolve())
    return dirs


def project_sources(project: Path) -> list[Path]:
    """What the app component compiles: every ``*.cpp`` under ``src/`` (its GLOB_RECURSE) and
    the spec's handlers, compiled where they are (``src/handlers.cmake``)."""
    return sorted(app_component(project).rglob("*.cpp")) + handlers_sources(project)


def handlers_sources(project: Path) -> list[Path]:
    """The handlers file ``src/handlers.cmake`` names (``[]`` without one)."""
    cmake = app_component(project) / "handlers.cmake"
    if not cmake.is_file():
        return []
    m = re.search(r'set\(MCPGEN_USER_HANDLERS\s+"([^"]+)"\)', cmake.read_text(encoding="utf-8"))
    if m is None:
        return []
    text = m.group(1).replace("${CMAKE_CURRENT_LIST_DIR}", str(app_component(project))).replace("\\$", "$")
    return [Path(os.path.normpath(text.replace('\\"', '"').replace("\\\\", "\\")))]


def source_label(project: Path, source: Path) -> str:
    """``source`` relative to ``src/`` when inside it, else its path (the handlers beside the spec)."""
    try:
        return source.relative_to(app_component(project)).as_posix()
    except ValueError:
        return source.as_posix()


_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def common_requirements(idf: Path, chip: Chip) -> set[str]:
    """Components every component requires in this version (``requires_common`` for chips)."""
    build = (idf / "tools" / "cmake" / "build.cmake").read_text(encoding="utf-8")
    lists = re.findall(r"set\(requires_common ([^)]*)\)", build)
    chip_list = [words.split() for words in lists if "linux" not in words.split()]
    if not chip_list:
        raise CheckSetupError(f"{idf}/tools/cmake/build.cmake: no requires_common for chip targets")
    return {*chip_list[0], chip.arch}


def direct_includes(cxx: str, flags: Sequence[str], source: Path) -> set[Path]:
    """The files ``source`` itself includes under ``flags`` (preprocessed: a header inside an
    ``#if`` the configuration leaves out is not one), from the line markers of ``-E``."""
    flags = [f for f in flags if f != "-fsyntax-only"]
    if "-S" in flags:  # the optimizing pass's "-S -o /dev/null"
        i = flags.index("-S")
        flags = flags[:i] + flags[i + 3 :]
    proc = subprocess.run([cxx, *flags, "-E", str(source)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CheckSetupError(f"preprocessing {source} failed:\n{proc.stderr[-2000:]}")
    me = str(source)
    stack: list[str] = []
    found: set[Path] = set()
    for m in re.finditer(r'^# \d+ "([^"]+)"((?: \d)*)$', proc.stdout, re.MULTILINE):
        name, marks = m.group(1), m.group(2).split()
        if "1" in marks:
            if stack and stack[-1] == me:
                found.add(Path(name).resolve())
            stack.append(name)
        elif "2" in marks:
            if stack:
                stack.pop()
            while stack and stack[-1] != name:
                stack.pop()
        elif not stack:
            stack.append(name)
    return found


def requirement_problems(
    project: Path, sources: Sources, chip: Chip, *, cxx: str = "g++", flags: Optional[Sequence[str]] = None
) -> list[str]:
    """ESP-IDF headers the app component includes from components it does not require.

    Every header a source includes directly must come from a component named in
    ``src/CMakeLists.txt`` (REQUIRES / PRIV_REQUIRES), a dependency of ``src/idf_component.yml``
    or a common requirement; ESP-IDF gives a component no other include paths, so anything
    else is "No such file" on the first real build (the check's own include path is wider).
    Only direct includes are checked, and only those the build's configuration reaches (the
    serial build's port file has no Wi-Fi include, a build without device.ota no OTA one):
    what a required component requires publicly is allowed too, and is not resolved here.
    ``flags``: the board's compile flags (``board_flags``); made here when not given.
    """
    if flags is None:
        with tempfile.TemporaryDirectory(prefix="mcpgen-idf-req-") as tmp:
            flags = board_flags(cxx, project, chip, sources, Path(tmp), False)
            return requirement_problems(project, sources, chip, cxx=cxx, flags=flags)
    src = app_component(project)
    allowed = common_requirements(sources.idf, chip) | esp_idf_layout.requirements(src / "CMakeLists.txt")
    allowed |= {name.split("/")[-1] for name in esp_idf_layout.manifest_dependencies(src) if name != "idf"}
    comps = (sources.idf / "components").resolve()
    idf_dirs = idf_include_dirs(sources, chip)
    local_dirs = [src / d for d in component_flags(src / "CMakeLists.txt").include_dirs]
    problems = []
    for source in project_sources(project):
        reached = direct_includes(cxx, flags, source)
        for header in sorted(set(_INCLUDE.findall(source.read_text(encoding="utf-8")))):
            if header == "sdkconfig.h" or any((d / header).is_file() for d in [source.parent, *local_dirs]):
                continue
            found = next((d for d in idf_dirs if (d / header).is_file()), None)
            if found is None or (found / header).resolve() not in reached:
                continue  # a C library header, or one the configuration leaves out
            component = (
                found.relative_to(comps).parts[0] if found.is_relative_to(comps) else sources.websocket.name
            )
            if component not in allowed:
                rel = source_label(project, source)
                fix = (
                    "add it to PRIV_REQUIRES"
                    if found.is_relative_to(comps)
                    else f"add espressif/{component} to src/idf_component.yml"
                )
                problems.append(
                    f'src/{rel}: #include "{header}" is in component {component}, which '
                    f"src/CMakeLists.txt does not require: {fix}"
                )
    return problems


def require_submodules(project: Path, sources: Sources) -> None:
    """Submodules that only some ports need: esp-mqtt once a source includes mqtt_client.h."""
    uses_mqtt = any(
        re.search(r'#include\s*[<"]mqtt_client\.h[>"]', p.read_text(encoding="utf-8"))
        for p in project_sources(project)
    )
    header = sources.idf / "components" / "mqtt" / "esp-mqtt" / "include" / "mqtt_client.h"
    if uses_mqtt and not header.is_file():
        raise CheckSetupError(
            f"{ENV_IDF}={sources.idf}: the port includes mqtt_client.h but the esp-mqtt "
            "submodule is missing: git submodule update --init components/mqtt/esp-mqtt"
        )


def board_flags(
    cxx: str,
    project: Path,
    chip: Chip,
    sources: Sources,
    work: Path,
    full: bool,
    compile_commands: Optional[Path] = None,
) -> list[str]:
    """Every flag but the per-file ones, in the order ESP-IDF's CMake puts them.

    ``full``: compile to (host) assembly, discarded, instead of ``-fsyntax-only``, so that the
    warnings of the optimizer at the sdkconfig's level (``-Os``: ``-Wstringop-truncation``,
    ``-Wformat-truncation``, ``-Wmaybe-uninitialized``, ...) are checked too. The target's
    inline assembly is only copied into the discarded text, never assembled.
    """
    newlib_config = work / "newlib-config"
    newlib_config.mkdir(parents=True, exist_ok=True)
    for name, text in newlib_config_headers(sources).items():
        (newlib_config / name).write_text(text, encoding="utf-8")
    config_dir = work / chip.name / "config"
    make_sdkconfig_header(sources, project, chip, config_dir)
    src = app_component(project)
    comp = component_flags(src / "CMakeLists.txt")
    common, defines = idf_common_flags(sources.idf)
    mode = ["-S", "-o", os.devnull] if full else ["-fsyntax-only"]
    if compile_commands is not None:  # exactly what a real configure gave the app component
        defines = compile_commands_definitions(compile_commands, src)
    else:
        defines += build_definitions(sources, esp_idf_layout.requirements(src / "CMakeLists.txt"))[0]
    flags = [
        *mode,
        *host_target_flags(chip, cxx, newlib_config, sources.newlib_include),
        *common,
        *defines,
        *config_flags(config_dir / "sdkconfig.h"),
    ]
    flags += [f"-I{src / d}" for d in comp.include_dirs]
    flags += [f"-I{config_dir}"]
    flags += [f"-I{d}" for d in idf_include_dirs(sources, chip)]
    flags += comp.options
    return flags


def _rsp_quote(arg: str) -> str:
    return "'" + arg.replace("\\", "\\\\").replace("'", "\\'") + "'" if re.search(r"[\s'\"\\]", arg) else arg


def check_project(
    project: Path,
    sources: Sources,
    board: str,
    work: Path,
    *,
    cxx: str = "g++",
    full: bool = False,
    log: Log = print,
    compile_commands: Optional[Path] = None,
) -> BoardResult:
    """Compiles every source of the generated project for ``board``; returns each file's result.

    The common flags go to ``WORK/<board>.rsp`` (``g++ @file``), so that a failure can be
    reproduced by hand with a short command.
    """
    chip = CHIPS[board]
    rsp = work / f"{board}{'-full' if full else ''}.rsp"
    rsp.parent.mkdir(parents=True, exist_ok=True)
    flags = board_flags(cxx, project, chip, sources, work, full, compile_commands)
    rsp.write_text("\n".join(_rsp_quote(f) for f in flags) + "\n", encoding="utf-8")
    per_file = component_flags(app_component(project) / "CMakeLists.txt").per_file
    results = []
    for source in project_sources(project):
        rel = source_label(project, source)
        cmd = [cxx, f"@{rsp}", *per_file.get(rel, []), str(source)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=project)
        results.append(FileResult(source, cmd, proc.returncode, proc.stdout + proc.stderr))
        result = results[-1]
        warned = f"{len(result.warnings)} warning(s)"
        status = "ok" if result.ok else ("FAILED" if proc.returncode else warned)
        log(f"  {board}{' -Os' if full else ''}: src/{rel}: {status}")
    config = work / chip.name / "config"
    problems = defaults_not_applied(project / "sdkconfig.defaults", config / "sdkconfig")
    problems += requirement_problems(project, sources, chip, cxx=cxx, flags=flags)
    problems += layout_problems(project, log)
    header = (config / "sdkconfig.h").read_text(encoding="utf-8")
    required = dict(REQUIRED_CONFIG)
    if re.search(r"^#define CONFIG_MCPGEN_TRANSPORT_MQTT 1$", header, re.MULTILINE):
        required.update(REQUIRED_CONFIG_MQTT)
    problems += [
        f"sdkconfig.h: CONFIG_{name} is not set: {why}"
        for name, why in required.items()
        if not re.search(rf"^#define CONFIG_{name} 1$", header, re.MULTILINE)
    ]
    for problem in problems:
        log(f"  {board}: {problem}")
    major, minor, patch = idf_version(sources.idf)
    return BoardResult(board, f"{major}.{minor}.{patch}", full, results, problems)


def require_tools(cxx: str = "g++") -> None:
    if shutil.which(cxx) is None:
        raise CheckSetupError(f"{cxx} not found (apt-get install g++)")


# ---------------------------------------------------------------------------- API listing

# What the port calls from ESP-IDF (drivers included), FreeRTOS and esp_websocket_client (by name prefix).
API_CALL = re.compile(r"\b((?:esp|nvs|uart|usb_serial_jtag)_\w+|(?:x|v|ux|pv)[A-Z]\w*)\s*\(")


# The fields of ESP-IDF types the port reads or sets (the compiler checks that they exist;
# the listing shows their types per version).
PORT_FIELDS: dict[str, tuple[str, ...]] = {
    "esp_websocket_client_config_t": (
        "uri",
        "headers",
        "buffer_size",
        "task_stack",
        "reconnect_timeout_ms",
        "network_timeout_ms",
        "crt_bundle_attach",
    ),
    "esp_websocket_event_data_t": ("data_ptr", "data_len", "op_code", "payload_len", "payload_offset", "fin"),
    "wifi_sta_config_t": ("ssid", "password"),
    "wifi_event_sta_disconnected_t": ("reason",),
    "uart_config_t": ("baud_rate", "data_bits", "parity", "stop_bits", "flow_ctrl", "source_clk"),
    "usb_serial_jtag_driver_config_t": ("tx_buffer_size", "rx_buffer_size"),
}


def port_api(
    project: Path,
    sources: Sources,
    board: str,
    work: Path,
    *,
    cxx: str = "g++",
    compile_commands: Optional[Path] = None,
) -> dict[str, str]:
    """The declaration (or macro) behind every ESP-IDF call of the port, as this version has it.

    Functions come from the preprocessed port (whitespace collapsed, attributes kept);
    function-like macros (``xQueueSend``, ``xTaskCreate``, ...) from the headers' ``#define``.
    Comparing two versions' listings shows every signature change the port is exposed to,
    including those an implicit conversion would let compile.
    """
    chip = CHIPS[board]
    flags = board_flags(cxx, project, chip, sources, work, False, compile_commands)
    flags = [f for f in flags if f != "-fsyntax-only"]
    active = active_port_sources(project, work / chip.name / "config" / "sdkconfig.h")
    names = sorted(
        {name for source in active for name in API_CALL.findall(source.read_text(encoding="utf-8"))}
    )
    # One unit that includes every active port file: only preprocessed, never compiled.
    unit = work / "port_api_unit.cpp"
    unit.write_text("".join(f'#include "{source}"\n' for source in active), encoding="utf-8")
    proc = subprocess.run([cxx, *flags, "-E", "-dD", str(unit)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CheckSetupError(
            f"preprocessing the port ({', '.join(p.name for p in active)}) failed:\n{proc.stderr[-2000:]}"
        )
    text = proc.stdout
    macros: dict[str, str] = {}
    for m in re.finditer(r"^#define (\w+)(\([^)]*\))[ \t]+(.*)$", text, re.MULTILINE):
        macros[m.group(1)] = f"#define {m.group(1)}{m.group(2)} {' '.join(m.group(3).split())}"
    code = " ".join(line for line in text.splitlines() if not line.startswith("#"))
    code = " ".join(code.split())
    api: dict[str, str] = {}
    for name in names:
        if name in macros:
            api[name] = macros[name]
            continue
        # A declaration or inline definition: a return type, the name, the parameters.
        # The headers come first in the unit, so the first match is the header's.
        pattern = rf"(?:^|[;{{}}])\s*([^;{{}}]*?\w[\s*]+{name} ?\([^;{{}}]*?\))[^;{{}}]*?[;{{]"
        for decl in re.finditer(pattern, code):
            head = decl.group(1).strip()
            if "=" not in head.split(name)[0] and not re.match(r"(return|if|else|do)\b", head):
                api[name] = head
                break
    for struct, fields in PORT_FIELDS.items():
        if not re.search(rf"\b{struct}\b", code):
            continue  # a type of a transport (or port branch) this build leaves out
        body = _typedef_body(code, struct)
        for fld in fields:
            found = re.search(rf"(?:^|[;{{}}])\s*([^;{{}}]*?\b{fld}\b[^;{{}}]*?);", body) if body else None
            api[f"{struct}.{fld}"] = found.group(1).strip() if found else "(not found)"
    return api


def active_port_sources(project: Path, sdkconfig_h: Path) -> list[Path]:
    """The port's ``*.cpp`` files, without the transport the sdkconfig leaves out (each
    transport file is one ``#if CONFIG_MCPGEN_TRANSPORT_<NAME>`` block)."""
    header = sdkconfig_h.read_text(encoding="utf-8")
    active = []
    for source in sorted((app_component(project) / "port").glob("*.cpp")):
        text = source.read_text(encoding="utf-8")
        guard = re.search(r"^#if (CONFIG_MCPGEN_TRANSPORT_\w+)$", text, re.MULTILINE)
        if guard is None or re.search(rf"^#define {guard.group(1)} 1$", header, re.MULTILINE):
            active.append(source)
    return active


def _typedef_body(code: str, name: str) -> Optional[str]:
    """The text between the braces of ``typedef struct {...} name;`` (nested braces kept)."""
    end = code.find(f"}} {name};")
    if end < 0:
        return None
    depth = 0
    for i in range(end, -1, -1):
        if code[i] == "}":
            depth += 1
        elif code[i] == "{":
            depth -= 1
            if depth == 0:
                return code[i + 1 : end]
    return None


# The device configuration the projects are generated with: the longest values Wi-Fi allows
# (SSID 32 bytes, WPA2 passphrase 64), so that code copying them is checked at its limits.
CHECK_CONFIG: dict[str, str] = {
    "MCPGEN_WIFI_SSID": "mcpgen-check-ssid-of-32-bytes-xx",
    "MCPGEN_WIFI_PASSWORD": "p" * 64,
    "MCPGEN_BACKEND_URL": "wss://gateway.example.test:8765/mcp/v1",
    "MCPGEN_BACKEND_TOKEN": "t" * 128,
}

# The same for the MQTT transport (docs/mqtt.md): TLS to the broker with a CA of its own,
# a login, a two-level prefix and the hello-less mode off (the hello code is compiled).
CHECK_CONFIG_MQTT: dict[str, str] = {
    **CHECK_CONFIG,
    "MCPGEN_TRANSPORT": "mqtt",
    "MCPGEN_BACKEND_URL": "mqtts://broker.example.test:8883",
    "MCPGEN_MQTT_USERNAME": "kitchen-lamp",
    "MCPGEN_MQTT_PASSWORD": "p" * 64,
    "MCPGEN_MQTT_TOPIC_PREFIX": "site/7",
    "MCPGEN_MQTT_DEVICE_ID": "kitchen-lamp",
    "MCPGEN_MQTT_HELLO": "y",
}
# The serial transport (docs/firmware.md) on UART0 at a speed of its own, and on the
# USB-Serial-JTAG port of the chips that have one (SERIAL_USB_CHIPS).
CHECK_CONFIG_SERIAL: dict[str, str] = {
    **CHECK_CONFIG,
    "MCPGEN_TRANSPORT": "serial",
    "MCPGEN_SERIAL_PORT": "uart0",
    "MCPGEN_SERIAL_BAUD": "921600",
}
CHECK_CONFIG_SERIAL_USB: dict[str, str] = {
    **CHECK_CONFIG,
    "MCPGEN_TRANSPORT": "serial",
    "MCPGEN_SERIAL_PORT": "usb_serial_jtag",
}
SERIAL_USB_CHIPS = ("esp32c3", "esp32s3")
TRANSPORT_CONFIG: dict[str, dict[str, str]] = {
    "websocket": CHECK_CONFIG,
    "mqtt": CHECK_CONFIG_MQTT,
    "serial": CHECK_CONFIG_SERIAL,
    "serial-usb": CHECK_CONFIG_SERIAL_USB,
}
# A certificate-shaped text for MCPGEN_MQTT_CA_FILE: only its embedding is compiled.
_CHECK_CA = "-----BEGIN CERTIFICATE-----\nTUNQR0VOIENIRUNL\n-----END CERTIFICATE-----\n"


def check_config(transport: str, work: Path) -> dict[str, str]:
    """The generation environment of the check for ``transport``."""
    config = dict(TRANSPORT_CONFIG[transport])
    if transport == "mqtt":
        ca = work / "check-ca.pem"
        ca.parent.mkdir(parents=True, exist_ok=True)
        ca.write_text(_CHECK_CA, encoding="ascii")
        config["MCPGEN_MQTT_CA_FILE"] = str(ca)
    return config


def ota_variant(spec_path: Path, work: Path) -> Path:
    """``work/ota/<stem>_ota.yaml``: a copy of ``spec_path`` (and its handlers) with
    ``device.ota: true``, so the default check also compiles the OTA handler
    (``port/mcpgen_esp_ota.cpp``)."""
    text = spec_path.read_text(encoding="utf-8")
    with_ota, n = re.subn(r"^device:[ \t]*\n", "device:\n  ota: true\n", text, count=1, flags=re.MULTILINE)
    if n != 1 or re.search(r"^  ota:", text, re.MULTILINE):
        raise CheckSetupError(
            f"{spec_path}: cannot make an OTA variant (expected a block `device:` section without `ota:`)"
        )
    out = work / "ota"
    out.mkdir(parents=True, exist_ok=True)
    variant = out / f"{spec_path.stem}_ota.yaml"  # its own project directory in run_check
    variant.write_text(with_ota, encoding="utf-8")
    handlers = spec_path.with_name(f"{spec_path.stem}_handlers.cpp")
    if handlers.is_file():
        shutil.copyfile(handlers, out / f"{variant.stem}_handlers.cpp")
    return variant


def run_check(
    spec_paths: Iterable[Path],
    sources: Sources,
    boards: Sequence[str],
    work: Path,
    *,
    cxx: str = "g++",
    full: bool = True,
    log: Log = print,
    transports: Sequence[str] = ("websocket",),
    compile_commands: Optional[Path] = None,
) -> list[BoardResult]:
    """Generates the ESP32 project of each spec (once per transport) and checks it for each board.

    Every file is checked with ``-fsyntax-only``; with ``full`` also compiled at the
    sdkconfig's optimization level (see ``board_flags``).
    """
    from mcpgen.codegen.targets.esp32 import generate_project

    require_tools(cxx)
    sources.validate()
    results = []
    for spec in spec_paths:
        for transport in transports:
            name = spec.stem if transport == "websocket" else f"{spec.stem}-{transport}"
            project = generate_project(
                spec, work / name, log=lambda _: None, environ=check_config(transport, work / name)
            )
            require_submodules(project, sources)
            for board in boards:
                if transport == "serial-usb" and CHIPS[board].name not in SERIAL_USB_CHIPS:
                    continue  # the ESP32 has no USB-Serial-JTAG port
                for mode in (False, True) if full else (False,):
                    results.append(
                        check_project(
                            project,
                            sources,
                            board,
                            work / name,
                            cxx=cxx,
                            full=mode,
                            log=log,
                            compile_commands=compile_commands,
                        )
                    )
    return results


def main(argv: Optional[Sequence[str]] = None) -> int:
    from mcpgen.codegen import resources

    parser = argparse.ArgumentParser(
        prog="python -m mcpgen.codegen.checks.esp_idf_headers",
        description="Compile the generated ESP32 firmware (port, core, generated code, handlers) with the "
        "host g++ against the headers of local ESP-IDF, esp-protocols and newlib checkouts.",
    )
    parser.add_argument(
        "--idf",
        type=Path,
        default=os.environ.get(ENV_IDF),
        help=f"ESP-IDF checkout with submodules (default ${ENV_IDF})",
    )
    parser.add_argument(
        "--protocols",
        type=Path,
        default=os.environ.get(ENV_PROTOCOLS),
        help=f"espressif/esp-protocols checkout (default ${ENV_PROTOCOLS})",
    )
    parser.add_argument(
        "--newlib",
        type=Path,
        default=os.environ.get(ENV_NEWLIB),
        help=f"ESP toolchain include dir or espressif/newlib-esp32 checkout (default ${ENV_NEWLIB})",
    )
    parser.add_argument(
        "--board", action="append", choices=sorted(CHIPS), help="board to check (repeatable; default all)"
    )
    parser.add_argument(
        "--spec",
        action="append",
        type=Path,
        help="spec to generate the project from (repeatable; default the example specs "
        "and desk_lamp with device.ota: true)",
    )
    parser.add_argument(
        "--transport",
        action="append",
        choices=sorted(TRANSPORT_CONFIG),
        help="transport of the generated project (repeatable; default all; with --api the "
        "listing's, default websocket)",
    )
    parser.add_argument(
        "--syntax-only",
        action="store_true",
        help="only g++ -fsyntax-only (skip the pass at the sdkconfig's optimization level)",
    )
    parser.add_argument(
        "--api",
        action="store_true",
        help="print the declarations of the ESP-IDF functions and macros the port calls, as "
        "this version has them (diff two versions' listings), and exit",
    )
    parser.add_argument(
        "--ota",
        action="store_true",
        help="with --api: list the build of the spec with device.ota: true (the update handler's calls too)",
    )
    parser.add_argument(
        "--compile-commands",
        type=Path,
        help="take the -D definitions from this compile_commands.json of a real ESP-IDF "
        "configure of the same generated project, instead of reading them from the "
        "ESP-IDF sources",
    )
    parser.add_argument("--cxx", default="g++", help="host C++ compiler (default g++)")
    parser.add_argument(
        "--keep",
        type=Path,
        help="work in this directory and keep it (project, sdkconfig.h, "
        "<board>.rsp flag files for g++ @FILE)",
    )
    args = parser.parse_args(argv)
    if args.idf is None or args.protocols is None or args.newlib is None:
        parser.error(f"set {', '.join(ENV_NAMES)} (or --idf, --protocols, --newlib)")
    sources = Sources(args.idf, args.protocols, args.newlib)
    specs = args.spec or [resources.example_spec("default_device"), resources.example_spec("desk_lamp")]
    boards = args.board or sorted(CHIPS)
    with tempfile.TemporaryDirectory(prefix="mcpgen-idf-check-") as tmp:
        work = args.keep or Path(tmp)
        if args.api:
            from mcpgen.codegen.targets.esp32 import generate_project

            try:
                sources.validate()
                spec = ota_variant(specs[0], work / "api") if args.ota else specs[0]
                for transport in args.transport or ["websocket"]:
                    where = work / "api" / transport
                    project = generate_project(
                        spec, where, log=lambda _: None, environ=check_config(transport, where)
                    )
                    require_submodules(project, sources)
                    board = boards[0]
                    if transport == "serial-usb" and board not in SERIAL_USB_CHIPS:
                        board = SERIAL_USB_CHIPS[0]  # the ESP32 has no USB-Serial-JTAG port
                    listing = port_api(
                        project, sources, board, where, cxx=args.cxx, compile_commands=args.compile_commands
                    )
                    ota = "yes" if args.ota else "no"
                    print(f"# {spec.name}, transport {transport}, device.ota {ota}, {board}")
                    for name, decl in listing.items():
                        print(f"{name}: {decl}")
            except CheckSetupError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            return 0
        try:
            if not args.spec:  # the update handler is compiled only with device.ota
                specs.append(ota_variant(resources.example_spec("desk_lamp"), work))
            results = run_check(
                specs,
                sources,
                boards,
                work,
                cxx=args.cxx,
                full=not args.syntax_only,
                transports=args.transport or sorted(TRANSPORT_CONFIG, reverse=True),
                compile_commands=args.compile_commands,
            )
            if args.compile_commands is None:
                for note in build_definitions(sources, {"mbedtls"})[1]:
                    print(f"note: {note}", file=sys.stderr)
        except CheckSetupError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        failed = [f for r in results for f in r.files if not f.ok]
        problems = sorted({p for r in results for p in r.config_problems})
        for p in problems:
            print(f"sdkconfig: {p}", file=sys.stderr)
        for f in failed:
            print(f"\n--- {f.source}\n$ {' '.join(f.command)}\n{f.output}", file=sys.stderr)
        if failed and not args.keep:
            print("(run with --keep DIR to keep the project and the .rsp flag files)", file=sys.stderr)
        total = sum(len(r.files) for r in results)
        idf_desc = describe(sources.idf) or (results[0].idf if results else "")
        print(
            f"ESP-IDF {idf_desc}, esp_websocket_client {component_version(sources.websocket)}, "
            f"newlib {newlib_version(sources)}: {total - len(failed)} of {total} compilations passed "
            f"({', '.join(boards)}; {', '.join(args.transport or sorted(TRANSPORT_CONFIG, reverse=True))}; "
            f"-fsyntax-only{'' if args.syntax_only else ' and optimized'})"
        )
        return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
