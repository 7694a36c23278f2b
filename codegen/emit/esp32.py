"""The ESP32 project: every text file of the PlatformIO/ESP-IDF project of a spec.

Project layout (``targets.esp32.project_dir(outdir)`` = ``outdir/firmware/platformio``)::

    platformio.ini        one env per board: esp32, esp32s3, esp32c3 (framework = espidf)
    CMakeLists.txt        ESP-IDF project file; names src/ for idf.py (targets/esp_idf_layout.py)
    partitions.csv        nvs, phy_init, factory app at 0x10000 (device.ota: otadata, ota_0, ota_1)
    sdkconfig.defaults    incl. the "mcpgen device" settings from MCPGEN_* environment variables
    sdkconfig.defaults.esp32   device.ota.public_key only: signed apps (esp32_ota.py)
    src/                  CMakeLists.txt, Kconfig.projbuild, idf_component.yml,
                          mcpgen/ (core), generated/ (tables), port/, handlers.cmake

Pure, as all of ``emit/``: :func:`emit` reads only the package's firmware templates. What
comes from the user's machine is found by ``targets/esp32.py`` and handed in as
:class:`ProjectInputs` (the ``MCPGEN_*`` settings, where the handlers file is, the MQTT CA
certificate's text); the target writes the files, the OTA public key (binary) and the
settings into an existing ``sdkconfig`` (:func:`with_settings`), and runs PlatformIO.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from string import Template
from typing import Optional

from mcpgen.codegen import resources
from mcpgen.codegen.emit import esp32_ota, esp32_transport
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.names import device_slug

DEFAULT_PLATFORM = "espressif32 @ ^6.9.0"  # ESP-IDF 5.3+; MCPGEN_PIO_PLATFORM overrides

# Environment variables that configure the device (Kconfig symbol, secret?).
CONFIG_ENV: dict[str, tuple[str, bool]] = {
    "MCPGEN_WIFI_SSID": ("CONFIG_MCPGEN_WIFI_SSID", False),
    "MCPGEN_WIFI_PASSWORD": ("CONFIG_MCPGEN_WIFI_PASSWORD", True),
    "MCPGEN_BACKEND_URL": ("CONFIG_MCPGEN_BACKEND_URL", False),
    "MCPGEN_BACKEND_TOKEN": ("CONFIG_MCPGEN_BACKEND_TOKEN", True),
}


@dataclass(frozen=True)
class ProjectInputs:
    """What the project's files need besides the model, found by ``targets/esp32.py``."""

    spec_file: str
    """The spec's file name (``platformio.ini`` says which spec it was made from)."""
    handlers_from_project: str
    """The user's ``<stem>_handlers.cpp`` relative to the project directory (POSIX form), or
    absolute when there is no relative path (another drive on Windows)."""
    handlers_from_src: str
    """The same file relative to the project's ``src/`` (what ``src/handlers.cmake`` sets)."""
    settings: Mapping[str, str] = field(default_factory=dict)
    """The ``MCPGEN_*`` settings: the spec's ``firmware:`` section, overridden by the environment."""
    platform: str = DEFAULT_PLATFORM
    """PlatformIO's ``platform`` line (``MCPGEN_PIO_PLATFORM``)."""
    mqtt_ca_pem: str = ""
    """The text of ``MCPGEN_MQTT_CA_FILE`` ("" without one), read and checked by the target."""
    mqtt_ca_source: str = ""
    """That file's name, for the header's comment."""


def kconfig_string(value: str) -> str:
    """``value`` as a quoted Kconfig string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def config_values(settings: Mapping[str, str]) -> dict[str, Optional[str]]:
    """The device settings of :data:`CONFIG_ENV` in ``settings`` (None: not set)."""
    return {name: settings.get(name) for name in CONFIG_ENV}


def emit(spec: Spec, inputs: ProjectInputs, tables: Mapping[str, str]) -> dict[str, str]:
    """Relative path (under the project directory) -> text of every file of the project.

    ``tables``: the ``cpp`` part (``BuildContext.emit("cpp")``), placed in ``src/generated/``.
    Raises :class:`BuildError` on a setting the build cannot take (a transport, a port).
    """
    root = resources.firmware_template()
    tpl = root / "platformio"
    port = root / "ports" / "esp_idf"
    core = root / "core" / "mcpgen"
    settings = inputs.settings
    values = config_values(settings)
    config_lines = [
        f"{symbol}={kconfig_string(values[name] or '')}" for name, (symbol, _secret) in CONFIG_ENV.items()
    ]
    transport = esp32_transport.transport_of(settings)
    config_lines += esp32_transport.sdkconfig_lines(transport, settings, kconfig_string)
    config_lines += esp32_ota.sdkconfig_lines(spec, kconfig_string)
    fields = {
        "device_name": spec.device.name,
        "device_version": spec.device.version,
        "spec_file": inputs.spec_file,
        "fingerprint": spec.fingerprint,
        "slug": device_slug(spec.device.name),
        "platform": inputs.platform,
        "default_env": "esp32",
        "handlers_rel": inputs.handlers_from_project,
        "mcpgen_config": "\n".join(config_lines),
    }

    def fill(name: str) -> str:
        return Template((tpl / name).read_text(encoding="utf-8")).substitute(fields)

    files: dict[str, str] = {
        "platformio.ini": fill("platformio.ini.in"),
        "CMakeLists.txt": fill("CMakeLists.txt.in"),
        "sdkconfig.defaults": fill("sdkconfig.defaults.in"),
        "partitions.csv": esp32_ota.partition_table(spec),
        **({"sdkconfig.defaults.esp32": esp32_ota.signed_sdkconfig(spec)} if spec.ota_signing else {}),
        "src/CMakeLists.txt": component_cmakelists(
            (port / "CMakeLists.txt").read_text(encoding="utf-8"), transport, spec.device.ota
        ),
        "src/Kconfig.projbuild": (port / "Kconfig.projbuild").read_text(encoding="utf-8"),
        "src/idf_component.yml": esp32_transport.component_manifest(
            (port / "idf_component.yml").read_text(encoding="utf-8"), transport
        ),
        "src/port/mqtt_ca_pem.h": esp32_transport.ca_header(inputs.mqtt_ca_pem, inputs.mqtt_ca_source),
        "src/handlers.cmake": handlers_cmake(inputs.handlers_from_src),
    }
    for src in sorted(port.iterdir()):  # the port: shared part, both transports, their seam
        if src.suffix in (".h", ".cpp"):
            files[f"src/port/{src.name}"] = src.read_text(encoding="utf-8")
    for src in sorted(core.iterdir()):
        if src.suffix in (".h", ".cpp"):
            files[f"src/mcpgen/{src.name}"] = src.read_text(encoding="utf-8")
    for rel, text in tables.items():
        files[f"src/generated/{PurePath(rel).name}"] = text
    return files


_REQUIRES_MARK = "                  # @mcpgen: the transport's and device.ota's components"


def component_cmakelists(template: str, transport: str, ota: bool) -> str:
    """``src/CMakeLists.txt``: the port's (``template``), with the transport's and OTA's
    requirements in it."""
    if _REQUIRES_MARK not in template:
        port = resources.firmware_template() / "ports" / "esp_idf" / "CMakeLists.txt"
        raise BuildError(
            f"{port}: no line {_REQUIRES_MARK.strip()!r} "
            "to put the requirements in (the firmware template is damaged: reinstall mcpgen)"
        )
    return template.replace(_REQUIRES_MARK, esp32_transport.requires_lines(transport, ota))


def _cmake_escape(text: str) -> str:
    """Escapes ``text`` for a quoted CMake argument."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")


def handlers_cmake(handlers_from_src: str) -> str:
    """``src/handlers.cmake``: the user's handlers file (its path relative to ``src/``, or
    absolute), compiled in place."""
    path = _cmake_escape(handlers_from_src)
    if not PurePath(handlers_from_src).is_absolute():
        path = "${CMAKE_CURRENT_LIST_DIR}/" + path
    return (
        "# Generated by codegen: the spec's handlers file, compiled where it is (not copied).\n"
        "# Edit that file; codegen rewrites this one on every build.\n"
        f'set(MCPGEN_USER_HANDLERS "{path}")\n'
    )


def with_settings(text: str, values: Mapping[str, Optional[str]]) -> str:
    """``text`` of an existing ``sdkconfig.<env>`` with the device settings that are set in
    ``values`` (:func:`config_values`) put in (``sdkconfig.defaults`` only seeds new ones)."""
    new = text
    for name, value in values.items():
        if value is None:
            continue
        symbol = CONFIG_ENV[name][0]
        line = f"{symbol}={kconfig_string(value)}"
        pattern = re.compile(rf"^(# )?{symbol}[= ].*$", re.MULTILINE)
        literal = line.replace("\\", "\\\\")  # a replacement template: backslashes stay literal
        new = pattern.sub(literal, new) if pattern.search(new) else new + line + "\n"
    return new
