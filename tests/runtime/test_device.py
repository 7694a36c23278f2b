"""Device handle behaviour with in-memory transports (no sockets)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Optional

import pytest
from runtime_fakes import FakeCore

from mcpgen.runtime import Device
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout


class Loopback:
    """Hands frames straight to a FakeCore and its replies straight back."""

    def __init__(self, core: Optional[FakeCore] = None, stall: bool = False) -> None:
        self.core = core or FakeCore()
        self.stall = stall
        self.device: Any = None
        self.sent: list[dict] = []
        self.closed = False

    async def send(self, data: bytes) -> None:
        msg = json.loads(data)
        self.sent.append(msg)
        if self.stall and msg.get("method") == "tools/call":
            await asyncio.Event().wait()  # a link that never drains
        asyncio.get_running_loop().create_task(self._answer(msg))

    async def _answer(self, msg: dict) -> None:
        reply = await self.core.handle(msg)
        if reply is not None and not self.closed:
            self.device.feed(json.dumps(reply).encode())

    async def close(self) -> None:
        self.closed = True


async def make(**kw: Any) -> tuple[Device, Loopback]:
    t = Loopback(**kw)
    d = Device(t, device_id="loop", call_timeout=5)
    t.device = d
    await d.setup()
    return d, t


async def test_a_stalled_send_still_times_out() -> None:
    device, t = await make(stall=True)
    started = time.monotonic()
    with pytest.raises(DeviceTimeout):
        await device.call("self.counter.add", timeout=0.2)
    assert time.monotonic() - started < 1.5
    assert device.session.pending_count == 0
    # the task is not left cancelled: it can keep awaiting things
    await asyncio.sleep(0.01)


async def test_close_fails_pending_calls_and_runs_close_callbacks() -> None:
    device, t = await make()
    closed: list[Device] = []
    device.on_close(closed.append)
    task = asyncio.create_task(device.call("self.test.hang"))
    await asyncio.sleep(0.05)
    await device.close()
    with pytest.raises(DeviceDisconnected):
        await task
    assert closed == [device] and device.closed and t.closed
    with pytest.raises(DeviceDisconnected):
        await device.call("self.counter.add")
    with pytest.raises(DeviceDisconnected):
        await device.notify("notifications/x")
    await device.close()  # idempotent
    assert closed == [device]


async def test_ping_request_and_ids_never_reused() -> None:
    device, t = await make()
    await device.ping()
    assert await device.request("tools/list", {"cursor": "", "withUserTools": False}) is not None
    for _ in range(3):
        await device.call("self.counter.add")
    ids = [m["id"] for m in t.sent if "id" in m]
    assert ids == list(range(1, len(ids) + 1))


async def test_user_only_tools_and_tool_lookup() -> None:
    device, _ = await make(core=FakeCore(extra_tools=False))
    reboot = device.tool("self.reboot")
    assert reboot.user_only and reboot.annotations == {"destructiveHint": True, "audience": ["user"]}
    status = device.tool("self.get_device_status")
    assert status.output_schema is not None and not status.user_only
    assert device.tool("self.display.show_text").title == "Show text"
    with pytest.raises(KeyError):
        device.tool("self.nope")
    assert device.dynamic is True  # no fingerprint was expected


async def test_non_mcp_envelopes_reach_message_subscribers() -> None:
    device, _ = await make()
    got: list[dict] = []
    device.on_message(got.append)
    device.feed(b'{"session_id":"x","type":"listen","state":"start","mode":"auto"}')
    assert got == [{"session_id": "x", "type": "listen", "state": "start", "mode": "auto"}]
