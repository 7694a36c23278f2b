"""Issue 31, item 14: the emulator never outlives what started it, and an idle RV32 image
costs the host no CPU after input has arrived.

* ``python -m mcpgen.codegen.run.run_qemu ELF`` ended by SIGTERM, SIGHUP (a closed
  terminal) or SIGKILL (no handler can run: the child's parent-death signal does it)
  leaves no QEMU process behind, on both machines.
* The RV32 board sleeps in ``wfi`` between bytes: after a request has been answered,
  QEMU's CPU time over an idle second stays far below a spinning core (a generous,
  deterministic bound: a spinning idle loop uses ~1 s of CPU per second).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from qemu_uart_driver import DEFAULT_SPEC

from mcpgen.codegen.run.run_qemu import start
from mcpgen.codegen.targets.qemu import build_qemu
from mcpgen.codegen.targets.qemu_machines import MACHINES

pytestmark = pytest.mark.slow

# Generous: an idle loop that spins uses about 1.0 s of CPU per wall-clock second.
IDLE_CPU_BOUND_S = 0.25


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:  # field 4 of stat: the parent's pid
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, limit: float = 20.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.fixture
def run_qemu_process(default_sim_exe: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``python -m mcpgen.codegen.run.run_qemu ELF`` once it printed its UART, and QEMU's pid."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgen.codegen.run.run_qemu", str(default_sim_exe)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own session: the signals below reach only it
    )
    qemu = 0
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("MCP UART: socket://127.0.0.1:"):
            proc.kill()
            raise AssertionError(line + (proc.stderr.read() if proc.stderr else ""))
        (qemu,) = _children(proc.pid)
        assert _alive(qemu)
        yield proc, qemu
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if qemu and _alive(qemu):
            os.kill(qemu, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_qemu_dies_with_run_qemu(
    run_qemu_process: tuple[subprocess.Popen[str], int], sig: signal.Signals
) -> None:
    proc, qemu = run_qemu_process
    proc.send_signal(sig)
    proc.wait(timeout=30)
    assert _wait_gone(qemu), f"{qemu} still runs after run_qemu got {sig.name}"
    if sig != signal.SIGKILL:  # the handler unwound the `with boot(...)` block
        assert proc.returncode == 128 + sig


@pytest.fixture(scope="module")
def rv32_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default device's RV32 image (this check is about that board's idle loop; the
    mps2-an385 board polls its UART)."""
    machine = MACHINES["qemu-riscv32"]
    missing = [t for t in (machine.qemu, machine.toolchain.prefix + "g++") if shutil.which(t) is None]
    if missing:
        msg = (
            f"{', '.join(missing)} not installed (apt-get install {machine.qemu_apt_package} "
            f"{machine.toolchain.apt_packages})"
        )
        if os.environ.get("CI"):
            pytest.fail(msg + " -- required in CI")
        pytest.skip(msg)
    return build_qemu(DEFAULT_SPEC, tmp_path_factory.mktemp("rv32_idle"), target=machine, log=lambda _: None)


def test_idle_rv32_image_sleeps_after_input(rv32_exe: Path, tmp_path: Path) -> None:
    dev = start(rv32_exe, workdir=tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", dev.port), timeout=10) as sock:
            for i in range(3):
                sock.sendall(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % i)
                reply = b""
                while not reply.endswith(b"\n"):
                    chunk = sock.recv(65536)
                    assert chunk, "the device closed the connection"
                    reply += chunk
                assert b'"tools"' in reply
            time.sleep(0.2)  # let the last reply's work settle
            before = _cpu_seconds(dev.process.pid)
            time.sleep(1.0)
            used = _cpu_seconds(dev.process.pid) - before
        print(f"qemu-system-riscv32 CPU over 1 idle second after input: {used:.2f} s")
        assert used < IDLE_CPU_BOUND_S, f"the idle RV32 image used {used:.2f} s of CPU in 1 s: it spins"
    finally:
        dev.close()
