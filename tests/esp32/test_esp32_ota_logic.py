"""The ESP-IDF port's update handler and rollback rule, run on the host.

`port/mcpgen_esp_ota.cpp` is compiled unchanged with the portable core and the generated
tables of a small OTA spec, against the fake ESP-IDF in `ota_fake_idf/` (the download reads
a local file, the passive slot is memory; tests/esp32/test_esp_idf_headers.py checks the
same file against the real headers). `ota_logic_driver.cpp` calls the tool through the core
and plays a backend's session into the worker's hooks. The images are shaped as the fake
lays an ESP-IDF app image out: the image header (magic, chip id), a segment header, the app
descriptor (version, project name), then the `MCPGEN-OTA-IMAGE` marker.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcpgen.codegen import resources
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.spec.loader import load_spec_text

HERE = Path(__file__).resolve().parent
FAKE_IDF = HERE / "ota_fake_idf"
SPEC = """\
device:
  name: lamp
  version: 1.2.0
  ota: true
tools:
  - name: self.light.set
    description: Set the light.
    params:
      level: {type: integer, min: 0, max: 100}
"""
CHIP_ID = 5  # the fake sdkconfig.h's CONFIG_IDF_FIRMWARE_CHIP_ID (esp32c3)
SPEC_FINGERPRINT = load_spec_text(SPEC, "lamp.yaml").fingerprint


def image(
    *,
    chip: int = CHIP_ID,
    project: str = "lamp",
    version: str = "1.3.0",
    device: str = "lamp",
    marker_version: str = "",
    body: int = 20000,
) -> bytes:
    header = struct.pack("<BBBBIB3sH10s", 0xE9, 1, 2, 0x20, 0x40380000, 0xEE, b"\0\0\0", chip, b"\0" * 10)
    assert len(header) == 24
    desc = struct.pack("<II8s32s32s", 0xABCD5432, 0, b"\0" * 8, version.encode(), project.encode())
    desc += b"\0" * (256 - len(desc))
    marker = f"MCPGEN-OTA-IMAGE|{device}|{marker_version or version}|{SPEC_FINGERPRINT}|".encode()
    # The marker straddles the driver's 4 KB read-back chunks (offset 4090).
    filler = os.urandom(4090 - len(header) - 8 - len(desc))
    return header + b"\0" * 8 + desc + filler + marker + os.urandom(body)


@dataclass
class Run:
    reply: str
    state: str


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ not found")
    out = tmp_path_factory.mktemp("ota_logic")
    gen = out / "generated"
    gen.mkdir()
    for rel, text in emit_cpp.emit(load_spec_text(SPEC, "lamp.yaml")).items():
        (gen / Path(rel).name).write_text(text, encoding="utf-8")
    template = resources.firmware_template()
    port = template / "ports" / "esp_idf"
    core = sorted((template / "core" / "mcpgen").glob("*.cpp"))
    exe = out / "ota-logic"
    cmd = [
        cxx,
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fno-exceptions",
        "-fno-rtti",
        "-Wno-deprecated-declarations",  # mbedtls 2's sha256 calls (ESP-IDF's mbedtls 3 has no _ret)
        f"-I{FAKE_IDF}",
        f"-I{template / 'core'}",
        f"-I{gen}",
        f"-I{port}",
        str(HERE / "ota_logic_driver.cpp"),
        str(port / "mcpgen_esp_ota.cpp"),
        str(gen / "mcp_tools.cpp"),
        *map(str, core),
        "-o",
        str(exe),
        "-lmbedcrypto",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return exe


def update(
    driver: Path,
    tmp: Path,
    data: bytes,
    *,
    sha: str = "",
    size: int = 0,
    version: str = "1.3.0",
    url_tail: str = "",
) -> Run:
    path = tmp / "image.bin"
    path.write_bytes(data)
    sha = sha or hashlib.sha256(data).hexdigest()
    argv = [str(driver), "update", f"file://{path}{url_tail}", sha, str(size or len(data)), version]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    reply, state = proc.stdout.splitlines()
    return Run(reply, state)


def test_a_good_image_is_installed_and_the_device_reboots(driver: Path, tmp_path: Path) -> None:
    run = update(driver, tmp_path, image())
    assert '"isError":true' not in run.reply, run.reply
    assert f"installed lamp 1.3.0 (spec {SPEC_FINGERPRINT}) into partition ota_1; rebooting" in run.reply
    assert run.state.startswith("begun=1 aborted=0 finished=1 valid=0 rolled_back=0 restarts=1"), run.state
    assert "mcpgen-ota-reboot=500000" in run.state


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("sha", "SHA-256 mismatch: the image hashes to"),
        ("project", "the image is of project 'other', this device runs 'lamp' (lamp)"),
        ("version", "the image carries version 1.3.0, the request announced 1.4.0"),
        ("marker_version", "the image carries version 1.3.1, the request announced 1.3.0"),
        ("device", "the image is for device 'kettle'"),
        ("chip", "is for another chip (or chip revision) than this esp32c3"),
        ("size_small", "the server sends"),
        ("cut", "download from file://"),
        ("no_marker", "not an mcpgen image"),
        ("unreachable", "cannot download file:///nonexistent/image.bin: ESP_ERR_HTTP_CONNECT"),
    ],
)
def test_bad_images_are_refused_and_the_boot_partition_stays(
    driver: Path, tmp_path: Path, case: str, expected: str
) -> None:
    data = image()
    kwargs: dict[str, Any] = {}
    if case == "sha":
        kwargs["sha"] = "0" * 64
    elif case == "project":
        data = image(project="other")
    elif case == "version":
        kwargs["version"] = "1.4.0"
    elif case == "marker_version":
        data = image(marker_version="1.3.1")
    elif case == "device":
        data = image(device="kettle")
    elif case == "chip":
        data = image(chip=9)
    elif case == "size_small":
        kwargs["size"] = len(data) - 1
    elif case == "cut":
        kwargs["url_tail"] = "?cut=9000"
    elif case == "no_marker":
        data = image().replace(b"MCPGEN-OTA-IMAGE|", b"XXXXXX-XXX-XXXXX|")
    if case == "unreachable":
        argv = [str(driver), "update", "file:///nonexistent/image.bin", "0" * 64, "100", "1.3.0"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        reply, state = proc.stdout.splitlines()
        run = Run(reply, state)
        assert run.state.startswith("begun=1 aborted=0 finished=0"), run.state
    else:
        run = update(driver, tmp_path, data, **kwargs)
        assert run.state.startswith("begun=1 aborted=1 finished=0"), run.state
    assert '"isError":true' in run.reply, run.reply
    assert expected in run.reply, run.reply
    assert "restarts=0" in run.state and "mcpgen-ota-reboot" not in run.state


def test_a_pending_image_is_valid_after_initialize_and_the_next_request(driver: Path) -> None:
    proc = subprocess.run([str(driver), "session"], capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert (
        lines[0] == "begun=0 aborted=0 finished=0 valid=0 rolled_back=0 restarts=0 timers=1 "
        "mcpgen-ota-deadline=120000000"
    ), lines[0]
    valid = [line.rsplit("valid=", 1)[1] for line in lines[1:6]]
    # hello, initialize, notifications/initialized: still pending; tools/list: valid, once.
    assert valid == ["0", "0", "0", "1", "1"], lines
    assert lines[6].endswith("timers=1 mcpgen-ota-deadline=0"), lines[6]  # the deadline was stopped


def test_a_pending_image_rolls_back_when_the_deadline_passes(driver: Path) -> None:
    proc = subprocess.run([str(driver), "deadline"], capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert "valid=0 rolled_back=0" in lines[0] and "mcpgen-ota-deadline=120000000" in lines[0]
    assert "valid=0 rolled_back=1" in lines[1], lines
    assert "no MCP session with the backend within 120 s" in proc.stderr


def test_a_valid_image_starts_no_deadline_and_marks_nothing(driver: Path) -> None:
    proc = subprocess.run([str(driver), "settled"], capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("timers=0"), lines[0]
    assert all(line.endswith("valid=0") for line in lines[1:6]), lines
