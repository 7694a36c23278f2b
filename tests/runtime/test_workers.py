"""SO_REUSEPORT workers: N processes share one port and each serves its own devices."""

from __future__ import annotations

import asyncio
import os
import socket

import pytest
from runtime_fakes import FakeWsDevice
from runtime_workers_serve import tag_allocator, tag_devices

from mcpgen.runtime.links.workers import Workers

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="needs SO_REUSEPORT")


async def test_two_workers_share_the_port_and_each_serves_its_devices() -> None:
    with Workers(tag_devices, workers=2) as w:
        url = f"ws://127.0.0.1:{w.port}/xiaozhi/v1/"
        fakes: list[FakeWsDevice] = []
        try:
            # Devices connecting before the second worker listens all go to the first.
            assert await asyncio.to_thread(w.wait_listening, 30), "both workers listen"
            for i in range(24):
                fake = FakeWsDevice(url, f"dev-{i}", token=None)
                await fake.start()
                fakes.append(fake)
            for _ in range(100):
                if all(f.core.state.get("counter", 0) for f in fakes):
                    break
                await asyncio.sleep(0.1)
            served_by = {f.device_id: f.core.state.get("counter", 0) for f in fakes}
            assert set(served_by.values()) == {1, 2}, f"both workers serve devices: {served_by}"
        finally:
            for f in fakes:
                await f.close()
    assert w.alive() == 0


@pytest.mark.parametrize(("compact", "expected"), [(False, 1), (True, 2)])
async def test_compact_memory_starts_the_workers_on_malloc(compact: bool, expected: int) -> None:
    """compact_memory=True runs the workers with PYTHONMALLOC=malloc (and leaves this
    process's environment as it was)."""
    before = dict(os.environ)
    with Workers(tag_allocator, workers=1, compact_memory=compact) as w:
        assert dict(os.environ) == before
        assert await asyncio.to_thread(w.wait_listening, 30), "the worker listens"
        fake = FakeWsDevice(f"ws://127.0.0.1:{w.port}/xiaozhi/v1/", "dev-alloc", token=None)
        await fake.start()
        try:
            for _ in range(100):
                if fake.core.state.get("counter", 0):
                    break
                await asyncio.sleep(0.1)
            assert fake.core.state.get("counter", 0) == expected
        finally:
            await fake.close()
