"""A ticker task that measures how long the event loop was kept from running it.

Shared by the runtime, bridge and console tests of device-reported patterns (issue 40):
whatever a check does, it must not hold the loop, so the longest gap between the
ticker's wake-ups stays near its period (asserted against a generous bound).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Optional

#: The ReDoS reproduction: a device reports this pattern, a user or an LLM sends a
#: 46-character sentence that almost matches. `re` backtracks through about 2^22 ways of
#: splitting SENTENCE's last word (about 6 s on a loaded 2-core machine, seconds anywhere):
#: enough to show a stall in bounded time. ALL_A (45 letters and "!", 2^44 ways) would
#: never finish on `re`; RE2 answers both in microseconds.
EVIL_PATTERN = r"^(\w+\s?)*$"
SENTENCE = "a " * 11 + "a" * 23 + "!"
ALL_A = "a" * 45 + "!"
#: A generous bound on one loop stall (RE2 answers in microseconds; `re` took ~13,500 ms).
MAX_LAG = 1.0


class Ticker:
    """``async with Ticker() as t:`` runs a task that wakes every ``period`` seconds and
    keeps the longest gap between wake-ups (``max_gap``) and their count (``ticks``)."""

    def __init__(self, period: float = 0.005) -> None:
        self.period = period
        self.ticks = 0
        self.max_gap = 0.0
        self._task: Optional[asyncio.Task[None]] = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(self.period)
            now = loop.time()
            self.max_gap = max(self.max_gap, now - last)
            self.ticks += 1
            last = now

    async def ticked(self, more: int) -> None:
        """Waits until the ticker has woken ``more`` more times."""
        target = self.ticks + more
        while self.ticks < target:
            await asyncio.sleep(self.period)

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        await self.ticked(3)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ticked(3)  # the loop runs on after the work too
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
