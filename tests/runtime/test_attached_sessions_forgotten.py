"""The bridge and the console forget a gateway session when it ends (issue 40, item 2).

``codegen bridge`` and ``codegen console`` attach devices through
:class:`mcpgen.runtime.bridge.attach.DeviceSources`, which used to append every handle a
gateway handed over and never drop one (+119 MiB over 10,000 sessions). Here devices
connect to the gateway of a real ``DeviceSources`` and leave, again and again (one id
reconnecting, or a new id each time), and what is kept is counted after a warm-up: the
handles in the device lists, the ``Device`` objects alive, and the heap traced (by
``tracemalloc``, started before the warm-up so that frees count) over the sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from runtime_fakes import FakeWsDevice

from mcpgen.runtime import Device
from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.bridge.attach import DeviceSources, add_device_arguments
from mcpgen.runtime.console import console as console_module
from mcpgen.runtime.console import metrics as console_metrics
from mcpgen.runtime.console.console import Console
from mcpgen.runtime.links import memtrim

#: Disconnected devices the console keeps on its page here (console.MAX_GONE, lowered), and
#: ids the metrics keep for reconnects (metrics.MAX_SEEN_IDS, lowered): reached in the warm-up.
KEPT = 10
#: Sessions before counting, then sessions counted.
WARMUP = 25
SESSIONS = 60


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_device_arguments(parser)
    return parser.parse_args(argv)


def settle() -> None:
    """What the runtime drops of departed sessions by itself (the gateway's trimmer does it
    after a departure; the loop's call deadlines list a session until then), then a GC."""
    memtrim.release_sessions()
    gc.collect()


def live_handles() -> int:
    settle()
    return sum(1 for o in gc.get_objects() if type(o) is Device)


async def attach(front: str) -> tuple[DeviceSources, asyncio.Queue[Any], Callable[[], int], Any]:
    """A started DeviceSources (a gateway on a free port) feeding ``front``; returns it, the
    queue of handed-over handles, a count of what ``front`` keeps, and ``front``."""
    handed: asyncio.Queue[Any] = asyncio.Queue()
    target: Any
    if front == "bridge":
        target = Bridge()

        def keep(device: Any, _transport: str) -> None:
            target.add_device(device)
            handed.put_nowait(device)

        def kept() -> int:
            return len(target.devices) + len(target._gone)
    else:
        target = Console()

        def keep(device: Any, transport: str) -> None:
            target.add_device(device, transport)
            handed.put_nowait(device)

        def kept() -> int:
            return len(target.entries) + len(target.metrics._seen)

    sources = DeviceSources(parsed("--gateway-port", "0"), keep)
    await sources.start()
    return sources, handed, kept, target


async def one_session(url: str, handed: asyncio.Queue[Any], device_id: str) -> None:
    fake = await FakeWsDevice(url, device_id, token=None).start()
    device = await asyncio.wait_for(handed.get(), 30)
    await fake.close()
    await asyncio.wait_for(device.wait_closed(), 30)


@pytest.mark.parametrize("ids", ["one-id-reconnecting", "a-new-id-each-time"])
@pytest.mark.parametrize("front", ["bridge", "console"])
async def test_ended_sessions_are_forgotten(front: str, ids: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console_module, "MAX_GONE", KEPT)
    monkeypatch.setattr(console_metrics, "MAX_SEEN_IDS", KEPT)
    sources, handed, kept, target = await attach(front)
    gateway = sources.hubs[0][0]
    url = f"ws://127.0.0.1:{gateway.port}/"
    n = 0

    async def sessions(count: int) -> None:
        nonlocal n
        for _ in range(count):
            n += 1
            await one_session(url, handed, "lamp" if ids == "one-id-reconnecting" else f"lamp-{n}")

    tracemalloc.start()  # from the start: what is freed later is counted as freed
    try:
        await sessions(WARMUP)
        kept_before, handles_before = kept(), live_handles()
        traced_before = tracemalloc.get_traced_memory()[0]
        await sessions(SESSIONS)
        settle()
        grown = tracemalloc.get_traced_memory()[0] - traced_before
        tracemalloc.stop()
        print(
            f"{front}, {ids}: {SESSIONS} sessions grew the traced heap by {grown} bytes "
            f"({grown / SESSIONS:.0f} per session); handles alive {handles_before} -> {live_handles()}"
        )
        assert len(sources.devices) == 0, "DeviceSources keeps no ended session"
        assert kept() == kept_before, f"the {front}'s device lists stay as they were"
        assert live_handles() <= handles_before, "no Device handle outlives its session"
        # before: ~12 KiB per session kept (+119 MiB over 10,000)
        assert grown < SESSIONS * 512, f"{grown / SESSIONS:.0f} bytes kept per session"
    finally:
        tracemalloc.stop()
        await target.close()
        await sources.close()
