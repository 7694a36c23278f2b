"""Instructions per call of the gateway and of the echoes, counted by callgrind: figures, not a test.

    python -m benchmarks.gw_callgrind [--devices 100] [--seconds 10] [--rows compiled,picows echo]

Each row of the gateway section (``benchmarks.gateway``: the gateway process or an echo)
starts under ``valgrind --tool=callgrind --instr-atstart=no`` with its own emulator
process; after setup and one warm-up round, instrumentation is switched on
(``callgrind_control -i on``) for one round of the row's ``bench`` command and the counts
are dumped. The row's figure is the instructions of that round divided by its calls: user
space only (the kernel's TCP path, about half of each process's CPU, is not counted). It
moves far less from round to round than CPU time, but it does move with how many replies
a loop turn handles, which depends on what else the machine runs: compare rows of one
run on an idle machine. Needs valgrind.
"""

from __future__ import annotations

import argparse
import glob
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
from typing import Optional

from benchmarks import bindings, gateway, procutil

#: Rows that are a process of their own (the gc.freeze() row is the compiled gateway's).
ROWS = tuple(r for r in gateway.ALL if r != "compiled + gc.freeze()")
DEFAULT_ROWS = ("compiled", "picows echo", gateway.STREAM_GATEWAY, gateway.STREAM_ECHO)


class _UnderCallgrind(procutil.Child):
    """A row's process (its ``python -m ...`` arguments) run under callgrind, not yet counting."""

    def __init__(self, args: list[str], pure: bool, out: str, name: str) -> None:
        self.name = name
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        self.proc = subprocess.Popen(
            [*cmd, sys.executable, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=procutil.child_env(pure),
            cwd=str(procutil.REPO),
        )
        self._sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)


def _total(out: str) -> int:
    """The instructions in callgrind's dumps named ``out*`` (their ``summary:`` lines)."""
    total = 0
    for path in glob.glob(out + "*"):
        with open(path) as f:
            for line in f:
                if line.startswith("summary:"):
                    total += int(line.split()[1])
    return total


def measure_row(row: str, devices: int, seconds: float, bindings_dir: Optional[str], tmp: str) -> dict:
    args, pure = gateway.row_argv(row, bindings_dir)  # as the section runs the row
    out = os.path.join(tmp, row.replace(" ", "_").replace("(", "").replace(")", ""))
    proc = _UnderCallgrind(args, pure, out, row)
    emu: Optional[procutil.Child] = None
    try:
        info = proc.read(300)
        emu = procutil.emulator(f"ws://127.0.0.1:{info['port']}/", devices, 900, name=f"emulator ({row})")
        emu.read(300)
        proc.request({"cmd": "await", "n": devices, "timeout": 300}, 330)
        proc.request({"cmd": "bench", "duration": 2.0}, 300)  # warm-up, not counted
        subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
        r = proc.request({"cmd": "bench", "duration": seconds}, 600)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        return {"row": row, "calls": r["calls"], "instructions_per_call": _total(out) / max(1, r["calls"])}
    finally:
        if emu is not None:
            emu.stop()
        proc.stop()


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="gateway and echoes: instructions per call (callgrind)")
    ap.add_argument("--devices", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the counted round")
    ap.add_argument("--rows", default=",".join(DEFAULT_ROWS), help="comma-separated rows of section 2")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind is not installed (Debian: apt install valgrind)", file=sys.stderr)
        return 2
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        print(f"unknown row(s) {unknown}; rows: {', '.join(ROWS)}", file=sys.stderr)
        return 2
    procutil.raise_nofile_limit()
    built = bindings.build(lambda s: None)
    with tempfile.TemporaryDirectory(prefix="mcpgen-callgrind-") as tmp:
        for row in rows:
            r = measure_row(row, args.devices, args.seconds, str(built) if built else None, tmp)
            print(f"{row}: {r['instructions_per_call']:,.0f} instructions per call ({r['calls']:,} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
