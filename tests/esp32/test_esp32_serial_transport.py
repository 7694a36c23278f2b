"""The ESP-IDF port's serial transport (ports/esp_idf/transport_serial.cpp) run on the host:
serial_transport_driver.cpp compiles the real file with g++ over the fakes of fake_idf/
(FreeRTOS as pthreads, the UART's receive side on stdin, its transmit side a shared log
written byte by byte with a yield in between, so writers that are not serialised interleave).

* framing: lines split across UART reads, CRLF, blank lines and an overlong line reach the
  port's receive slots as the core's line reader frames them;
* log and MCP lines kept apart: tasks logging (each line in pieces, as ESP-IDF's log v2
  hands it over) while others send MCP replies leave every MCP line whole on the wire.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from mcpgen.codegen import resources
from mcpgen.codegen.targets.host import CXXFLAGS

HERE = Path(__file__).resolve().parent
TEMPLATE = resources.firmware_template()
REQUEST_BUFFER = 4096  # MCPGEN_REQUEST_BUFFER_SIZE of mcp_core.h


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("serial_transport") / "serial_transport_driver"
    subprocess.run(
        [
            "g++",
            *CXXFLAGS,
            f"-I{HERE / 'fake_idf'}",
            f"-I{TEMPLATE / 'core'}",
            f"-I{TEMPLATE / 'ports' / 'esp_idf'}",
            str(HERE / "serial_transport_driver.cpp"),
            str(TEMPLATE / "ports" / "esp_idf" / "transport_serial.cpp"),
            str(TEMPLATE / "core" / "mcpgen" / "line_reader.cpp"),
            "-pthread",
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


def run(driver: Path, mode: str, data: bytes = b"") -> tuple[list[str], bytes]:
    proc = subprocess.run([str(driver), mode], input=data, capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    head, sep, uart = proc.stdout.partition(b"--- uart ")
    assert sep, proc.stdout[-2000:]
    size, _, body = uart.partition(b"\n")
    assert len(body) == int(size)
    return head.decode().splitlines(), body


def test_lines_reach_the_receive_slots_as_framed(driver: Path) -> None:
    long_line = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"' + b"x" * 5000 + b'"}}'
    split = b'{"b":"' + b"y" * 300 + b'"}'  # longer than one UART read of the transport (128 bytes)
    data = b'{"a":1}\r\n' + b"\n  \n" + long_line + b"\n" + split + b"\n"
    events, uart = run(driver, "frames", data)
    assert events[0] == "connected"  # the cable is the link: up at start, no hello
    kinds = [(e.split()[0], int(e.split()[1])) for e in events[1:]]
    assert kinds == [("message", 7), ("oversized", REQUEST_BUFFER - 1), ("message", len(split))]
    assert bytes.fromhex(events[1].split()[2]) == b'{"a":1}'
    assert bytes.fromhex(events[2].split()[2]) == long_line[: REQUEST_BUFFER - 1]  # the id is in there
    assert bytes.fromhex(events[3].split()[2]) == split
    assert uart == b""  # nothing is written to the port unasked


def test_the_startup_line_reports_the_free_heap(driver: Path) -> None:
    # What a board owner reads at boot (docs/firmware.md, "Serial transport"): the fake
    # esp_get_free_heap_size / esp_get_minimum_free_heap_size return 291264 and 290000.
    proc = subprocess.run([str(driver), "frames"], input=b"", capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (
        b"mcpgen-serial: MCP on UART0: one JSON message per line; free heap 291264 bytes (minimum 290000)\n"
        in proc.stderr
    )


def test_log_lines_never_land_inside_mcp_lines(driver: Path) -> None:
    _, uart = run(driver, "mix")
    lines = uart.split(b"\n")
    assert lines[-1] == b""  # everything written ends with a newline
    lines = lines[:-1]
    mcp = [line for line in lines if line.startswith(b"{")]
    logs = [line for line in lines if not line.startswith(b"{")]
    sent = {json.loads(line)["id"] for line in mcp}  # each parses: no log byte inside
    assert len(mcp) == 4 * 150 and sent == {t * 1000 + i for t in range(4) for i in range(150)}
    # every log line came out (their pieces may mix with each other's, never with MCP)
    assert len(logs) == 4 * 150 + 1
    assert b"# {a log line that looks like JSON}" in logs  # a log line never starts with '{'
    assert sum(len(re.findall(rb"line \d+ of 150", line)) for line in logs) == 4 * 150
