"""Runs a device command and counts the tool calls that reach it: ``count_proxy.py FILE CMD...``.

Sits between the console (which talks to this process over stdio, as to any ``--device-cmd``)
and the real device process: every line is passed on unchanged both ways, and each
``tools/call`` request that goes to the device adds one to the number written in FILE. So
a test can see what reached the device, not what the console says it sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading


def main() -> int:
    count_file, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    calls = 0
    with open(count_file, "w") as f:
        f.write("0")

    def relay_out() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    threading.Thread(target=relay_out, daemon=True).start()
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "tools/call":
            calls += 1
            tmp = f"{count_file}.tmp"
            with open(tmp, "w") as f:
                f.write(str(calls))
            os.replace(tmp, count_file)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
