"""`codegen run --interactive`: the device keeps running behind a console driven on stdin;
tools are listed, called with JSON or key=value arguments, notifications show up, and
the commands land in the history file."""

from __future__ import annotations

import json
import os
import shutil
import sys
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
self.light.fade r=0 g=0 b=255
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
    # a tool that reports progress is called with a token: the device's reports show up
    progress = [line for line in out.splitlines() if line.startswith("<- notifications/progress ")]
    assert len(progress) == 10 and '"message": "rgb 0,0,255"' in progress[-1], out
    assert "no tool 'self.nope'" in out and "unknown command 'frobnicate'" in out
    assert '"minutes"' in out  # the schema


def test_interactive_host_console(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path)
    proc = codegen(
        "run",
        str(spec),
        "--target",
        "host",
        "--interactive",
        "-q",
        "-o",
        str(tmp_path / "o"),
        input=SCRIPT,
        env=_env(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_console(proc.stdout)
    assert "[device]" not in proc.stdout  # -q: results and errors only (docs/cli.md)
    history = (tmp_path / "history").read_text().splitlines()
    assert history[-3:] == ["frobnicate", "schema self.timer.set", "quit"]
    assert 'call self.light.set_rgb {"r": 255, "g": 10, "b": 0}' in history


def test_interactive_console_ends_at_end_of_input_and_reports_stubs(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    proc = codegen(
        "run",
        str(spec),
        "--target",
        "host",
        "-i",
        "-q",
        "-o",
        str(tmp_path / "o"),
        input="self.fan.set_speed rpm=10\n",
        env=_env(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 1 and "--add-missing-handlers" in proc.stderr  # checked before compiling
    assert (
        codegen(
            "build",
            str(spec),
            "--add-missing-handlers",
            "--no-compile-bindings",
            "-o",
            str(tmp_path / "o"),
            "-q",
        ).returncode
        == 0
    )
    proc = codegen(
        "run",
        str(spec),
        "--target",
        "host",
        "-i",
        "-q",
        "-o",
        str(tmp_path / "o"),
        input="self.fan.set_speed rpm=10\n",
        env=_env(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr  # no `quit`: end of input ends the session
    assert "tool error: self.fan.set_speed is not implemented yet" in proc.stdout
    assert "[device]" not in proc.stdout
    proc = codegen(
        "run",
        str(spec),
        "--target",
        "host",
        "-i",
        "-o",
        str(tmp_path / "o"),
        input="ping\n",
        env=_env(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "[device] [sim] " in proc.stdout  # without -q: the simulator's own log lines


def test_run_host_calls_every_tool(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    spec = copy_spec(tmp_path)
    proc = codegen("run", str(spec), "--target", "host", "-o", str(tmp_path / "o"), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "call self.light.get_state({}) -> {" in proc.stdout
    assert proc.stdout.count("  call ") == 10 and "FAILED" not in proc.stdout
    # the value asked of the person goes as `human=` (the one running `codegen run` is that person)
    assert 'call self.lamp.reset({"scope": "light"}) -> true' in proc.stdout, proc.stdout


@pytest.mark.slow
def test_interactive_qemu_console(tmp_path: Path) -> None:
    for tool in ("qemu-system-arm", "arm-none-eabi-g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    spec = copy_spec(tmp_path)
    proc = codegen(
        "run",
        str(spec),
        "--target",
        "qemu",
        "-i",
        "-q",
        "-o",
        str(tmp_path / "o"),
        input=SCRIPT.replace("quit\n", "log\nquit\n"),
        env=_env(tmp_path),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_console(proc.stdout)
    assert "mcpgen: boot desk-lamp" in proc.stdout  # `log`: the firmware's UART1 console


def _pty_session(argv: list[str], cwd: Path, env: dict[str, str], keys: list[bytes]) -> tuple[str, int]:
    """Runs ``argv`` on a pseudo-terminal that is its controlling terminal (so Ctrl-C is a
    real SIGINT to its process group), types ``keys`` one after the other once the prompt
    is back, and returns the screen text and the exit code."""
    import fcntl
    import pty
    import select
    import subprocess
    import termios
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
    )  # noqa: PLW1509
    os.close(slave)
    screen = b""

    def wait_for(needle: bytes, timeout: float) -> None:
        nonlocal screen
        deadline = time.monotonic() + timeout
        while needle not in screen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    screen += os.read(master, 4096)
                except OSError:
                    return

    try:
        wait_for(b"mcp> ", 120)
        for key in keys:
            mark = screen.count(b"mcp> ") + screen.count(b"leaves)")
            os.write(master, key)
            deadline = time.monotonic() + 15
            while screen.count(b"mcp> ") + screen.count(b"leaves)") == mark and time.monotonic() < deadline:
                wait_for(b"\0", 0.3)
                if proc.poll() is not None:
                    break
        rc = proc.wait(20)
        wait_for(b"\0", 0.3)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return screen.decode("utf-8", "replace"), rc


def test_ctrl_c_on_a_terminal_keeps_the_console_and_the_device(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    pytest.importorskip("termios")
    spec = copy_spec(tmp_path)
    out = str(tmp_path / "o")
    assert codegen("build", str(spec), "-o", out, "--no-compile-bindings", "-q").returncode == 0
    screen, rc = _pty_session(
        [sys.executable, "-m", "mcpgen", "run", str(spec), "--target", "host", "-i", "-q", "-o", out],
        tmp_path,
        _env(tmp_path),
        [b"self.light.set_power on=true\r", b"\x03", b"ping\r", b"\x04"],
    )
    assert rc == 0, screen
    assert "-> true" in screen and '<- notifications/state_changed {"on": true}' in screen
    assert "(Ctrl-C: `quit` or Ctrl-D leaves)" in screen
    assert "pong" in screen, "the simulator survived the Ctrl-C"
    assert (tmp_path / "history").read_text().splitlines()[-2:] == ["self.light.set_power on=true", "ping"]
