"""``--port auto``: find the ESP32 board on USB by the vendor/product id of its serial chip.

The ports come from pyserial's ``serial.tools.list_ports`` (the same list esptool and
esp-idf-monitor use; it reads the USB ids on Linux, macOS and Windows alike), so there is
no per-OS code here. A board is a port whose USB id is one of ``KNOWN_CHIPS``:

* Espressif's own USB (``303A:*``: the USB-Serial-JTAG of the S3/C3/C6 and the S2/S3 USB-OTG
  console, any product id);
* the USB-to-UART bridges dev boards carry: Silicon Labs CP210x, WCH CH34x, FTDI.

One board: it is used (and named). Several: a numbered prompt on a terminal, and a refusal
listing them otherwise (a script must say which). None: one line saying what was looked for
and how to name a port by hand.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

AUTO = "auto"

# USB vendor id -> (product ids, or None for every product of the vendor; what it is).
KNOWN_CHIPS: dict[int, tuple[Optional[frozenset[int]], str]] = {
    0x303A: (None, "Espressif native USB"),
    0x10C4: (frozenset({0xEA60, 0xEA70, 0xEA71}), "Silicon Labs CP210x"),
    0x1A86: (frozenset({0x7522, 0x7523, 0x55D3, 0x55D4}), "WCH CH34x"),
    0x0403: (frozenset({0x6001, 0x6010, 0x6014, 0x6015}), "FTDI"),
}

LOOKED_FOR = (
    "Espressif native USB 303A:*, CP210x 10C4:EA60/EA70, CH34x 1A86:7523/55D4, FTDI 0403:6001/6010/6014/6015"
)


class PortError(Exception):
    """No board, or several and nobody to choose: one message saying what to do."""


@dataclass(frozen=True)
class Board:
    """A serial port that looks like an ESP32 board."""

    device: str  # what pyserial opens: /dev/ttyUSB0, /dev/cu.usbserial-0001, COM3
    chip: str  # the USB chip, e.g. "Silicon Labs CP210x"
    vid: int
    pid: int
    description: str = ""

    def label(self) -> str:
        about = f" - {self.description}" if self.description and self.description != "n/a" else ""
        return f"{self.device} ({self.chip}, {self.vid:04X}:{self.pid:04X}){about}"


def chip_of(vid: Optional[int], pid: Optional[int]) -> Optional[str]:
    """The name of a known USB serial chip, or None."""
    if vid is None or pid is None or vid not in KNOWN_CHIPS:
        return None
    pids, name = KNOWN_CHIPS[vid]
    return name if pids is None or pid in pids else None


def list_serial_ports() -> list[Any]:
    """pyserial's port list (``ListPortInfo`` objects); empty without pyserial."""
    try:
        from serial.tools import list_ports
    except ImportError:
        return []
    return list(list_ports.comports())


def find_boards(ports: Optional[Iterable[Any]] = None) -> list[Board]:
    """The ports (default: the machine's) that are ESP32 boards, sorted by device name."""
    found = []
    for p in list_serial_ports() if ports is None else ports:
        chip = chip_of(getattr(p, "vid", None), getattr(p, "pid", None))
        if chip is not None:
            found.append(Board(p.device, chip, p.vid, p.pid, getattr(p, "description", "") or ""))
    return sorted(found, key=lambda b: b.device)


def _none_found(ports: Sequence[Any]) -> str:
    others = sorted(p.device for p in ports)
    seen = f"; other serial ports: {', '.join(others)}" if others else ""
    return (
        f"no ESP32 board found on USB (looked for {LOOKED_FOR}){seen}\n"
        "  fix: plug the board in with a data cable (not a charge-only one), "
        "or name the port: --port /dev/ttyUSB0 (COM3 on Windows)"
    )


def pick(boards: Sequence[Board], ask: Callable[[str], str], out: Callable[[str], None]) -> Board:
    """A numbered prompt until a valid choice; PortError on end of input."""
    out("several boards are connected:")
    for i, b in enumerate(boards, 1):
        out(f"  {i}) {b.label()}")
    while True:
        try:
            answer = ask(f"which one? [1-{len(boards)}] ").strip()
        except EOFError:
            raise PortError("no board chosen; name one with --port PORT") from None
        if answer.isdigit() and 1 <= int(answer) <= len(boards):
            return boards[int(answer) - 1]
        out(f"type a number from 1 to {len(boards)} (or Ctrl-D to stop)")


def resolve_port(
    port: Optional[str],
    *,
    ports: Optional[Sequence[Any]] = None,
    interactive: Optional[bool] = None,
    ask: Callable[[str], str] = input,
    out: Callable[[str], None] = print,
) -> str:
    """``port`` itself unless it is ``auto`` (or None): then the one board found, or the one
    the user picks. ``interactive`` defaults to stdin and stdout being terminals."""
    if port and port != AUTO:
        return port
    listed = list_serial_ports() if ports is None else list(ports)
    boards = find_boards(listed)
    if not boards:
        raise PortError(_none_found(listed))
    if len(boards) == 1:
        out(f"using {boards[0].label()}")
        return boards[0].device
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        listing = "\n".join(f"    {b.label()}" for b in boards)
        raise PortError(
            f"{len(boards)} boards are connected and none was chosen:\n{listing}\n"
            f"  fix: name one, e.g. --port {boards[0].device}"
        )
    chosen = pick(boards, ask, out)
    out(f"using {chosen.device}")
    return chosen.device
