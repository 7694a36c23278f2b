"""Instruction-level profile of the compiled hot path (for the runtime's owner).

``python -m benchmarks.profile [MESSAGE ...]`` runs, for each message kind of
:mod:`benchmarks.frames` (default: all), a child Python under ``valgrind --tool=callgrind``
that feeds 2000 frames through ``Session.feed`` with callgrind collecting only inside
``feed`` (``--toggle-collect`` on its Cython wrapper), and prints the heaviest functions
(inclusive instructions per message). ``encode`` profiles the encoder the same way.
Deterministic: instruction counts, not time.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
N = 2000

_CHILD = r"""
import asyncio, gc, sys
sys.path.insert(0, {bindings!r})
from mcpgen.runtime.core import codec
from benchmarks import frames as fr
mode = sys.argv[1]
n = int(sys.argv[2])
if mode == "encode":
    from desk_lamp_tools import _bindings as B
    s = codec.RpcSession(fr.SESSION_ID)
    v = B.args_light_set_rgb
    tc = s.tools_call
    for _ in range(n):
        tc("self.light.set_rgb", v(255, 200, 12))
else:
    msg = {{m.key: m for m in fr.messages(fr.load_examples())}}[mode]
    kind = codec.KIND_RAW if msg.kind in ("raw", "error") else codec.kind_code(msg.kind)
    loop = asyncio.new_event_loop()
    s = codec.RpcSession(fr.SESSION_ID)
    keep = []
    for i in range(1, n + 1):
        f = loop.create_future()
        s.expect(i, f, kind)
        if msg.kind == "error":
            keep.append(f)
    frames = msg.frames(range(1, n + 1))
    gc.collect()
    gc.freeze()
    feed = s.feed
    for x in frames:
        feed(x)
    for f in keep:
        f.exception()
"""

_SKIP = re.compile(
    r"PROGRAM TOTALS|libc-start|below main|python\.c|main\.c|pythonrun|ceval|pycore_c|ld-linux|"
    r"CyFunction_Vectorcall|\?\?\?:0x0000000004|call\.c:PyObject_Vectorcall "
)


def _toggles(mode: str) -> list[str]:
    if mode == "encode":
        return ["__pyx_pw_7runtime_5codec_7Session_*tools_call", "__pyx_pw_*args_light_set_rgb"]
    return ["__pyx_pw_7runtime_5codec_7Session_*feed"]


def profile(mode: str, top: int = 18, bindings: Optional[Path] = None) -> list[tuple[float, str]]:
    """(instructions per message, function) of the heaviest functions, inclusive."""
    pydir = bindings or REPO / "build" / "benchmarks" / "bindings" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "child.py"
        script.write_text(_CHILD.format(bindings=str(pydir)))
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}"]
        cmd += [f"--toggle-collect={t}" for t in _toggles(mode)]
        cmd += [sys.executable, str(script), mode, str(N)]
        subprocess.run(cmd, cwd=REPO, capture_output=True, check=True)
        text = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", str(out)], capture_output=True, text=True, check=True
        ).stdout
    rows: list[tuple[float, str]] = []
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        if _SKIP.search(m.group(2)):
            if "PROGRAM TOTALS" in m.group(2):
                rows.append((int(m.group(1).replace(",", "")) / N, "TOTAL (collected)"))
            continue
        func = re.sub(r"/tmp/python-build[^:]*/", "", m.group(2))
        func = re.sub(r" \[[^\]]*\]$", "", func)
        rows.append((int(m.group(1).replace(",", "")) / N, func))
        if len(rows) > top:
            break
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "modes", nargs="*", help="call_bool call_int call_string call_object tools_list error encode"
    )
    ap.add_argument("--top", type=int, default=18)
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    modes = args.modes or [
        "call_bool",
        "call_int",
        "call_string",
        "call_object",
        "tools_list",
        "error",
        "encode",
    ]
    for mode in modes:
        print(f"== {mode}: inclusive instructions per message")
        for ir, func in profile(mode, args.top):
            print(f"{ir:10,.0f}  {func}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
