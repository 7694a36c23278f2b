"""A stand-in for Espressif's QEMU (qemu-system-riscv32 / -xtensa, tests/selftest): records its
arguments in $FAKE_LOG, answers `-machine help` with $FAKE_QEMU_MACHINES, and otherwise
serves the host simulator $FAKE_QEMU_SIM on a pseudo-terminal it names as QEMU does
("char device redirected to /dev/pts/N (label serial0)"), so the MCP part is real."""

import json
import os
import signal
import subprocess
import sys
import tty

args = sys.argv[1:]
if args[:2] == ["-machine", "help"]:
    print("Supported machines are:")
    for m in os.environ.get("FAKE_QEMU_MACHINES", "esp32c3 esp32").split():
        print(f"{m:<20} fake {m} machine")
    raise SystemExit(0)
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps([os.environ["FAKE_QEMU_NAME"], *args]) + "\n")
flash = next(a for a in args if a.endswith(",if=mtd,format=raw"))[len("file=") : -len(",if=mtd,format=raw")]
if os.path.getsize(flash) != 4 * 1024 * 1024:
    print(f"qemu: flash image {flash} is not 4 MB", flush=True)
    raise SystemExit(1)
master, slave = os.openpty()
tty.setraw(slave)  # no echo before the client configures the port
sim = subprocess.Popen(
    [os.environ["FAKE_QEMU_SIM"], "--stdio"], stdin=master, stdout=master, stderr=subprocess.DEVNULL
)


def stop(*_: object) -> None:
    # No sim.wait() here: the main thread is inside it (Popen's wait lock is not reentrant).
    sim.kill()
    os._exit(0)


signal.signal(signal.SIGTERM, stop)
print(f"char device redirected to {os.ttyname(slave)} (label serial0)", flush=True)
sim.wait()
