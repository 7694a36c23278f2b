"""What `device.ota: true` makes codegen emit for the ESP-IDF port (docs/ota.md, "ESP-IDF"):
the two-slot partition table, the sdkconfig lines of app rollback, the handler's registration
and its hooks in the port. No ESP-IDF needed; tests/esp32/test_esp_idf_headers.py compiles
the same project against the real headers where checkouts are available.

Golden files in tests/golden/esp32_ota/; refresh them after an intended change with
``UPDATE_GOLDEN=1 python -m pytest tests/esp32/test_esp32_ota.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from esp32_testlib import REPO, TOOLSPEC

from mcpgen.codegen import resources
from mcpgen.codegen.checks import esp_idf_headers as chk
from mcpgen.codegen.spec.ota import OTA_HANDLER
from mcpgen.codegen.targets import esp32 as be

GOLDEN = REPO / "tests" / "golden" / "esp32_ota"
FLASH_SIZE = 4 * 1024 * 1024
ENV = {
    "MCPGEN_WIFI_SSID": "lab-net",
    "MCPGEN_WIFI_PASSWORD": "secret-pass",
    "MCPGEN_BACKEND_URL": "ws://192.168.1.10:8765/mcp",
    "MCPGEN_BACKEND_TOKEN": "tok-1",
}
OTA_LINES = [
    "CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE=y",
    "CONFIG_APP_PROJECT_VER_FROM_CONFIG=y",
    'CONFIG_APP_PROJECT_VER="0.3.1"',
    "CONFIG_ESP_HTTPS_OTA_ALLOW_HTTP=y",
]


def _quiet(_: str) -> None:
    pass


def _ota_lamp(tmp: Path) -> Path:
    """desk_lamp with `ota: true`, its handlers beside it (a relative name keeps banners stable)."""
    text = (TOOLSPEC / "desk_lamp.yaml").read_text(encoding="utf-8")
    spec = tmp / "desk_lamp.yaml"
    text = text.replace("  version: 0.3.1\n", "  version: 0.3.1\n  ota: true\n", 1)
    spec.write_text(text, encoding="utf-8")
    shutil.copyfile(TOOLSPEC / "desk_lamp_handlers.cpp", tmp / "desk_lamp_handlers.cpp")
    return spec


@pytest.fixture(scope="module")
def ota_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ota_lamp")
    return be.generate_project(_ota_lamp(tmp), tmp / "out", log=_quiet, environ=dict(ENV))


@pytest.fixture(scope="module")
def plain_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("plain_lamp")
    return be.generate_project(TOOLSPEC / "desk_lamp.yaml", tmp / "out", log=_quiet, environ=dict(ENV))


def partitions(csv: Path) -> list[tuple[str, str, str, int, int]]:
    rows = []
    for raw in csv.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, kind, sub, offset, size = (c.strip() for c in line.split(","))
            rows.append((name, kind, sub, int(offset, 0), int(size, 0)))
    return rows


def test_ota_spec_gets_the_two_slot_partition_table(ota_project: Path) -> None:
    rows = partitions(ota_project / "partitions.csv")
    by_sub = {sub: (offset, size) for _, _, sub, offset, size in rows}
    assert [r[2] for r in rows if r[1] == "app"] == ["ota_0", "ota_1"]  # factory-less
    assert "factory" not in by_sub
    assert by_sub["ota"][1] == 0x2000  # otadata: two 4 KB sectors
    assert by_sub["ota_0"][1] == by_sub["ota_1"][1]  # either slot takes any image
    # Apps on 64 KB boundaries (the MMU page), nothing overlaps, all past the table, 4 MB flash.
    assert all(offset % 0x10000 == 0 for _, kind, _, offset, _ in rows if kind == "app")
    spans = sorted((offset, offset + size) for *_, offset, size in rows)
    assert spans[0][0] >= be.PARTITION_TABLE_OFFSET + 0x1000
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    assert spans[-1][1] <= FLASH_SIZE
    assert be.app_offset(ota_project / "partitions.csv") == 0x10000
    assert be.partition_offset(ota_project / "partitions.csv", "data", "ota") == 0xD000


def test_a_spec_without_ota_keeps_the_single_factory_table(plain_project: Path) -> None:
    rows = partitions(plain_project / "partitions.csv")
    assert [r[2] for r in rows if r[1] == "app"] == ["factory"]
    assert be.partition_offset(plain_project / "partitions.csv", "data", "ota") is None
    text = (plain_project / "sdkconfig.defaults").read_text(encoding="utf-8")
    assert not [line for line in OTA_LINES if line in text.splitlines()]
    assert "ROLLBACK" not in text


def test_ota_sdkconfig_turns_on_rollback_and_carries_the_spec_version(ota_project: Path) -> None:
    lines = (ota_project / "sdkconfig.defaults").read_text(encoding="utf-8").splitlines()
    for line in OTA_LINES:
        assert line in lines, line
    assert 'CONFIG_PARTITION_TABLE_CUSTOM_FILENAME="partitions.csv"' in lines


@pytest.mark.parametrize("name", ["partitions.csv", "sdkconfig.defaults"])
def test_ota_project_files_match_golden(ota_project: Path, name: str) -> None:
    text = (ota_project / name).read_text(encoding="utf-8")
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.read_text(encoding="utf-8") == text, f"{name} differs from {golden}"


def test_the_port_implements_and_registers_the_update_handler(ota_project: Path) -> None:
    src = ota_project / "src"
    header = (src / "generated" / "mcp_tools.h").read_text(encoding="utf-8")
    table = (src / "generated" / "mcp_tools.cpp").read_text(encoding="utf-8")
    assert "#define MCPGEN_SPEC_OTA 1" in header
    proto = re.search(rf"mcpgen::Result {OTA_HANDLER}\(([^)]*)\);", header)
    assert proto is not None
    assert f"tools::{OTA_HANDLER}" in table  # the generated tool table calls it
    # The port defines it with exactly the prototype's parameters, inside the OTA guard.
    port = (src / "port" / "mcpgen_esp_ota.cpp").read_text(encoding="utf-8")
    guarded = port.split("#if defined(MCPGEN_SPEC_OTA)", 1)[1]
    assert f"mcpgen::Result {OTA_HANDLER}({proto.group(1)}) {{" in guarded
    for call in (
        "esp_https_ota_begin(",
        "esp_https_ota_get_img_desc(",
        "esp_https_ota_perform(",
        "esp_https_ota_finish(",
        "esp_https_ota_abort(",
        "esp_ota_mark_app_valid_cancel_rollback(",
        "esp_ota_mark_app_invalid_rollback_and_reboot(",
        "CONFIG_IDF_FIRMWARE_CHIP_ID",
    ):
        assert call in guarded, call
    # The hooks are called from the worker and app_main, and the components are required.
    main = (src / "port" / "mcpgen_esp_port.cpp").read_text(encoding="utf-8")
    for hook in ("mcpgen_esp::ota_boot();", "mcpgen_esp::ota_observe(", "mcpgen_esp::ota_replied("):
        assert hook in main, hook
    requires = chk.component_flags(src / "CMakeLists.txt")  # parses; the requirement words:
    assert requires.include_dirs == [".", "generated"]
    cmake = (src / "CMakeLists.txt").read_text(encoding="utf-8")
    reg = re.search(r"idf_component_register\((.*?)\)", cmake, re.DOTALL)
    assert reg is not None
    for component in (
        "esp_https_ota",
        "esp_http_client",
        "app_update",
        "bootloader_support",
        "esp_app_format",
        "esp_partition",
        "esp_timer",
    ):
        assert component in chk._cmake_words(reg.group(1)), component


MARKER_DRIVER = r"""
// Writes a marker made by the ports' macro between filler bytes to argv[1]; then prints
// what mcpgen_ota::find_marker finds in argv[2] ("-" when it finds none).
#include <stdio.h>
#include <stdlib.h>
#include "mcpgen/ota_marker.h"
static const char kMarker[] = MCPGEN_OTA_IMAGE_MARKER("desk-lamp", "0.4.0", "0123456789abcdef");
int main(int argc, char** argv) {
  if (argc != 3) return 2;
  FILE* out = fopen(argv[1], "wb");
  if (out == nullptr) return 2;
  fputs("\x7f" "ELF...MCPGEN-OTA-IMAGE|cut", out);
  fwrite(kMarker, 1, sizeof kMarker, out);
  fclose(out);
  static char data[1 << 16];
  FILE* in = fopen(argv[2], "rb");
  if (in == nullptr) return 2;
  size_t n = fread(data, 1, sizeof data, in);
  fclose(in);
  mcpgen_ota::Marker m;
  if (!mcpgen_ota::find_marker(data, n, &m)) return puts("-") < 0;
  printf("%s %s %s\n", m.name, m.version, m.fingerprint);
  return 0;
}
"""


def test_both_ports_embed_the_marker_the_backend_reads(tmp_path: Path) -> None:
    """One rule for the OTA image marker: both ports make theirs with the core's macro and
    find it with the core's parser (mcpgen/ota_marker.h), and the backend's reader
    (mcpgen.runtime.ota.read_image) agrees with that parser both ways."""
    from mcpgen.runtime.ota import read_image

    ports = resources.firmware_template() / "ports"
    for port in ("host/ota.cpp", "esp_idf/mcpgen_esp_ota.cpp"):
        text = " ".join((ports / port).read_text(encoding="utf-8").split())
        assert '#include "mcpgen/ota_marker.h"' in text, port
        assert (
            "mcpgen_ota_image_marker[] = MCPGEN_OTA_IMAGE_MARKER(MCPGEN_SPEC_DEVICE_NAME, "
            "MCPGEN_SPEC_DEVICE_VERSION, MCPGEN_SPEC_FINGERPRINT);"
        ) in text, port
        assert "mcpgen_ota::find_marker(" in text and "MCPGEN-OTA-IMAGE|" not in text, port
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ is not installed (scripts/dev.sh installs it)")
    src, exe = tmp_path / "marker.cpp", tmp_path / "marker"
    src.write_text(MARKER_DRIVER, encoding="utf-8")
    core = resources.firmware_template() / "core"
    build = subprocess.run(
        [
            cxx,
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fno-exceptions",
            "-fno-rtti",
            f"-I{core}",
            str(src),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    # The C++ side writes, the backend reads.
    written = tmp_path / "firmware.bin"
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    none = subprocess.run([str(exe), str(written), str(empty)], capture_output=True, text=True)
    assert none.stdout == "-\n"
    image = read_image(written)
    assert (image.device_name, image.version, image.fingerprint) == ("desk-lamp", "0.4.0", "0123456789abcdef")
    # Malformed candidates first (an upper-case or short fingerprint, an empty field): both
    # skip them and take the same well-formed marker.
    probe = tmp_path / "probe.bin"
    probe.write_bytes(
        b"MCPGEN-OTA-IMAGE|a|1|0123456789ABCDEF|"
        b"MCPGEN-OTA-IMAGE|b|2|0123|"
        b"MCPGEN-OTA-IMAGE||3|0123456789abcdef|"
        b"MCPGEN-OTA-IMAGE|lamp-2|2.0.1|fedcba9876543210|"
    )
    found = subprocess.run(
        [str(exe), str(tmp_path / "unused.bin"), str(probe)], capture_output=True, text=True
    )
    theirs = read_image(probe)
    assert found.stdout.split() == [theirs.device_name, theirs.version, theirs.fingerprint]
    assert found.stdout.split() == ["lamp-2", "2.0.1", "fedcba9876543210"]


def test_esp32_targets_build_an_ota_spec(tmp_path: Path) -> None:
    """`codegen build --target esp32c3` of an OTA spec generates the project (it was refused
    while only the host had an OTA port)."""
    from mcpgen.codegen.cli import main

    spec = _ota_lamp(tmp_path)
    out = tmp_path / "out"
    assert main(["build", str(spec), "--target", "esp32c3", "-o", str(out), "--no-pio", "-q"]) == 0
    project = be.project_dir(tmp_path / "out")
    assert [r[2] for r in partitions(project / "partitions.csv") if r[1] == "app"] == ["ota_0", "ota_1"]


def test_flashing_writes_the_initial_ota_data_when_built(ota_project: Path, plain_project: Path) -> None:
    info = be.BOARDS["esp32"]
    build = ota_project / ".pio" / "build" / info.env
    build.mkdir(parents=True, exist_ok=True)
    assert [off for _, off in be.images_for(ota_project, info)] == [0x1000, 0x8000, 0x10000]
    (build / "ota_data_initial.bin").write_bytes(b"\xff" * 0x2000)
    assert [(p.name, off) for p, off in be.images_for(ota_project, info)] == [
        ("bootloader.bin", 0x1000),
        ("partitions.bin", 0x8000),
        ("ota_data_initial.bin", 0xD000),
        ("firmware.bin", 0x10000),
    ]
    assert [off for _, off in be.images_for(plain_project, info)] == [0x1000, 0x8000, 0x10000]


def test_the_header_check_adds_an_ota_variant_of_a_spec(tmp_path: Path) -> None:
    variant = chk.ota_variant(TOOLSPEC / "desk_lamp.yaml", tmp_path)
    assert variant.name == "desk_lamp_ota.yaml"  # its own project directory beside desk_lamp's
    assert re.search(r"^device:\n  ota: true\n", variant.read_text(encoding="utf-8"), re.MULTILINE)
    assert (variant.parent / "desk_lamp_ota_handlers.cpp").read_bytes() == (
        TOOLSPEC / "desk_lamp_handlers.cpp"
    ).read_bytes()
    with pytest.raises(chk.CheckSetupError, match="cannot make an OTA variant"):
        chk.ota_variant(variant, tmp_path / "again")
