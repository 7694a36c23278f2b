"""``codegen console`` as a process: its open-file limit, its secrets (issue 40, items 2-3).

The console started with a soft ``RLIMIT_NOFILE`` of 256 used to keep it (only its
gateway, when it had one, raised it): every page, event stream and device holds a file
descriptor. It now raises the soft limit to the hard one as the gateway does. Its page
token can come from a file, and a token on its command line is warned about.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shlex
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEVICE_CMD = shlex.join([sys.executable, str(REPO / "tests" / "bridge" / "fake_device_proc.py")])
LOW = 256


def soft_nofile(pid: int) -> int:
    """The soft open-file limit of process ``pid`` (from /proc/PID/limits)."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no 'Max open files' line")


def lower_nofile() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


@contextlib.asynccontextmanager
async def console(*argv: str, env: dict[str, str] | None = None) -> AsyncIterator[tuple[int, list[str]]]:
    """``python -m mcpgen.runtime.console`` with a device process and no gateway, started with
    a soft open-file limit of 256; yields its pid and its stderr lines up to the console URL."""
    full = {k: v for k, v in os.environ.items() if k not in ("MCPGEN_CONSOLE_TOKEN",)}
    full.update(env or {}, PYTHONUNBUFFERED="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpgen.runtime.console", "--port", "0", "--device-cmd", DEVICE_CMD, *argv,
        stderr=asyncio.subprocess.PIPE, env=full, preexec_fn=lower_nofile,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while not lines or not lines[-1].startswith("console: "):
            line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
            assert line, "the console exited before serving:\n" + "".join(lines)
            lines.append(line)
        yield proc.pid, lines
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        await asyncio.wait_for(proc.wait(), 15)


async def test_the_console_raises_its_soft_open_file_limit() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= LOW:
        pytest.skip(f"the hard open-file limit is {hard}: nothing to raise it to")
    async with console() as (pid, lines):
        assert not any(line.startswith("devices (websocket)") for line in lines), "no gateway to raise it"
        now = soft_nofile(pid)
        assert now > LOW and now == min(hard, 1 << 20), f"soft limit {now}"
        assert any("RLIMIT_NOFILE" in line and f"from {LOW}" in line for line in lines)


async def test_the_page_token_from_a_file_and_a_warning_for_one_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "page-token"
    path.write_text("from-the-file\n")
    path.chmod(0o600)
    async with console("--token-file", str(path)) as (_pid, lines):
        assert lines[-1].rstrip().endswith("/?token=from-the-file")
        assert not any("warning" in line for line in lines)
    async with console(env={"MCPGEN_CONSOLE_TOKEN": "from-the-env"}) as (_pid, lines):
        assert lines[-1].rstrip().endswith("/?token=from-the-env")
    async with console("--token", "on-the-line") as (_pid, lines):
        assert lines[-1].rstrip().endswith("/?token=on-the-line")
        warned = [line for line in lines if line.startswith("warning: --token ")]
        assert warned == [
            "warning: --token on the command line can be read by every local user (ps); use "
            "--token-file FILE or the MCPGEN_CONSOLE_TOKEN environment variable\n"
        ]
