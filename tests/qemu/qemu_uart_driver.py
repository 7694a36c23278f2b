"""The host conformance driver (tests/device/device_sim_driver.StdioSim) over QEMU's UART.

``QemuSim(elf, log_dir)`` boots the image in QEMU (``qemu-system-arm -M mps2-an385`` for
the Cortex-M3, ``qemu-system-riscv32 -M virt`` for RV32: the ELF header decides) and
speaks the same newline-delimited MCP through its MCP UART (a TCP socket), so every
assertion written against the host simulator runs unchanged against the emulated MCU.
``stderr()`` returns the firmware's debug console, the counterpart of the simulator's
stderr.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Optional, Union

from device_sim_driver import StdioSim  # noqa: E402
from device_testlib import DEFAULT_SPEC, LAMP_SPEC, REPO, TOOLSPEC, copy_spec  # noqa: E402,F401

from mcpgen.codegen.run.run_qemu import QemuDevice, start  # noqa: E402


class QemuSim(StdioSim):
    def __init__(self, exe: Path, log_dir: Path) -> None:  # noqa: D107 - same signature as StdioSim
        import queue

        log_dir.mkdir(parents=True, exist_ok=True)
        self.device: QemuDevice = start(exe, workdir=log_dir / f"qemu-{id(self)}")
        self.stderr_path = self.device.log_path
        host, port = "127.0.0.1", self.device.port
        self.sock = socket.create_connection((host, port), timeout=10)
        self.sock.settimeout(None)
        self._lines: queue.Queue[Optional[bytes]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 1

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self._lines.put(line + b"\n")
        self._lines.put(None)

    def send_raw(self, data: Union[bytes, str]) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.sock.sendall(data)

    def read_line(self, timeout: float = 10.0) -> str:
        return super().read_line(timeout)

    def read_json(self, timeout: float = 10.0) -> dict:
        return super().read_json(timeout)

    def stderr(self) -> str:
        return self.device.log_text()

    def alive(self) -> bool:
        return self.device.running

    def close(self) -> int:
        try:
            self.sock.close()
        finally:
            self.device.close()
        return 0
