"""The host simulator's token from a file or the environment (issue 40, item 3).

``--token T`` was the only way to give the simulator its token, readable by every local
user in ``ps``. It now also reads ``--token-file FILE`` or ``MCPGEN_BACKEND_TOKEN`` (the
variable the ESP32 build reads for the same setting), warns about a token on its command
line, and refuses a missing or empty file or variable with exit status 2 naming it.
``codegen``'s own launcher (``launch_simulator``) passes the token in the environment.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_device_ws import ws_device

from mcpgen.codegen.run.simulator import launch_simulator


def env_with(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


@pytest.fixture(autouse=True)
def no_secret_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MCPGEN_BACKEND_TOKEN", "MCPGEN_MQTT_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


async def presented_token(exe: Path, tmp_path: Path, *argv: str) -> tuple[str, str]:
    """The ``Authorization`` header the simulator sends, and what it wrote to stderr."""
    async with ws_device(exe, tmp_path, *argv) as (peer, _proc, log):
        ws, done = await peer.next()
        done.set_result(None)  # the connection may close
        return ws.request.headers["Authorization"], log.read_text()


async def test_the_token_from_a_file(default_sim_exe: Path, tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("from-the-file\n")
    path.chmod(0o600)
    header, err = await presented_token(default_sim_exe, tmp_path, "--token-file", str(path))
    assert header == "Bearer from-the-file"
    assert "warning" not in err


async def test_the_token_from_the_environment(
    default_sim_exe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPGEN_BACKEND_TOKEN", "from-the-env")
    header, err = await presented_token(default_sim_exe, tmp_path)
    assert header == "Bearer from-the-env" and "warning" not in err


async def test_a_token_on_the_command_line_is_warned_about(default_sim_exe: Path, tmp_path: Path) -> None:
    header, err = await presented_token(default_sim_exe, tmp_path, "--token", "on-the-line")
    assert header == "Bearer on-the-line"
    assert (
        "warning: --token on the command line can be read by every local user (ps); use "
        "--token-file FILE or the MCPGEN_BACKEND_TOKEN environment variable\n"
    ) in err


@pytest.mark.parametrize(
    ("argv", "env", "said"),
    [
        (("--token-file", "{missing}"), {}, "error: --token-file {missing}: No such file or directory"),
        (("--token-file", "{empty}"), {}, "error: --token-file {empty}: the file is empty"),
        (
            (),
            {"MCPGEN_BACKEND_TOKEN": ""},
            "error: the environment variable MCPGEN_BACKEND_TOKEN is set but empty",
        ),
        (("--token", "x", "--token-file", "{empty}"), {}, "error: --token and --token-file are both given"),
        (("--password-file", "{missing}"), {}, "error: --password-file {missing}: No such file or directory"),
    ],
)
def test_an_unusable_secret_stops_the_simulator(
    default_sim_exe: Path, tmp_path: Path, argv: tuple[str, ...], env: dict[str, str], said: str
) -> None:
    paths = {"missing": str(tmp_path / "nope"), "empty": str(tmp_path / "empty")}
    Path(paths["empty"]).write_text("\n")
    proc = subprocess.run(
        [str(default_sim_exe), "--ws", "ws://127.0.0.1:9/", "--max-reconnects", "0",
         *(a.format(**paths) for a in argv)],
        capture_output=True, text=True, env=env_with(**env), timeout=30, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert said.format(**paths) in proc.stderr


async def test_launch_simulator_keeps_the_token_off_the_command_line(default_sim_exe: Path) -> None:
    from mcpgen.runtime import Gateway, TokenAuth

    async with Gateway(port=0, auth=TokenAuth({"*": "launched-token"})) as gw:
        url = f"ws://127.0.0.1:{gw.port}/"
        proc = await launch_simulator(default_sim_exe, url, "launched-token", "sim-1")
        try:
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
            assert b"launched-token" not in cmdline
            device = await gw.wait_for_device("sim-1", timeout=30)
            assert device.device_id == "sim-1"
        finally:
            proc.kill()
            await proc.wait()
