"""Long steps say how far they are: `codegen build --target esp32` against a stand-in
`pio` (first run: it "downloads" a toolchain, then compiles) reports the megabytes arrived
while PlatformIO installs and the files compiled while it builds."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

from cli_testlib import codegen, copy_spec

FAKE_PIO = """\
import os, pathlib, sys, time
core = pathlib.Path(os.environ["PLATFORMIO_CORE_DIR"])
print("Platform Manager: Installing espressif32 @ ^6.9.0", flush=True)
pkg = core / "packages" / "toolchain-xtensa-esp-elf"
pkg.mkdir(parents=True, exist_ok=True)
for i in range(5):  # 5 MB arrive over 2 s, silently, like a download with the progress bar off
    (pkg / f"part{i}.bin").write_bytes(bytes(1_000_000))
    time.sleep(0.4)
print("Building in release mode", flush=True)
for i in range(3):
    print(f"Compiling .pio/build/esp32/src/unit{i}.cpp.o", flush=True)
time.sleep(1.5)  # a long compile: silent
print("Linking .pio/build/esp32/firmware.elf", flush=True)
"""


def test_pio_install_and_compile_show_progress(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    pio = bindir / "pio"
    pio.write_text(f"#!{sys.executable}\n" + FAKE_PIO)
    pio.chmod(pio.stat().st_mode | stat.S_IXUSR)
    spec = copy_spec(tmp_path)
    core = tmp_path / "pio-home"
    env = dict(
        os.environ,
        PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
        PLATFORMIO_CORE_DIR=str(core),
        MCPGEN_PIO_HEARTBEAT="0.3",
        HTTPS_PROXY="http://127.0.0.1:9",
    )  # a proxy: no registry probe
    proc = codegen(
        "build", str(spec), "--target", "esp32", "-o", str(tmp_path / "out"), env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "will first install the espressif32 platform and toolchain" in out
    pattern = r"still installing the platform/toolchain \(\d+ s, ([\d.]+) MB"
    installing = [float(m) for m in re.findall(pattern, out)]
    assert installing and installing[-1] >= 1.0, out
    assert installing == sorted(installing), "the figure only grows"
    assert str(core) in out
    assert re.search(r"still compiling \(\d+ s, 3 files compiled so far\)", out), out
    assert "Linking .pio/build/esp32/firmware.elf" in out and "built esp32" in out
