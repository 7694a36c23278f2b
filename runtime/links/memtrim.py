"""Hands freed heap back to the OS after many devices left (glibc ``malloc_trim``).

Why: a gateway's sessions are many small and mid-sized allocations (buffers, frames,
dicts). When hundreds of devices leave, CPython and the C libraries free them, but
glibc keeps the freed pages mapped in its arenas (per-thread arenas and the top of the
main heap are trimmed only past ``M_TRIM_THRESHOLD``, and free chunks in the middle of
the heap never are). The process then stays at its peak RSS long after the devices left
(issue 18: 42.7 MiB before a soak, 82.2 MiB after, with no object leaked).
``malloc_trim(0)`` walks every arena and returns whole free pages with
``madvise(MADV_DONTNEED)``; it costs a few milliseconds, so it runs only after a mass
departure (a large share of the peak connection count gone, then a quiet second), and at
most once per ``min_interval``.

Elsewhere (musl, macOS, Windows) there is no ``malloc_trim`` and :class:`Trimmer` does
nothing; ``MCPGEN_MALLOC_TRIM=0`` in the environment switches it off.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import os
import sys
from collections.abc import Callable
from typing import Any, Optional

log = logging.getLogger("mcpgen.runtime.links.memtrim")


def _load_trim() -> Optional[Callable[[int], Any]]:
    if not sys.platform.startswith("linux") or os.environ.get("MCPGEN_MALLOC_TRIM") == "0":
        return None  # (MCPGEN_MALLOC_TRIM=0: off, e.g. to measure what it is worth)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _load_trim()


def release_sessions() -> None:
    """Drops what the runtime still holds of departed sessions (a trimmer's ``release``):
    the running loop's call deadlines list every session that made a timed call until a
    deadline is next due, up to ``call_timeout`` after its device left."""
    from mcpgen.runtime.core import deadlines  # (here, not at the top: the hot path is the heavy import)

    # CPython's attribute lookup cache (4096 entries) keeps a reference to the name of
    # each lookup, keyed by the name object: names built at run time (paho builds one per
    # MQTT 5 property for every Properties it packs or reads: a few per device) stay alive
    # there long after their session, scattered over the memory of the peak, which then
    # cannot go back to the OS. Clearing it costs one refill of hot lookups.
    clear = getattr(sys, "_clear_type_cache", None)
    if clear is not None:
        clear()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    deadlines.deadlines_for(loop).prune()


class Trimmer:
    """Decides when to trim from the live connection count, fed by a periodic timer.

    A trim runs when at least ``min_departed`` connections and half of the peak since
    the last trim are gone, the count has not changed for ``quiet`` seconds (the wave is
    over: trimming in the middle of it would only be undone), and ``min_interval``
    seconds passed since the last trim. ``follow_up`` > 0: once more that many seconds
    after such a trim (what departed sessions still held until their calls' deadlines,
    up to a call timeout, is free by then). ``release`` (the owner's hook) runs first: it
    drops what the owner still references of departed sessions, so their memory is free
    by the time it is trimmed.
    """

    def __init__(
        self,
        *,
        min_departed: int = 100,
        quiet: float = 1.0,
        min_interval: float = 5.0,
        release: Optional[Callable[[], object]] = None,
        follow_up: float = 0.0,
    ) -> None:
        self.min_departed = min_departed
        self.release = release
        self.follow_up = follow_up
        self._follow_at = 0.0
        self.quiet = quiet
        self.min_interval = min_interval
        self.trims = 0
        self._peak = 0
        self._last_count = -1
        self._changed_at = 0.0
        self._trimmed_at = float("-inf")
        self._live = 0
        self._timer: Optional[asyncio.TimerHandle] = None

    @property
    def available(self) -> bool:
        return _TRIM is not None

    def note(self, live: int, now: float) -> bool:
        """Called with the live connection count; returns True when it trimmed."""
        if live != self._last_count:
            self._last_count = live
            self._changed_at = now
        if live > self._peak:
            self._peak = live
            return False
        if self._follow_at and now >= self._follow_at:
            self._follow_at = 0.0
            self._trimmed_at = now
            return self.trim()
        departed = self._peak - live
        if (
            departed < self.min_departed
            or departed * 2 < self._peak
            or now - self._changed_at < self.quiet
            or now - self._trimmed_at < self.min_interval
        ):
            return False
        self._peak = live
        self._trimmed_at = now
        if self.follow_up > 0:
            self._follow_at = now + self.follow_up
        return self.trim()

    def departed(self, live: int) -> None:
        """For owners without a periodic timer: call with the live count when a session
        ends (and when one begins, so the peak is known). While a departure could still
        call for a trim, a one-shot timer on the running loop looks again once the
        count has been quiet, so the last device leaving needs no later event."""
        loop = asyncio.get_running_loop()
        self._live = live
        if self.note(live, loop.time()) or self._timer is not None:
            return
        if self._peak - live >= self.min_departed:
            self._timer = loop.call_later(self.quiet + 0.05, self._look_again)

    def _look_again(self) -> None:
        self._timer = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self.note(self._live, loop.time()):
            return
        departed = self._peak - self._live
        if departed >= self.min_departed and departed * 2 >= self._peak:
            # Not quiet yet, or a trim ran less than min_interval ago: later.
            wait = max(self.quiet, self._trimmed_at + self.min_interval - loop.time())
            self._timer = loop.call_later(wait + 0.05, self._look_again)

    def cancel(self) -> None:
        """Stops the timer of :meth:`departed` (the owner is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def trim(self) -> bool:
        """Releases departed sessions, collects garbage and returns free heap pages to
        the OS now (the last step on glibc only; False without it)."""
        if self.release is not None:
            self.release()
        gc.collect()  # cycles of departed sessions first, so their memory is free to trim
        if _TRIM is None:
            return False
        _TRIM(0)
        self.trims += 1
        log.debug("malloc_trim after a mass departure (trim %d)", self.trims)
        return True


__all__ = ["Trimmer", "release_sessions"]
