"""Call deadlines: one coarse sweep per event loop instead of a timer per call."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpgen.runtime.core import codec


class Owner:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.fired: list[tuple[Any, float, Any, float]] = []

    def expire_request(self, rid: Any, timeout: float, what: Any) -> None:
        self.fired.append((rid, timeout, what, self.loop.time()))


async def test_entries_fire_after_their_deadline_within_the_resolution() -> None:
    loop = asyncio.get_running_loop()
    wheel = codec.Deadlines(loop, resolution=0.05)
    owner = Owner(loop)
    t0 = loop.time()
    for i, t in enumerate((0.3, 0.1, 0.2, 0.1)):
        wheel.add(t, owner, i, f"call {i}")
    assert wheel.scheduled == 4
    await asyncio.sleep(0.6)
    assert sorted(rid for rid, *_ in owner.fired) == [0, 1, 2, 3]
    for rid, timeout, what, at in owner.fired:
        assert what == f"call {rid}"
        assert timeout <= at - t0 <= timeout + 0.2, (rid, at - t0)
    assert wheel.scheduled == 0
    wheel.close()


async def test_one_failing_owner_does_not_stop_the_others() -> None:
    loop = asyncio.get_running_loop()
    wheel = codec.Deadlines(loop, resolution=0.02)

    class Broken:
        def expire_request(self, *a: Any) -> None:
            raise RuntimeError("owner bug")

    good = Owner(loop)
    wheel.add(0.05, Broken(), 1, "x")
    wheel.add(0.05, good, 2, "y")
    await asyncio.sleep(0.2)
    assert [f[0] for f in good.fired] == [2]
    wheel.close()


async def test_the_loop_keeps_one_wheel_and_answered_calls_cost_no_timeout() -> None:
    loop = asyncio.get_running_loop()
    assert codec.deadlines_for(loop) is codec.deadlines_for(loop)
    s = codec.RpcSession()
    owner = Owner(loop)
    wheel = codec.deadlines_for(loop)
    futs = []
    for _ in range(500):
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_BOOLEAN)
        wheel.add(0.05, owner, s.last_id, "t")
        futs.append(fut)
    for rid in range(1, 501):
        s.feed(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"true"}]}}' % rid)
    assert all(f.result() is True for f in futs)
    await asyncio.sleep(0.2)
    # The owner was asked about every entry (it checks its own pending table, as Device does).
    assert len(owner.fired) == 500 and s.pending_count == 0
