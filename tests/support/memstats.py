"""Where a process's memory is: RSS, glibc's heap, CPython's arenas (for the memory runs).

Read in the process being measured (the gateway worker of ``benchmarks.gw_memory``, the
MQTT fleet worker of the fault suite): the kernel's view (``/proc/self/statm`` and
``smaps_rollup``), glibc's (``mallinfo2``, and ``malloc_info``'s count of arenas), and
CPython's obmalloc (``sys._debugmallocstats``: 1 MiB arenas held, and how full they are).
Linux and glibc only for the last two; elsewhere those fields are missing.
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import ctypes.util
import gc
import os
import re
import sys
import tempfile
import threading
from typing import Any

MiB = 1 << 20


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


try:
    _libc: Any = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _libc.mallinfo2.restype = _MallInfo2
    _libc.fopen.restype = ctypes.c_void_p
    _libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    _libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    _libc.fclose.argtypes = [ctypes.c_void_p]
except (OSError, AttributeError):  # not glibc 2.33+
    _libc = None


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def smaps_rollup() -> dict[str, int]:
    """Bytes of Rss, Anonymous, Private_Dirty... of the whole process."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as f:
            for line in f:
                m = re.match(r"(\w+):\s+(\d+) kB", line)
                if m:
                    out[m.group(1)] = int(m.group(2)) * 1024
    except OSError:
        pass
    return out


def mallinfo() -> dict[str, int]:
    """glibc's heap: ``arena`` (brk heap and per-thread arenas, bytes), ``hblkhd`` (mmapped
    chunks), ``uordblks`` (in use), ``fordblks`` (free but kept), ``keepcost``, and
    ``arenas`` (how many malloc arenas: one per thread that allocated, up to 8 per core)."""
    if _libc is None:
        return {}
    mi = _libc.mallinfo2()
    out = {name: int(getattr(mi, name)) for name, _ in _MallInfo2._fields_}
    with tempfile.NamedTemporaryFile("rb", suffix=".xml") as tmp:
        fp = _libc.fopen(tmp.name.encode(), b"w")
        if fp:
            _libc.malloc_info(0, fp)
            _libc.fclose(fp)
            out["arenas"] = len(re.findall(rb"<heap nr=", tmp.read()))
    return out


def pymalloc() -> dict[str, int]:
    """CPython's small-object allocator: arenas held now and at most, bytes in blocks in
    use and free in those arenas (parsed from ``sys._debugmallocstats``, which writes to
    the C stderr)."""
    fn = getattr(sys, "_debugmallocstats", None)
    if fn is None:
        return {}
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("ascii", "replace")
    out: dict[str, int] = {}
    for key, pattern in (
        ("arenas", r"# arenas allocated current\s*=\s*([\d,]+)"),
        ("arenas_highwater", r"# arenas highwater mark\s*=\s*([\d,]+)"),
        ("used_bytes", r"# bytes in allocated blocks\s*=\s*([\d,]+)"),
        ("free_bytes", r"# bytes in available blocks\s*=\s*([\d,]+)"),
        ("unused_pools", r"(\d[\d,]*) unused pools \*"),
    ):
        m = re.search(pattern, text)
        if m:
            out[key] = int(m.group(1).replace(",", ""))
    return out


def snapshot() -> dict[str, Any]:
    """All of the above, plus thread count and Python's allocated block count."""
    return {
        "rss": rss_bytes(),
        "smaps": smaps_rollup(),
        "malloc": mallinfo(),
        "pymalloc": pymalloc(),
        "threads": threading.active_count(),
        "blocks": sys.getallocatedblocks(),
    }


def live_bytes(s: dict[str, Any]) -> int:
    """Bytes that objects occupy (CPython's blocks in use, glibc's chunks in use and its
    mmapped ones), whatever the allocators keep mapped around them: what a leak grows,
    unlike RSS, which also holds arenas pinned by a few survivors."""
    m, p = s.get("malloc", {}), s.get("pymalloc", {})
    return int(p.get("used_bytes", 0) + m.get("uordblks", 0) + m.get("hblkhd", 0))


def summary(s: dict[str, Any]) -> str:
    m, p = s.get("malloc", {}), s.get("pymalloc", {})
    return (
        f"RSS {s['rss'] / MiB:.1f} MiB (anon {s['smaps'].get('Anonymous', 0) / MiB:.1f}); "
        f"glibc heap {m.get('arena', 0) / MiB:.1f} MiB, in use {m.get('uordblks', 0) / MiB:.1f}, "
        f"free {m.get('fordblks', 0) / MiB:.1f}, mmapped {m.get('hblkhd', 0) / MiB:.1f}, "
        f"{m.get('arenas', '?')} arenas; pymalloc {p.get('arenas', 0)} arenas "
        f"(highwater {p.get('arenas_highwater', 0)}), used {p.get('used_bytes', 0) / MiB:.1f} MiB, "
        f"free {p.get('free_bytes', 0) / MiB:.1f} MiB; {s['blocks']} blocks, {s['threads']} threads"
    )


class Probe:
    """The measuring commands both memory workers (gw_memory, mqtt_memory) answer the same
    way: ``tm_start``/``tm_snap``/``tm_diff`` (tracemalloc: where the blocks that stay come
    from), ``types`` (object counts by type that grew since the first ``types``),
    ``arenas`` (what keeps the sparse CPython arenas: ``benchmarks.arena_map``) and
    ``sleep``. :meth:`handle` returns None for any other command."""

    def __init__(self) -> None:
        """Made when the worker is empty, before its first ``mem``: runs the libraries'
        one-time set-up first, so the baseline holds it and a device's cost is not mixed
        with it. orjson before 3.11 maps an 8 MiB parse buffer at its first ``loads`` and
        keeps it (mostly untouched, so RSS barely moves, but mallinfo counts it as in use):
        a worker measured before its first parse showed +8 MiB of "live" bytes after the
        devices left, on a machine with orjson 3.8 (pyproject allows >=3.8)."""
        from mcpgen.runtime.core import codec

        codec.loads(b'{"jsonrpc":"2.0","id":0,"result":{}}')
        self._snaps: list[Any] = []
        self._type_counts: collections.Counter[str] = collections.Counter()

    async def handle(self, op: str, cmd: dict[str, Any]) -> dict[str, Any] | None:
        if op == "tm_start":
            import tracemalloc

            tracemalloc.start(int(cmd.get("frames", 8)))
            return {}
        if op == "tm_snap":
            import tracemalloc

            gc.collect()
            self._snaps.append(tracemalloc.take_snapshot())
            return {}
        if op == "tm_diff":
            gc.collect()
            top = self._snaps[-1].compare_to(self._snaps[0], "traceback")[: int(cmd.get("n", 15))]
            return {"top": [f"{st}\n    " + "\n    ".join(st.traceback.format()[-6:]) for st in top]}
        if op == "types":
            gc.collect()
            now = collections.Counter(type(o).__qualname__ for o in gc.get_objects())
            base = self._type_counts or now
            if not self._type_counts:
                self._type_counts.update(now)
            return {k: v - base.get(k, 0) for k, v in now.items() if v - base.get(k, 0) > 50}
        if op == "arenas":
            from benchmarks.arena_map import arena_map

            gc.collect()
            return arena_map()
        if op == "sleep":
            await asyncio.sleep(float(cmd["seconds"]))
            return {}
        return None


def print_arenas(label: str, got: dict[str, Any]) -> None:
    """Prints a worker's answer to ``arenas``: how many arenas, what the sparse ones hold."""
    if "error" in got:
        print(f"  arenas ({label}): {got['error']}", flush=True)
        return
    print(
        f"  arenas ({label}): {got['arenas']} holding {got['bytes'] / MiB:.2f} MiB, {got['sparse']} "
        f"of them sparse (at most 64 KiB in use); their blocks: {got['sparse_kinds']}",
        flush=True,
    )
    for value, n in got["samples"]:
        print(f"    {n} x {value}", flush=True)
