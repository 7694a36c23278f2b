"""What keeps each of CPython's arenas alive: a map of obmalloc's pools, read in place.

``sys._debugmallocstats`` says how many 1 MiB arenas a process holds and how many bytes
are in use in them, not which objects those are. An arena goes back to the system only
when its last block is freed, so after a mass departure the question is which few blocks
keep each arena. :func:`arena_map` walks the pools (CPython 3.11 on 64-bit Linux: 16 KiB
pools, the header of ``Objects/obmalloc.c``) found in the process's anonymous mappings,
tells used blocks from free ones by following each pool's free list, and names a used
block by the type its object header points at (a gc-tracked object has the gc header
first, an object with a managed dict two more words before that). A block with no known
type is counted by size (``raw144``): free lists of C types, dict key tables, buffers.
For a few ``str``/``int``/``tuple`` blocks of the sparse arenas it prints the value and
what holds it (:func:`holders`: a block, a dict's or list's table, or other memory).

A diagnostic for the memory benchmarks (``Probe``'s ``arenas`` command, ``--arenas`` of
``benchmarks.gw_memory`` and ``benchmarks.mqtt_memory``), not used by the runtime.
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import gc
import struct
import sys
from typing import Any

POOL_SIZE = 1 << 14
POOL_OVERHEAD = 48  # sizeof(struct pool_header), already a multiple of the 16-byte alignment
# count, freeblock, nextpool, prevpool, arenaindex, szidx, nextoffset, maxnextoffset
_HEADER = struct.Struct("<QQQQIIII")
_TYPE_OFFSETS = (8, 24, 40)  # where ob_type is: plain object, gc header first, managed dict too
# Kinds whose values are sampled, with where the object starts in its block.
_SAMPLED: dict[Any, int] = {str: 0, int: 0, bytes: 0, tuple: 16}
_RAW = {(i + 1) << 4: f"raw{(i + 1) << 4}" for i in range(32)}  # made once, not per block
_U64 = struct.Struct("<Q")


# -- reading memory ---------------------------------------------------------------------------


def _anon_rw_ranges() -> list[tuple[int, int]]:
    """Writable anonymous mappings (and the brk heap): where arenas and glibc's heap are."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 5 or not parts[1].startswith("rw"):
                continue
            if len(parts) >= 6 and parts[5] != "[heap]":
                continue  # files, stacks, vdso
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi))
    return out


def _pool(data: bytes) -> tuple[int, int, int] | None:
    """(arena index, block size, blocks in use) if ``data`` starts with a pool header: the
    largest offset must be exactly what the block size implies, which chance rarely meets."""
    count, _free, _next, _prev, arena, szidx, nextoff, maxnext = _HEADER.unpack_from(data)
    if szidx >= 32:
        return None
    size = (szidx + 1) << 4
    if maxnext != POOL_SIZE - size or not POOL_OVERHEAD <= nextoff <= POOL_SIZE:
        return None
    if count > (POOL_SIZE - POOL_OVERHEAD) // size or arena > 1 << 20:
        return None
    return arena, size, count


def _used_blocks(base: int, data: bytes, size: int, count: int) -> list[int]:
    """Offsets of the used blocks: every block carved so far that is not on the free list."""
    header = _HEADER.unpack_from(data)
    free = set()
    ptr = header[1]
    for _ in range(POOL_SIZE // size + 1):
        if not base <= ptr < base + POOL_SIZE:
            break
        free.add(ptr - base)
        ptr = _U64.unpack_from(data, ptr - base)[0]
    used = [off for off in range(POOL_OVERHEAD, header[6], size) if off not in free]
    return used[:count]


# -- naming blocks ----------------------------------------------------------------------------


def _known_types() -> dict[int, Any]:
    """Type objects by address (names are made only for the answer)."""
    types: dict[int, Any] = {id(obj): obj for obj in gc.get_objects() if isinstance(obj, type)}
    for module in list(sys.modules.values()):  # static types (C extensions) are not gc-tracked
        for value in list(getattr(module, "__dict__", {}).values()):
            if isinstance(value, type):
                types[id(value)] = value
    for t in (str, bytes, int, float, tuple, list, dict, set, frozenset, type(None), bool, type):
        types[id(t)] = t
    try:  # asyncio's future iterator has no name in any module
        future = asyncio.get_running_loop().create_future()
        hidden = type(future.__await__())
        types[id(hidden)] = hidden
        future.cancel()
    except RuntimeError:
        pass
    return types


def _name(kind: Any) -> str:
    if not isinstance(kind, type):
        return str(kind)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _kind_at(types: dict[int, Any], data: bytes, off: int, size: int) -> tuple[Any, int]:
    """The type of the object in the block at ``off`` (or its raw size name), and where in
    the block the object starts."""
    for t_off in _TYPE_OFFSETS:
        if off + t_off + 8 <= len(data):
            kind = types.get(_U64.unpack_from(data, off + t_off)[0])
            if kind is not None:
                return kind, t_off - 8
    return _RAW[size], 0


def _container_at(addr: int) -> str | None:
    """The dict, list or set whose separately allocated table holds ``addr``, if any."""
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            table_at = 32  # ma_keys
        elif isinstance(obj, list):
            table_at = 24  # ob_item
        elif isinstance(obj, (set, frozenset)):
            table_at = 40  # table
        else:
            continue
        start = _U64.unpack(ctypes.string_at(id(obj) + table_at, 8))[0]
        if start and start <= addr < start + sys.getsizeof(obj):
            first = [repr(k)[:40] for k in list(obj)[:4]]
            by = [type(r).__qualname__ for r in gc.get_referrers(obj)[:4]]
            return f"{type(obj).__qualname__}(len {len(obj)}, first {first}, held by {by})"
    return None


def holders(target: int, depth: int = 2, limit: int = 4) -> list[str]:
    """Where memory holds the pointer ``target``: the block of a pymalloc pool that holds it
    (and, ``depth`` times, what holds that block), the dict, list or set whose table holds
    it, or other memory (a C library's, such as a JSON parser's key cache)."""
    types = _known_types()
    needle = _U64.pack(target)
    out: list[str] = []
    for lo, hi in _anon_rw_ranges():
        data = ctypes.string_at(lo, hi - lo)
        pos = data.find(needle)
        while pos >= 0 and len(out) < limit:
            hit = lo + pos
            copies = hit == id(needle) + 32 or id(data) <= hit < id(data) + len(data) + 40
            if pos % 8 == 0 and not copies:
                pool_base = hit & ~(POOL_SIZE - 1)
                got = _pool(data[pool_base - lo : pool_base - lo + POOL_SIZE]) if pool_base >= lo else None
                if got is None:
                    out.append(_container_at(hit) or f"other memory at {hit:#x}")
                else:
                    size = got[1]
                    block = pool_base + POOL_OVERHEAD + (hit - pool_base - POOL_OVERHEAD) // size * size
                    kind, head = _kind_at(types, data, block - lo, size)
                    # A dict's, list's or set's table, whatever its stale bytes look like: a
                    # list's 16-byte table once read as an `object` (its unused second word
                    # still pointed at the type of the block's last tenant).
                    owner = _container_at(block)
                    desc = owner or f"{_name(kind)} (block of {size}, at +{hit - block})"
                    if depth > 1:
                        desc += " <- (" + "; ".join(holders(block + head, depth - 1, 2)) + ")"
                    out.append(desc)
            pos = data.find(needle, pos + 1)
    return out


def _describe(obj_addr: int, kind: type, with_holders: bool) -> str:
    """The value of a sampled object. A raw buffer can hold a pointer to a type where an
    object header would, so the type and a plausible reference count are checked before
    the address is read as an object."""
    refcnt, type_ptr = struct.unpack("<QQ", ctypes.string_at(obj_addr, 16))
    if type_ptr != id(kind) or not 0 < refcnt < 1 << 32:
        return f"{kind.__qualname__} (not an object)"
    text = repr(ctypes.cast(obj_addr, ctypes.py_object).value)
    text = text if len(text) <= 80 else f"{text[:80]}..."
    if with_holders:
        text += " held by " + "; ".join(holders(obj_addr, depth=2))
    return text


# -- the map ----------------------------------------------------------------------------------


def arena_map(top: int = 8, sparse_bytes: int = 64 * 1024, explain: int = 12) -> dict[str, Any]:
    """Arenas found; for the sparse ones (blocks in use at most ``sparse_bytes``), the
    ``top`` kinds of block in each, the kinds over all of them, and sampled values (the
    first ``explain`` with what holds them).

    Memory is copied first and read afterwards: a block allocated while looking (a dict of
    types, an int per address) would land in exactly the free slots of the sparse arenas
    being looked at. The copy is one large ``bytes`` per mapping, outside the arenas."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return {"error": "laid out for CPython 3.11"}
    ranges = _anon_rw_ranges()
    copies: list[bytes] = [b""] * len(ranges)
    for i, (lo, hi) in enumerate(ranges):
        copies[i] = ctypes.string_at(lo, hi - lo)
    types = _known_types()
    arenas: dict[int, dict[str, Any]] = {}
    for (lo, hi), whole in zip(ranges, copies, strict=True):
        addr = (lo + POOL_SIZE - 1) & ~(POOL_SIZE - 1)
        while addr + POOL_SIZE <= hi:
            data = whole[addr - lo : addr - lo + POOL_SIZE]
            got = _pool(data)
            addr += POOL_SIZE
            if got is None:
                continue
            index, size, count = got
            # (an arena of free pools only still counts: CPython keeps one such arena)
            a = arenas.setdefault(index, {"bytes": 0, "kinds": collections.Counter(), "samples": []})
            if count == 0:
                continue
            a["bytes"] += count * size
            for off in _used_blocks(addr - POOL_SIZE, data, size, count):
                kind, head = _kind_at(types, data, off, size)
                a["kinds"][kind] += 1
                if kind in _SAMPLED and len(a["samples"]) < 200:
                    a["samples"].append((addr - POOL_SIZE + off + head, kind))
    del copies
    sparse = {i: a for i, a in sorted(arenas.items()) if a["bytes"] <= sparse_bytes}
    totals: collections.Counter[Any] = collections.Counter()
    samples: collections.Counter[str] = collections.Counter()
    for a in sparse.values():
        totals.update(a["kinds"])
        for obj_addr, kind in a["samples"]:
            samples[_describe(obj_addr, kind, explain > 0)] += 1
            explain -= 1
    return {
        "arenas": len(arenas),
        "bytes": sum(a["bytes"] for a in arenas.values()),
        "sparse": len(sparse),
        "sparse_kinds": [(_name(k), n) for k, n in totals.most_common(30)],
        "samples": samples.most_common(60),
        "sparse_arenas": {
            i: {"bytes": a["bytes"], "kinds": [(_name(k), n) for k, n in a["kinds"].most_common(top)]}
            for i, a in sparse.items()
        },
    }
