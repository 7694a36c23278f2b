"""benchmarks/arena_map.py: the map of CPython's arenas that says what keeps each one."""

from __future__ import annotations

import gc
import sys

import pytest

from benchmarks import arena_map
from tests.support import memstats

_CPYTHON_311 = sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)
pytestmark = pytest.mark.skipif(
    not (_CPYTHON_311 and sys.platform.startswith("linux")),
    reason="reads CPython 3.11's obmalloc pools on Linux",
)


class Survivor:
    """A type made here, so that every block of it in the map is one of the test's."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


def test_finds_every_arena_and_names_the_few_blocks_that_keep_the_sparse_ones() -> None:
    gc.collect()
    many = [Survivor(i) for i in range(300_000)]  # about 10 MiB: new arenas
    kept = many[::20_000]  # 15 survivors spread over those arenas
    del many
    gc.collect()

    got = arena_map.arena_map(explain=0)
    stats = memstats.pymalloc()

    # (read one after the other: the reading itself may have needed or freed one arena)
    assert abs(got["arenas"] - stats["arenas"]) <= 1, (got["arenas"], stats["arenas"])
    in_use = stats["used_bytes"]
    assert abs(got["bytes"] - in_use) <= 0.02 * in_use, (got["bytes"], in_use)
    kinds = dict(got["sparse_kinds"])
    name = f"{__name__}.Survivor"
    assert kinds.get(name, 0) >= len(kept) // 2, kinds  # most survivors sit alone in sparse arenas
    assert kinds.get(name, 0) <= len(kept)
    assert all(isinstance(s, Survivor) for s in kept)


def test_holders_finds_the_list_that_holds_an_object() -> None:
    value = "".join(["held-", "by-", "a-list"])  # made at run time: no constant holds it
    holder = [value]
    # Freed memory may still hold the pointer (stale copies, listed first when they lie at
    # lower addresses): a limit above those, so that the list's own table is reached.
    found = arena_map.holders(id(value), depth=1, limit=64)
    assert any(text.startswith("list(len 1") for text in found), found
    assert holder[0] is value
