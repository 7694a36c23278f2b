"""The gateway hands freed heap back to the OS after a mass departure (issue 18 item 6).

The policy (runtime/links/memtrim.py) on its own, then a real gateway: 150 devices connect and
leave, and the gateway trims once by itself; the figures of what that is worth are in
the fault suite (test_faults.py) and docs/security.md.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys

import pytest

from mcpgen.runtime import Gateway
from mcpgen.runtime.links.memtrim import Trimmer

needs_glibc = pytest.mark.skipif(not Trimmer().available, reason="no glibc malloc_trim here")


def feed(t: Trimmer, counts: list[int], start: float = 0.0, step: float = 0.5) -> list[float]:
    """Feeds counts at ``step`` intervals; returns the times a trim happened."""
    return [start + i * step for i, n in enumerate(counts) if t.note(n, start + i * step)]


@needs_glibc
def test_trims_once_after_a_mass_departure_has_settled() -> None:
    t = Trimmer(min_departed=100, quiet=1.0, min_interval=30.0)
    # 300 connect, 250 leave over a second, then nothing changes.
    when = feed(t, [0, 100, 300, 300, 200, 50, 50, 50, 50, 50, 50])
    assert when == [3.5]  # 1 s after the count last changed (2.5), not in the middle of it
    assert t.trims == 1


@needs_glibc
def test_no_trim_for_small_or_partial_departures_or_too_often() -> None:
    t = Trimmer(min_departed=100, quiet=1.0, min_interval=30.0)
    assert feed(t, [80, 0, 0, 0, 0]) == []  # under min_departed
    t = Trimmer(min_departed=100, quiet=1.0, min_interval=30.0)
    assert feed(t, [1000, 700, 700, 700, 700]) == []  # under half of the peak
    t = Trimmer(min_departed=100, quiet=1.0, min_interval=30.0)
    assert feed(t, [400, 0, 0, 0, 400, 0, 0, 0, 0]) == [1.5]  # the second wave: within 30 s
    assert feed(t, [400, 0, 0, 0], start=40.0) == [41.5]  # later: again


@needs_glibc
def test_follow_up_trims_once_more_after_the_deadlines() -> None:
    """What departed sessions held until their calls' deadlines (up to a call timeout
    after the departure) is free later: the gateway trims once more then (follow_up)."""
    t = Trimmer(min_departed=100, quiet=1.0, min_interval=30.0, follow_up=3.0)
    assert feed(t, [300, 300] + [0] * 14) == [2.0, 5.0]  # the trim, then once more 3 s on
    t = Trimmer(min_departed=100, quiet=1.0, min_interval=30.0)
    assert feed(t, [300, 300] + [0] * 14) == [2.0]  # without: only the first


@pytest.mark.asyncio
async def test_departed_trims_once_the_count_is_quiet_without_a_periodic_feed() -> None:
    """The MQTT fleet has no sweep timer: it reports arrivals and departures only, and
    the trimmer looks again by itself once the last device has gone."""
    released = []
    t = Trimmer(min_departed=20, quiet=0.2, min_interval=0.0, release=lambda: released.append(1))
    for n in range(1, 41):
        t.departed(n)
    for n in range(39, -1, -1):
        t.departed(n)
    assert released == []  # not in the middle of the wave
    await asyncio.sleep(0.6)
    assert released == [1]  # the release hook ran once, a quiet moment after the last one left
    assert t.trims == (1 if t.available else 0)
    t.departed(5)  # a small wave: nothing armed
    t.departed(0)
    await asyncio.sleep(0.4)
    assert released == [1]
    t.cancel()


@needs_glibc
@pytest.mark.asyncio
async def test_gateway_trims_after_its_devices_leave() -> None:
    from websockets.asyncio.client import connect

    hello = json.dumps({"type": "hello", "version": 1, "features": {"mcp": True}, "transport": "websocket"})
    async with Gateway(host="127.0.0.1", port=0, hello_timeout=5, setup_timeout=0.2) as gw:
        url = f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"
        trimmer = gw._trimmer  # the gateway's own
        before = trimmer.trims
        conns = []
        for i in range(150):
            ws = await connect(url, additional_headers={"Device-Id": f"d-{i}", "Client-Id": f"c-{i}"})
            await ws.send(hello)
            conns.append(ws)
        await asyncio.sleep(0.5)
        await asyncio.gather(*(ws.close() for ws in conns))
        for _ in range(60):  # the quiet second after the wave, then the sweep trims
            if trimmer.trims > before:
                break
            await asyncio.sleep(0.1)
        assert trimmer.trims == before + 1, "the gateway did not trim after 150 devices left"


def live_sessions() -> int:
    """RpcSession objects alive (compiled or pure: both are tracked by the GC)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == "RpcSession")


@pytest.mark.asyncio
async def test_departed_sessions_are_released_before_the_trim() -> None:
    """Issue 18: the loop's call deadlines kept every session that had a timed call in
    flight listed until the next deadline fell due (here 30 s later), so the trim after
    a mass departure ran while thousands of dead sessions still pinned CPython's arenas."""
    from websockets.asyncio.client import connect

    hello = json.dumps({"type": "hello", "version": 1, "features": {"mcp": True}, "transport": "websocket"})
    before = live_sessions()
    # setup_timeout 30: each device's `initialize` (never answered here) is a timed call.
    async with Gateway(host="127.0.0.1", port=0, hello_timeout=5, setup_timeout=30) as gw:
        url = f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"
        trimmer = gw._trimmer
        conns = []
        for i in range(120):
            ws = await connect(url, additional_headers={"Device-Id": f"r-{i}", "Client-Id": f"c-{i}"})
            await ws.send(hello)
            conns.append(ws)
        for _ in range(100):  # every device's initialize is in flight
            if live_sessions() - before >= 120:
                break
            await asyncio.sleep(0.05)
        assert live_sessions() - before >= 120
        start = trimmer.trims
        await asyncio.gather(*(ws.close() for ws in conns))
        for _ in range(60):
            if trimmer.trims > start:
                break
            await asyncio.sleep(0.1)
        assert trimmer.trims == start + 1
        left = live_sessions() - before
        assert left == 0, f"{left} sessions of departed devices still alive after the trim"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
