"""CallSite.call's awaitable (PendingCall): what an ``async def`` call did, with one object.

Each test drives the compiled build or, with ``MCPGEN_PURE_PYTHON=1``, the source: the
same behaviour is expected of both.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

from mcpgen.runtime import Device
from mcpgen.runtime.core import codec
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout


def _reply(rid: int, text: str = "true") -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}' % (
        rid,
        text.encode(),
    )


class _Owner:
    """The Device side of a CallSite (deadlines.CallOwner), recording what it is told."""

    def __init__(self, session: codec.RpcSession) -> None:
        self.session = session
        self.cancelled: list[tuple[int, str]] = []
        self.expired: list[tuple[Any, float, Any]] = []

    def disconnected_error(self) -> BaseException:
        return DeviceDisconnected("gone")

    def send_error(self, exc: BaseException) -> BaseException:
        return DeviceDisconnected(f"send failed: {exc}")

    def send_cancelled(self, request_id: int, reason: str) -> None:
        self.cancelled.append((request_id, reason))

    def expire_request(self, request_id: Any, timeout: float, what: Any) -> None:
        self.expired.append((request_id, timeout, what))
        self.session.fail(request_id, TimeoutError(what))


class _Sender:
    def __init__(self, fail: Optional[Exception] = None) -> None:
        self.sent: list[bytes] = []
        self.fail = fail

    def send_now(self, data: bytes) -> None:
        if self.fail is not None:
            raise self.fail
        self.sent.append(data)


class _Rig:
    def __init__(self, fail: Optional[Exception] = None, timeout: Optional[float] = None) -> None:
        self.loop = asyncio.get_running_loop()
        self.session = codec.RpcSession()
        self.owner = _Owner(self.session)
        self.sender = _Sender(fail)
        self.deadlines = codec.Deadlines(self.loop, resolution=0.01)
        self.site = codec.CallSite(self.session, self.loop, self.deadlines, self.owner, self.sender, timeout)

    def last_request(self) -> dict:
        return json.loads(self.sender.sent[-1])  # type: ignore[no-any-return]


@pytest.fixture
async def rig() -> Any:
    r = _Rig()
    yield r
    r.deadlines.close()


async def test_nothing_is_sent_before_the_call_is_awaited(rig: _Rig) -> None:
    call = rig.site.call("t", {"a": 1}, codec.KIND_INTEGER)
    await asyncio.sleep(0)
    assert rig.sender.sent == [] and rig.session.pending_count == 0
    assert asyncio.iscoroutine(call) and "'t'" in repr(call)
    task = asyncio.ensure_future(call)
    await asyncio.sleep(0)
    request = rig.last_request()
    assert request["method"] == "tools/call" and request["params"] == {"name": "t", "arguments": {"a": 1}}
    rig.session.feed(_reply(request["id"], "42"))
    assert await task == 42 and rig.session.pending_count == 0


async def test_create_task_gather_and_wait_for_take_it(rig: _Rig) -> None:
    tasks = [asyncio.create_task(rig.site.call("t", {}, codec.KIND_INTEGER)) for _ in range(3)]
    waited = asyncio.ensure_future(asyncio.wait_for(rig.site.call("t", {}, codec.KIND_INTEGER), 5))
    gathered = asyncio.ensure_future(asyncio.gather(*tasks))
    await asyncio.sleep(0.01)
    ids = [json.loads(d)["id"] for d in rig.sender.sent]
    assert len(ids) == 4
    for rid in ids:
        rig.session.feed(_reply(rid, str(rid)))
    assert await gathered == ids[:3]  # the tasks ran (and sent) in the order they were made
    assert await waited == ids[3]


async def test_cancelling_the_awaiting_task_forgets_the_call_and_tells_the_device(rig: _Rig) -> None:
    task = asyncio.create_task(rig.site.call("hang", {}, codec.KIND_BOOLEAN))
    await asyncio.sleep(0)
    rid = rig.last_request()["id"]
    assert rig.session.is_pending(rid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not rig.session.is_pending(rid)
    assert rig.owner.cancelled == [(rid, "cancelled by the client")]
    rig.session.feed(_reply(rid))  # a late reply is dropped quietly


async def test_a_cancel_after_the_reply_arrived_is_thrown_in_and_tells_nobody(rig: _Rig) -> None:
    task = asyncio.create_task(rig.site.call("t", {}, codec.KIND_BOOLEAN))
    await asyncio.sleep(0)
    rid = rig.last_request()["id"]
    rig.session.feed(_reply(rid))  # the future is done; the task has not resumed yet
    task.cancel()  # so the task throws CancelledError into the call
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rig.session.pending_count == 0 and rig.owner.cancelled == []


async def test_a_closed_site_fails_at_the_await_and_sends_nothing(rig: _Rig) -> None:
    rig.site.closed = True
    call = rig.site.call("t", {}, codec.KIND_BOOLEAN)
    with pytest.raises(DeviceDisconnected, match="gone"):
        await call
    assert rig.sender.sent == [] and rig.session.pending_count == 0


async def test_a_failed_send_forgets_the_call_and_raises_the_owners_error() -> None:
    rig = _Rig(fail=OSError("broken pipe"))
    with pytest.raises(DeviceDisconnected, match="send failed: broken pipe") as info:
        await rig.site.call("t", {}, codec.KIND_BOOLEAN)
    assert isinstance(info.value.__cause__, OSError)
    assert rig.session.pending_count == 0
    rig.deadlines.close()


async def test_a_call_is_awaited_once(rig: _Rig) -> None:
    call = rig.site.call("t", {}, codec.KIND_BOOLEAN)
    task = asyncio.ensure_future(call)
    await asyncio.sleep(0)
    rig.session.feed(_reply(rig.last_request()["id"]))
    assert await task is True
    with pytest.raises(RuntimeError, match="already awaited"):
        await call


async def test_throw_and_close_behave_as_a_coroutines(rig: _Rig) -> None:
    call = rig.site.call("t", {}, codec.KIND_BOOLEAN)
    fut = call.send(None)  # stepped by hand, as a Task would: the future it waits on
    assert isinstance(fut, asyncio.Future) and rig.session.pending_count == 1
    assert call.send(None) is fut  # not answered yet: the same future again
    with pytest.raises(ValueError, match="boom"):
        call.throw(ValueError("boom"))
    # not a cancellation: the reply is still expected (as when a coroutine's await raises)
    assert rig.session.pending_count == 1 and rig.owner.cancelled == []
    unawaited = rig.site.call("t", {}, codec.KIND_BOOLEAN)
    unawaited.close()
    with pytest.raises(RuntimeError, match="already awaited"):
        unawaited.send(None)
    assert len(rig.sender.sent) == 1


async def test_the_sites_timeout_is_the_default_and_a_calls_own_wins() -> None:
    rig = _Rig(timeout=0.03)
    with pytest.raises(TimeoutError):
        await rig.site.call("slow", {}, codec.KIND_BOOLEAN)
    assert [e[1:] for e in rig.owner.expired] == [(0.03, "slow")]
    task = asyncio.create_task(rig.site.call("slower", {}, codec.KIND_BOOLEAN, 0.5))
    await asyncio.sleep(0.1)
    assert not task.done()  # its own 0.5 s, not the site's 0.03 s
    rig.session.feed(_reply(rig.last_request()["id"]))
    assert await task is True
    rig.site.timeout = -1.0  # no deadline
    task = asyncio.create_task(rig.site.call("forever", {}, codec.KIND_BOOLEAN))
    await asyncio.sleep(0.1)
    assert not task.done() and rig.deadlines.scheduled == 0
    task.cancel()
    rig.deadlines.close()


async def test_the_device_keeps_its_sites_copies_current() -> None:
    sender = _Sender()
    device = Device(sender, device_id="d", call_timeout=0.05)  # type: ignore[arg-type]
    with pytest.raises(DeviceTimeout):
        await device.invoke("t", {}, codec.KIND_BOOLEAN)
    device.call_timeout = 5.0
    assert device.call_timeout == 5.0
    # what the bindings call: the site itself (one object per device, not a bound method)
    assert isinstance(device.invoker, codec.CallSite)
    task = asyncio.create_task(device.invoker("t", {}, codec.KIND_BOOLEAN))
    await asyncio.sleep(0.15)
    assert not task.done()  # 5 s now, not 0.05
    device.connection_lost("test")
    with pytest.raises(DeviceDisconnected):
        await task
    with pytest.raises(DeviceDisconnected, match="disconnected"):
        await device.invoke("t", {}, codec.KIND_BOOLEAN)
    # the timed-out call (and its cancellation), the one cut off; nothing after the close
    methods = [json.loads(d)["method"] for d in sender.sent]
    assert methods == ["tools/call", "notifications/cancelled", "tools/call"]
