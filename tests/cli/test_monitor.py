"""`codegen monitor`: argument handling, one-line errors, and a real esp-idf-monitor session
on a pretend board (a loopback TCP port, opened as socket://) inside a pseudo-terminal."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_testlib import REPO, codegen


def test_monitor_port_defaults_to_auto() -> None:
    proc = codegen("monitor", "--help")
    assert proc.returncode == 0
    assert "auto (the default) finds it by its USB id" in " ".join(proc.stdout.split())


def test_missing_port_is_one_line() -> None:
    pytest.importorskip("esp_idf_monitor")
    proc = codegen("monitor", "--port", "/dev/ttyMCPGEN-NOPE")
    assert proc.returncode == 1
    assert proc.stderr.startswith("codegen: error: serial port /dev/ttyMCPGEN-NOPE not found; ")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_package_is_one_line() -> None:
    # The package hidden the way Python itself does it: a None entry in sys.modules.
    code = (
        "import sys; sys.modules['esp_idf_monitor'] = None; from mcpgen.codegen.cli import main; "
        "sys.exit(main(['monitor', '--port', '/dev/ttyUSB0']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "codegen: error: esp-idf-monitor is not installed: pip install 'mcpgen[esp32]' "
        "(or: pip install esp-idf-monitor)"
    )


def test_missing_elf_and_unbuilt_spec(tmp_path: Path) -> None:
    pytest.importorskip("esp_idf_monitor")
    proc = codegen("monitor", "--port", "socket://127.0.0.1:9", "--elf", str(tmp_path / "fw.elf"))
    assert proc.returncode == 1 and "fw.elf: no such firmware ELF" in proc.stderr


def _pretend_board(lines: int) -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(30)

    def serve() -> None:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        with conn:
            for i in range(lines):
                try:
                    conn.sendall(f"I ({100 + i}) mcpgen: tick {i}\r\n".encode())
                except OSError:
                    return
                time.sleep(0.05)

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def test_monitor_shows_the_board_log(tmp_path: Path) -> None:
    pytest.importorskip("esp_idf_monitor")
    pty = pytest.importorskip("pty")
    srv, port = _pretend_board(200)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpgen", "monitor", "--port", f"socket://127.0.0.1:{port}", "--no-reset"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=REPO,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and b"mcpgen: tick 5" not in seen:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
        os.write(master, b"\x1d")  # Ctrl-]: the monitor's quit key
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        srv.close()
    text = seen.decode("utf-8", "replace")
    assert "esp_idf_monitor --port socket://127.0.0.1" in text and "--target esp32" in text
    assert "mcpgen: tick 5" in text
