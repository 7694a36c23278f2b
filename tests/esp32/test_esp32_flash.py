"""Flashing through the real esptool to a mock ESP32 ROM bootloader over socket://."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from esp32_testlib import TOOLSPEC, require

from mcpgen.codegen.run.flash import esptool_major, esptool_write_command, flash
from mcpgen.codegen.targets.base import BuildContext, BuildOptions
from mcpgen.codegen.targets.esp32 import (
    BOARDS,
    PARTITION_TABLE_OFFSET,
    generate_project,
    images_for,
    project_dir,
)

pytestmark = pytest.mark.slow

CHIP_IDS = {"esp32": 0, "esp32s3": 9, "esp32c3": 5}  # esptool IMAGE_CHIP_ID


def esp_image(chip: str, payload: bytes) -> bytes:
    """An ESP app/bootloader image header (magic 0xE9, extended header with the chip id) + payload."""
    header = struct.pack("<BBBBI", 0xE9, 1, 2, 0x20, 0x40080000)
    extended = struct.pack("<B3sHBHH4sB", 0xEE, b"\0\0\0", CHIP_IDS[chip], 0, 0, 0xFFFF, b"\0" * 4, 0)
    return header + extended + payload


def partition_table(csv: Path) -> bytes:
    """The binary form of a partition table CSV (32-byte entries, then the MD5 entry)."""
    types = {"app": 0, "data": 1}
    subtypes = {"factory": 0x00, "nvs": 0x02, "phy": 0x01, "ota_0": 0x10}
    out = b""
    for raw in csv.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, ptype, subtype, offset, size = [c.strip() for c in line.split(",")[:5]]
        out += struct.pack(
            "<2sBBII16sI",
            b"\xaa\x50",
            types[ptype],
            subtypes[subtype],
            int(offset, 0),
            int(size, 0),
            name.encode(),
            0,
        )
    out += b"\xeb\xeb" + b"\xff" * 14 + hashlib.md5(out).digest()
    return out + b"\xff" * (0xC00 - len(out))


def read_flash(chip: str, url: str, offset: int, size: int, dest: Path) -> bytes:
    cmd = [
        sys.executable,
        "-m",
        "esptool",
        "--chip",
        chip,
        "--port",
        url,
        "--no-stub",
        "read-flash" if esptool_major() >= 5 else "read_flash",
        hex(offset),
        str(size),
        str(dest),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return dest.read_bytes()


def test_esptool_command_offsets() -> None:
    require("esptool", "esptool")
    images = [
        (Path("firmware.bin"), 0x10000),
        (Path("bootloader.bin"), 0x1000),
        (Path("partitions.bin"), 0x8000),
    ]
    cmd = esptool_write_command("esp32", "/dev/ttyUSB0", images)
    assert cmd[1:9] == ["-m", "esptool", "--chip", "esp32", "--port", "/dev/ttyUSB0", "--baud", "460800"]
    assert cmd[-6:] == ["0x1000", "bootloader.bin", "0x8000", "partitions.bin", "0x10000", "firmware.bin"]


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_flash_with_esptool_to_mock_rom_bootloader(board: str, tmp_path: Path) -> None:
    require("esptool", "esptool")
    require("esp32_mock_bootloader", "esp32-mock-bootloader")
    from esp32_mock_bootloader import mock_bootloader

    info = BOARDS[board]
    spec = TOOLSPEC / "desk_lamp.yaml"
    outdir = tmp_path / "out"
    project = generate_project(spec, outdir, log=lambda _: None)
    # The images PlatformIO would have built, at the paths flash() takes them from.
    build = project / ".pio" / "build" / board
    build.mkdir(parents=True)
    bootloader = esp_image(info.chip, os.urandom(6000))
    table = partition_table(project / "partitions.csv")
    app = esp_image(info.chip, os.urandom(20000))
    (build / "bootloader.bin").write_bytes(bootloader)
    (build / "partitions.bin").write_bytes(table)
    (build / "firmware.bin").write_bytes(app)
    assert [off for _, off in images_for(project_dir(outdir), info)] == [
        info.bootloader_offset,
        PARTITION_TABLE_OFFSET,
        0x10000,
    ]

    with mock_bootloader(chip=info.chip) as mock:
        url = mock.url()
        assert url.startswith("socket://")
        out: list[str] = []
        ctx = BuildContext.load(spec, outdir, BuildOptions(log=out.append))
        assert flash(ctx, board, url, use_esptool=True) == 0
        text = "\n".join(out)
        assert "write-flash" in text or "write_flash" in text
        assert "Hash of data verified" in text  # esptool's own verification, streamed
        got = read_flash(info.chip, url, info.bootloader_offset, len(bootloader), tmp_path / "b")
        assert got == bootloader
        assert read_flash(info.chip, url, PARTITION_TABLE_OFFSET, len(table), tmp_path / "p") == table
        assert read_flash(info.chip, url, 0x10000, len(app), tmp_path / "a") == app
        # Between the partition table and the app nothing was written.
        assert read_flash(info.chip, url, 0x9000, 256, tmp_path / "gap") == b"\xff" * 256


def test_flash_without_built_images_says_to_build_first(tmp_path: Path) -> None:
    out: list[str] = []
    ctx = BuildContext.load(TOOLSPEC / "desk_lamp.yaml", tmp_path, BuildOptions(log=out.append))
    rc = flash(ctx, "esp32", "socket://127.0.0.1:1", use_esptool=True)
    assert rc == 1
    assert "build first: codegen build" in "\n".join(out)
