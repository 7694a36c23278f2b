"""`codegen run --interactive`: the device keeps running behind a console driven on stdin;
tools are listed, called with JSON or key=value arguments, notifications show up, and
the commands land in the history file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_testlib import NEW_TOOL, codegen, copy_spec

SCRIPT = """\
tools
call self.light.set_rgb {"r": 255, "g": 10, "b": 0}
self.light.set_power on=true
self.light.get_state
self.light.set_rgb r=300 g=0 b=0
call self.light.set_effect effect=candle speed=2.5
call self.nope
frobnicate
schema self.timer.set
quit
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, MCPGEN_HISTORY=str(tmp_path / "history"))


def _check_console(out: str) -> None:
    assert "connected to desk-lamp" in out
    assert "self.light.set_rgb(b: integer, g: integer, r: integer)" in out
    assert "self.light.set_effect(effect: string, speed?: number)" in out
    assert '<- notifications/state_changed {"on": true}' in out  # sent by the handler
    state = next(line for line in out.splitlines() if line.startswith('-> {"on"'))
    assert json.loads(state[3:]) == {"on": True, "rgb": [255, 10, 0], "timer_minutes": 0}
    assert "invalid arguments: r: must be <= 255, got 300" in out
    assert '-> "effect candle at speed 2.5"' in out
    assert "no tool 'self.nope'" in out and "unknown command 'frobnicate'" in out
    assert '"minutes"' in out  # the schema


def test_interactive_host_console(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path)
    proc = codegen("run", str(spec), "--target", "host", "--interactive", "-q", "-o", str(tmp_path / "o"),
                   input=SCRIPT, env=_env(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_console(proc.stdout)
    assert "[device]" in proc.stdout  # the simulator's log lines
    history = (tmp_path / "history").read_text().splitlines()
    assert history[-3:] == ["frobnicate", "schema self.timer.set", "quit"]
    assert 'call self.light.set_rgb {"r": 255, "g": 10, "b": 0}' in history


def test_interactive_console_ends_at_end_of_input_and_reports_stubs(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    proc = codegen("run", str(spec), "--target", "host", "-i", "-q", "-o", str(tmp_path / "o"),
                   input="self.fan.set_speed rpm=10\n", env=_env(tmp_path), timeout=300)
    assert proc.returncode == 1 and "--add-missing-handlers" in proc.stderr  # checked before compiling
    assert codegen("build", str(spec), "--add-missing-handlers", "--no-compile-bindings",
                   "-o", str(tmp_path / "o"), "-q").returncode == 0
    proc = codegen("run", str(spec), "--target", "host", "-i", "-q", "-o", str(tmp_path / "o"),
                   input="self.fan.set_speed rpm=10\n", env=_env(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr  # no `quit`: end of input ends the session
    assert "tool error: self.fan.set_speed is not implemented yet" in proc.stdout


def test_run_host_calls_every_tool(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path)
    proc = codegen("run", str(spec), "--target", "host", "-o", str(tmp_path / "o"), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "call self.light.get_state({}) -> {" in proc.stdout
    assert proc.stdout.count("  call ") == 5 and "FAILED" not in proc.stdout


@pytest.mark.slow
def test_interactive_qemu_console(tmp_path: Path) -> None:
    for tool in ("qemu-system-arm", "arm-none-eabi-g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    spec = copy_spec(tmp_path)
    proc = codegen("run", str(spec), "--target", "qemu", "-i", "-q", "-o", str(tmp_path / "o"),
                   input=SCRIPT.replace("quit\n", "log\nquit\n"), env=_env(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_console(proc.stdout)
    assert "mcpgen: boot desk-lamp" in proc.stdout  # `log`: the firmware's UART1 console
