"""Help, -v/-q, `check --format json` and one-line expected failures, as a user meets them."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import sys
from pathlib import Path

import pytest
from cli_testlib import NEW_TOOL, SPECS, codegen, copy_spec, line_of

from mcpgen.codegen.cli import build_parser

FAKE_DEVICE = Path(__file__).resolve().parents[1] / "bridge" / "fake_device_proc.py"
COMMANDS = [
    "check",
    "generate",
    "new",
    "build",
    "run",
    "flash",
    "monitor",
    "demo",
    "selftest",
    "bridge",
    "console",
]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for sub in action.choices.values():
        sub.load_options()  # the options read on first use (bridge, console, ota: the runtime's)
    return dict(action.choices)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_has_help_and_every_command_takes_verbose_and_quiet(command: str) -> None:
    sub = _subparsers()[command]
    options = {opt for a in sub._actions for opt in a.option_strings}
    assert {"-v", "--verbose", "-q", "--quiet"} <= options
    for action in sub._actions:
        if action.dest == "help":
            continue
        assert action.help and action.help != argparse.SUPPRESS, f"{command}: {action.dest} has no help"
    mine = [a for a in sub._actions if a.dest not in ("help",)]
    if command not in ("bridge", "console"):  # theirs are the runtime's (runtime/bridge, runtime/console)
        for action in mine:
            assert (
                "e.g." in action.help
                or "default" in action.help
                or action.dest in ("verbose", "quiet")
                or isinstance(action, argparse._StoreTrueAction)
            ), f"{command} {action.dest}: no example in {action.help!r}"
    assert "examples:" in (sub.epilog or "")


def test_quiet_and_verbose_before_or_after_the_command(tmp_path: Path) -> None:
    spec = str(SPECS / "desk_lamp.yaml")
    quiet = codegen("check", "-q", spec)
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
    normal = codegen("check", spec)
    assert "desk_lamp.yaml: ok (10 tools, 2 events" in normal.stdout
    assert "self.light.set_rgb" not in normal.stdout
    for args in (["-v", "check", spec], ["check", spec, "--verbose"]):
        verbose = codegen(*args)
        assert verbose.returncode == 0
        assert "self.light.set_rgb  -> tools::light_set_rgb" in verbose.stdout, args
    gen = codegen("generate", spec, "-o", str(tmp_path / "g"), "-q")
    assert gen.returncode == 0 and gen.stdout == "", gen.stdout


def test_check_json_for_ci_and_editors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("device:\n  name: x\n  version: '1'\ntools:\n  - name: self.a\n    descripton: typo\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("device:\n  name: x\n  version '1'\n")
    good = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    proc = codegen("check", "--format", "json", str(bad), str(broken), str(good), str(tmp_path / "none.yaml"))
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["version"] == 1 and doc["ok"] is False
    files = {Path(f["file"]).name: f for f in doc["files"]}
    assert set(files) == {"bad.yaml", "broken.yaml", "desk_lamp.yaml", "none.yaml"}
    [typo] = files["bad.yaml"]["diagnostics"]
    assert (typo["severity"], typo["code"], typo["line"], typo["column"]) == ("error", "spec", 6, 5)
    assert "description" in typo["hint"] and typo["path"].startswith("tools[0]")
    [syntax] = files["broken.yaml"]["diagnostics"]
    assert (syntax["code"], syntax["line"], syntax["column"]) == ("yaml-syntax", 3, 3)
    lamp = files["desk_lamp.yaml"]
    assert lamp["ok"] is True and lamp["tools"] == 11 and len(lamp["fingerprint"]) == 16
    [warning] = lamp["diagnostics"]
    assert warning["severity"] == "warning" and warning["code"] == "missing-handler"
    assert warning["line"] == line_of(good, "self.fan.set_speed")
    assert "fan_set_speed(const FanSetSpeedArgs& args" in warning["hint"]
    assert files["none.yaml"]["diagnostics"][0]["code"] == "io"
    ok = codegen("check", "--format", "json", str(SPECS / "desk_lamp.yaml"))
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"] is True


def _one_line_error(proc, *needles: str) -> None:  # noqa: ANN001
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("codegen: error: ") and "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize(
    "command",
    [
        ["check"],
        ["build"],
        ["run", "--target", "host"],
        ["flash", "--port", "/dev/null"],
        ["generate", "-o", "out"],
    ],
)
def test_missing_spec_file_is_one_line(tmp_path: Path, command: list[str]) -> None:
    name, *rest = command
    proc = codegen(name, str(tmp_path / "nope.yaml"), *rest, cwd=tmp_path)
    _one_line_error(proc, "nope.yaml", "No such file")


def test_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    spec = copy_spec(tmp_path)
    _one_line_error(codegen("generate", str(spec), "-o", str(spec / "out")), "Not a directory")
    if os.path.isdir("/sys/kernel"):  # even root may not create directories in sysfs
        _one_line_error(
            codegen("generate", str(spec), "-o", "/sys/kernel/mcpgen-test/out"), "permission denied"
        )


def test_missing_compiler_is_one_line(tmp_path: Path) -> None:
    spec = copy_spec(tmp_path)
    env = dict(os.environ, PATH="/nonexistent")
    _one_line_error(
        codegen("build", str(spec), "-o", str(tmp_path / "o"), env=env), "g++ not found", "apt-get"
    )
    env = dict(os.environ, MCPGEN_ARM_PREFIX="no-such-")
    _one_line_error(
        codegen("build", str(spec), "--target", "qemu", "-o", str(tmp_path / "q"), env=env),
        "no-such-g++ not found",
    )


@pytest.mark.parametrize("command", [("bridge", "--transport", "http"), ("console",)])
def test_busy_port_is_one_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = codegen(
            *command,
            "--port",
            str(port),
            "-q",
            "--device-cmd",
            shlex.join([sys.executable, str(FAKE_DEVICE)]),
            timeout=60,
        )
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("codegen: error:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert f"port 127.0.0.1:{port} busy" in lines[0]
    assert "Traceback" not in proc.stderr


def test_a_device_that_dies_at_start_is_one_line(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    handlers.write_text(
        handlers.read_text() + "\n#include <stdlib.h>\nnamespace {\nstruct Boom {\n"
        "  Boom() { exit(3); }\n} g_boom;\n}  // namespace\n"
    )
    proc = codegen("run", str(spec), "--target", "host", "-q", "-o", str(tmp_path / "o"))
    _one_line_error(proc, "device: DeviceDisconnected", "process")


def test_flash_without_images_is_one_line_even_quiet(tmp_path: Path) -> None:
    spec = copy_spec(tmp_path)
    proc = codegen(
        "flash",
        str(spec),
        "--port",
        "socket://127.0.0.1:1",
        "--esptool",
        "-q",
        "-o",
        str(tmp_path / "o"),
        cwd=tmp_path,
    )
    _one_line_error(proc, "no built esp32 images", "build first: codegen build")
