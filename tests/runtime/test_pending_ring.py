"""The session's pending table (reused ring slots + overflow dict) and slot deadlines."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpgen.runtime.core import codec


def _reply(rid: Any, text: str = "true") -> bytes:
    return b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}' % (
        str(rid).encode(),
        text.encode(),
    )


async def test_sequential_calls_reuse_one_slot() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession()
    first = None
    for _ in range(50):
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_BOOLEAN)
        slot = s.pending[s.last_id]
        first = first if first is not None else slot
        assert slot is first  # the same object every call: nothing allocated per call
        assert s.feed(_reply(s.last_id)) is None
        assert fut.result() is True and s.pending_count == 0


async def test_many_calls_in_flight_each_get_their_reply() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession()
    futs = {}
    for _ in range(300):
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_INTEGER)
        futs[s.last_id] = fut
    assert s.pending_count == 300 and sorted(s.pending) == sorted(futs)
    for rid in reversed(list(futs)):
        s.feed(_reply(rid, str(rid)))
    assert all(f.result() == rid for rid, f in futs.items())
    assert s.pending_count == 0 and s.pending == {}


async def test_a_slow_call_pins_its_slot_without_growing_the_table_per_id() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession()
    slow = loop.create_future()
    s.call("slow", {}, slow, codec.KIND_STRING)
    slow_id = s.last_id
    for _ in range(5000):  # every id eventually lands on the slow call's slot
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_BOOLEAN)
        s.feed(_reply(s.last_id))
        assert fut.result() is True
    assert s.pending_count == 1 and s.is_pending(slow_id)
    assert s.ring_slots <= 8  # bounded: a colliding id overflows to the dict
    s.feed(_reply(slow_id, "done"))
    assert slow.result() == "done" and s.pending_count == 0


async def test_ids_that_are_not_ours_and_coerced_ids() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession()
    big, neg, text = loop.create_future(), loop.create_future(), loop.create_future()
    s.expect(1 << 70, big, codec.KIND_BOOLEAN)
    s.expect(-3, neg, codec.KIND_BOOLEAN)
    s.expect("abc", text, codec.KIND_BOOLEAN)
    assert s.pending_count == 3
    s.feed(_reply(1 << 70))
    s.feed(_reply(-3))
    s.feed(b'{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"false"}]}}')
    assert big.result() is True and neg.result() is True and text.result() is False
    fut = loop.create_future()
    s.call("t", {}, fut, codec.KIND_BOOLEAN)
    s.feed(b'{"jsonrpc":"2.0","id":"%d","result":{"content":[{"type":"text","text":"true"}]}}' % s.last_id)
    assert fut.result() is True and s.pending_count == 0


async def test_forget_fail_and_fail_all_free_slots() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession()
    futs = []
    for _ in range(6):
        fut = loop.create_future()
        s.call("t", {}, fut, codec.KIND_BOOLEAN)
        futs.append((s.last_id, fut))
    assert s.forget(futs[0][0]) and not s.forget(futs[0][0])
    assert s.fail(futs[1][0], RuntimeError("x")) and isinstance(futs[1][1].exception(), RuntimeError)
    assert s.feed(_reply(futs[0][0])) is None and s.stale == 1  # a forgotten call's late reply
    assert s.fail_all(KeyError("gone")) == 4 and s.pending_count == 0
    assert all(isinstance(f.exception(), KeyError) for _, f in futs[2:])


class _Owner:
    def __init__(self, session: codec.RpcSession) -> None:
        self.session = session
        self.fired: list[tuple[Any, float, Any]] = []

    def expire_request(self, rid: Any, timeout: float, what: Any) -> None:
        self.fired.append((rid, timeout, what))
        self.session.fail(rid, TimeoutError(what))


async def test_slot_deadlines_fire_once_and_skip_answered_calls() -> None:
    loop = asyncio.get_running_loop()
    wheel = codec.Deadlines(loop, resolution=0.02)
    s = codec.RpcSession()
    owner = _Owner(s)
    answered = loop.create_future()
    s.call("fast", {}, answered, codec.KIND_BOOLEAN)
    wheel.add_call(s, s.last_id, 0.05, owner, "fast")
    s.feed(_reply(s.last_id))
    late = loop.create_future()
    s.call("late", {}, late, codec.KIND_BOOLEAN)
    late_id = s.last_id
    t0 = loop.time()
    wheel.add_call(s, late_id, 0.08, owner, "late")
    assert wheel.scheduled == 1
    await asyncio.sleep(0.3)
    assert owner.fired == [(late_id, 0.08, "late")]
    assert isinstance(late.exception(), TimeoutError) and answered.result() is True
    assert loop.time() - t0 >= 0.08 and wheel.scheduled == 0
    wheel.close()


class _Sender:
    """A CallSite's transport: keeps what it is asked to send."""

    def __init__(self, sent: list[bytes]) -> None:
        self.send_now = sent.append


async def test_call_site_times_out_through_the_slot_deadline() -> None:
    loop = asyncio.get_running_loop()
    s = codec.RpcSession()
    owner = _Owner(s)
    sent: list[bytes] = []
    deadlines = codec.Deadlines(loop, resolution=0.02)
    try:
        site = codec.CallSite(s, loop, deadlines, owner, _Sender(sent))
        await site.call("t", {}, codec.KIND_BOOLEAN, 0.05)
    except TimeoutError as exc:
        assert str(exc) == "t"
    else:
        raise AssertionError("no timeout")
    assert len(sent) == 1 and s.pending_count == 0
    deadlines.close()


async def test_the_first_call_keeps_its_reply_and_deadline_when_the_ring_grows() -> None:
    """One call in flight lives in the session itself; a second call moves it to a slot
    of its own (the ring grows), with its future, kind and deadline."""
    loop = asyncio.get_running_loop()
    wheel = codec.Deadlines(loop, resolution=0.02)
    s = codec.RpcSession()
    owner = _Owner(s)
    slow = loop.create_future()
    s.call("slow", {}, slow, codec.KIND_STRING)
    slow_id = s.last_id
    wheel.add_call(s, slow_id, 0.06, owner, "slow")
    assert s.ring_slots == 1 and s.pending[slow_id] is s  # the session is the only slot
    answered = loop.create_future()
    s.call("t", {}, answered, codec.KIND_INTEGER)
    assert s.ring_slots > 1 and s.pending[slow_id] is not s
    assert s.pending[slow_id].future is slow and s.pending[slow_id].what == "slow"
    assert s.feed(_reply(s.last_id, "7")) is None and answered.result() == 7
    await asyncio.sleep(0.25)
    assert owner.fired == [(slow_id, 0.06, "slow")] and isinstance(slow.exception(), TimeoutError)
    assert s.pending_count == 0 and s.future is None  # nothing left in the session's own slot
    wheel.close()
    text = loop.create_future()
    s.call("again", {}, text, codec.KIND_STRING)
    assert s.feed(_reply(s.last_id, "ok")) is None and text.result() == "ok"
