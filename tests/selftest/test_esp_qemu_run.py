"""``codegen run SPEC --target esp32c3 --qemu`` against a fake idf.py and a fake Espressif QEMU
(tests/selftest/fakes): the exact commands it runs, the merged flash image, the project's
serial transport, and the one-line errors when ESP-IDF or QEMU is missing. The fake QEMU
serves the real host simulator on a pty, so everything after the boot is real MCP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from device_testlib import DEFAULT_SPEC
from selftest_testlib import FAKES, fake_bin

IDF_MISSING_TAIL = (
    "install ESP-IDF 5.1 or newer (https://docs.espressif.com/projects/esp-idf/en/stable/"
    "esp32c3/get-started/) and run . $IDF_PATH/export.sh in this shell, so IDF_PATH and idf.py are set"
)


def env_with(tmp_path: Path, sim: Path, *, qemu: bool = True, **extra: str) -> dict[str, str]:
    bin_dir = fake_bin(tmp_path / "bin", qemu=qemu)
    idf = tmp_path / "esp-idf"
    idf.mkdir(exist_ok=True)
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        IDF_PATH=str(idf),
        FAKE_LOG=str(tmp_path / "calls.log"),
        FAKE_QEMU_SIM=str(sim),
    )
    env.pop("IDF_PYTHON_ENV_PATH", None)
    env.pop("MCPGEN_TRANSPORT", None)
    env.update(extra)
    return env


def run(
    env: dict[str, str], out: Path, *args: str, target: str = "esp32c3"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["codegen", "run", str(DEFAULT_SPEC), "--target", target, "--qemu", "-o", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def calls(tmp_path: Path) -> list[list[str]]:
    path = tmp_path / "calls.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_builds_merges_boots_and_calls_every_tool(default_sim_exe: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = env_with(tmp_path, default_sim_exe)
    r = run(env, out)
    assert r.returncode == 0, r.stdout + r.stderr
    project = out / "firmware" / "platformio"
    build = project / "build-qemu"
    idf_py = str(tmp_path / "bin" / "idf.py")
    qemu = str(tmp_path / "bin" / "qemu-system-riscv32")
    assert calls(tmp_path) == [
        ["idf.py", "-C", str(project), "-B", str(build), "-DCOMPONENTS=src", "set-target", "esp32c3"],
        ["idf.py", "-C", str(project), "-B", str(build), "-DCOMPONENTS=src", "build"],
        [
            "qemu-system-riscv32",
            "-M",
            "esp32c3",
            "-drive",
            f"file={build / 'qemu_flash.bin'},if=mtd,format=raw",
            "-drive",
            f"file={build / 'qemu_efuse.bin'},if=none,format=raw,id=efuse",
            "-global",
            "driver=nvram.esp32c3.efuse,property=drive,value=efuse",
            "-global",
            "driver=timer.esp32c3.timg,property=wdt_disable,value=true",
            "-nic",
            "none",
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            "pty",
        ],
    ]
    # the commands are shown as they run
    assert f"$ {idf_py} -C {project} -B {build} -DCOMPONENTS=src build" in r.stdout
    assert f"$ {qemu} -M esp32c3 " in r.stdout
    # the serial transport on UART0: what QEMU puts on the pty
    defaults = (project / "sdkconfig.defaults").read_text()
    assert "CONFIG_MCPGEN_TRANSPORT_SERIAL=y" in defaults
    assert "CONFIG_MCPGEN_SERIAL_UART0=y" in defaults
    # esptool merged the fake images into a full 4 MB flash at their offsets
    image = (build / "qemu_flash.bin").read_bytes()
    assert len(image) == 4 * 1024 * 1024
    assert image[0x10000:0x10004] == b"\xe9\x05\x02\x20"
    assert image[0x8000:0x8002] == b"\xaa\x50"
    efuse = (build / "qemu_efuse.bin").read_bytes()
    assert len(efuse) == 1024 and efuse[38] == 0x0C and sum(efuse) == 0x0C
    # the MCP session, as --target qemu has it
    assert "MCP UART (UART0) at /dev/pts/" in r.stdout
    assert 'call self.audio_speaker.set_volume({"volume": 50}) -> true' in r.stdout
    assert "FAILED" not in r.stdout

    # built once for the chip: the second run skips set-target (it would rewrite sdkconfig)
    (tmp_path / "calls.log").unlink()
    r = run(env, out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [c[6] for c in calls(tmp_path) if c[0] == "idf.py"] == ["build"]


def test_esp32_uses_the_xtensa_qemu(default_sim_exe: Path, tmp_path: Path) -> None:
    r = run(env_with(tmp_path, default_sim_exe), tmp_path / "out", target="esp32")
    assert r.returncode == 0, r.stdout + r.stderr
    qemu = [c for c in calls(tmp_path) if c[0] == "qemu-system-xtensa"]
    assert qemu and qemu[0][1:5] == ["-M", "esp32", "-m", "4M"]
    assert "driver=nvram.esp32.efuse,property=drive,value=efuse" in qemu[0]
    efuse = (tmp_path / "out" / "firmware" / "platformio" / "build-qemu" / "qemu_efuse.bin").read_bytes()
    assert len(efuse) == 124 and (efuse[13], efuse[22]) == (0x80, 0x10)


def one_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 1
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_no_idf_path(default_sim_exe: Path, tmp_path: Path) -> None:
    env = env_with(tmp_path, default_sim_exe)
    del env["IDF_PATH"]
    line = one_error(run(env, tmp_path / "out"))
    assert line == f"codegen: error: ESP-IDF not found (IDF_PATH is not set): {IDF_MISSING_TAIL}"
    assert calls(tmp_path) == []  # nothing was built


def test_no_idf_py_on_path(default_sim_exe: Path, tmp_path: Path) -> None:
    env = env_with(tmp_path, default_sim_exe)
    (tmp_path / "bin" / "idf.py").unlink()
    line = one_error(run(env, tmp_path / "out"))
    assert line == f"codegen: error: ESP-IDF not found (idf.py is not on PATH): {IDF_MISSING_TAIL}"


def test_no_qemu(default_sim_exe: Path, tmp_path: Path) -> None:
    env = env_with(tmp_path, default_sim_exe, qemu=False)
    # only the fake idf.py and this Python's directory (codegen): no QEMU of any kind
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{Path(sys.executable).parent}"
    line = one_error(run(env, tmp_path / "out"))
    assert line == (
        "codegen: error: qemu-system-riscv32 (Espressif's QEMU, with -M esp32c3) not found on PATH: "
        "python $IDF_PATH/tools/idf_tools.py install qemu-riscv32, then . $IDF_PATH/export.sh"
    )
    assert calls(tmp_path) == []


def test_a_qemu_without_the_chip(default_sim_exe: Path, tmp_path: Path) -> None:
    """Debian's qemu-system-riscv32 has virt, not esp32c3: said, not booted."""
    env = env_with(tmp_path, default_sim_exe, FAKE_QEMU_MACHINES="virt sifive_u")
    line = one_error(run(env, tmp_path / "out"))
    assert line == (
        f"codegen: error: {tmp_path / 'bin' / 'qemu-system-riscv32'} has no esp32c3 machine (it is not "
        "Espressif's QEMU): python $IDF_PATH/tools/idf_tools.py install qemu-riscv32, then "
        ". $IDF_PATH/export.sh (it goes first on PATH)"
    )


def test_a_failed_build(default_sim_exe: Path, tmp_path: Path) -> None:
    r = run(env_with(tmp_path, default_sim_exe, FAKE_IDF_FAIL="1"), tmp_path / "out")
    assert r.returncode == 1
    assert "CMake Error: the fake build failed" in r.stdout  # idf.py's own output is shown
    assert (
        r.stderr.strip().splitlines()[-1]
        == "codegen: error: idf.py set-target esp32c3 failed (exit 2); its output is above"
    )
    assert not any(c[0].startswith("qemu") for c in calls(tmp_path))


def test_a_board_espressif_qemu_does_not_run(tmp_path: Path) -> None:
    r = subprocess.run(
        ["codegen", "run", str(DEFAULT_SPEC), "--target", "esp32s3", "--qemu", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1
    assert r.stderr.strip() == (
        "codegen: error: --qemu runs esp32 and esp32c3 (Espressif's QEMU), not esp32s3: "
        "e.g. --target esp32c3 --qemu"
    )


def test_selftest_on_the_emulated_uart(default_sim_exe: Path, tmp_path: Path) -> None:
    """`codegen selftest --port PTY` on what --qemu boots: a device on a tty, as a board on USB."""
    env = env_with(tmp_path, default_sim_exe, FAKE_QEMU_NAME="qemu-system-riscv32")
    flash = tmp_path / "flash.bin"
    flash.write_bytes(bytes(4 * 1024 * 1024))
    qemu = subprocess.Popen(
        [
            sys.executable,
            str(FAKES / "fake_qemu.py"),
            "-M",
            "esp32c3",
            "-drive",
            f"file={flash},if=mtd,format=raw",
            "-serial",
            "pty",
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert qemu.stdout is not None
        pty = qemu.stdout.readline().split(" redirected to ")[1].split()[0]
        r = subprocess.run(
            [
                "codegen",
                "selftest",
                "--port",
                pty,
                "--spec",
                str(DEFAULT_SPEC),
                "--calls",
                "20",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        qemu.terminate()
        qemu.wait(timeout=30)
    report: dict[str, Any] = json.loads(r.stdout)
    assert r.returncode == 0, report
    assert report["device"]["link"] == f"serial {pty}"
    assert report["summary"]["failed"] == 0


@pytest.mark.parametrize("board", ["esp32c3", "esp32"])
def test_commands_module_level(board: str, tmp_path: Path) -> None:
    from mcpgen.codegen.run.esp_qemu import CHIPS, idf_commands, qemu_command

    chip = CHIPS[board]
    cmds = idf_commands("/x/idf.py", tmp_path, chip)
    assert cmds[0][-2:] == ["set-target", board] and cmds[-1][-1] == "build"
    cmd = qemu_command("/q", chip, tmp_path / "f.bin", tmp_path / "e.bin")
    assert cmd[-2:] == ["-serial", "pty"] and cmd[2] == board
