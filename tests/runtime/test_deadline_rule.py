"""The rule "no deadline when the timeout is None or below 0" and every place that applies it.

``deadlines.effective_timeout`` is the rule; a call site's default, a call's own timeout, a
Device's ``call_timeout`` (its constructor and its setter) and the Device's awaited path
(``Device.request``) each follow it, so the edge cases (None, negative, 0) cannot drift
apart again. Each test drives the compiled build or, with ``MCPGEN_PURE_PYTHON=1``, the
source: the same behaviour is expected of both.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

import pytest

from mcpgen.runtime import Device
from mcpgen.runtime.core import codec, deadlines

# (timeout given, what the rule makes of it): -1.0 is "no deadline"; 0 is a deadline (the
# next sweep expires the call), and so is -0.0 (not below 0)
CASES: list[tuple[Optional[float], float]] = [
    (None, -1.0),
    (-1, -1.0),
    (-0.001, -1.0),
    (float("-inf"), -1.0),
    (-0.0, 0.0),
    (0, 0.0),
    (0.0, 0.0),
    (2.5, 2.5),
]
IDS = [repr(given) for given, _ in CASES]


@pytest.mark.parametrize(("given", "want"), CASES, ids=IDS)
def test_the_rule(given: Optional[float], want: float) -> None:
    assert deadlines.effective_timeout(given) == want


class _Owner:
    def disconnected_error(self) -> BaseException:
        return ConnectionError("gone")

    def send_error(self, exc: BaseException) -> BaseException:
        return exc

    def send_cancelled(self, request_id: int, reason: str) -> None:
        pass

    def expire_request(self, request_id: Any, timeout: float, what: Any) -> None:
        pass


class _Sender:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send_now(self, data: bytes) -> None:
        self.sent.append(data)


def _slow_wheel(loop: asyncio.AbstractEventLoop) -> codec.Deadlines:
    """The loop's deadlines, swept once an hour: a call given 0 s stays counted while we look."""
    wheel = codec.deadlines_for(loop)
    wheel.resolution = 3600.0
    return wheel


@pytest.mark.parametrize(("given", "want"), CASES, ids=IDS)
async def test_a_sites_default_and_a_calls_own_timeout_follow_the_rule(
    given: Optional[float], want: float
) -> None:
    loop = asyncio.get_running_loop()
    wheel = codec.Deadlines(loop, resolution=3600.0)
    try:
        session = codec.RpcSession()
        site = codec.CallSite(session, loop, wheel, _Owner(), _Sender(), given)
        assert site.timeout == want
        # the site has no default: only the call's own timeout can give it a deadline
        site.timeout = -1.0
        call = site.call("t", {}, codec.KIND_BOOLEAN, given)
        fut = call.send(None)
        assert isinstance(fut, asyncio.Future) and session.pending_count == 1
        assert wheel.scheduled == (1 if want >= 0 else 0)
        call.close()
    finally:
        wheel.close()


@pytest.mark.parametrize(("given", "want"), CASES, ids=IDS)
async def test_a_devices_call_timeout_follows_the_rule(given: Optional[float], want: float) -> None:
    loop = asyncio.get_running_loop()
    wheel = _slow_wheel(loop)
    sender = _Sender()
    built = Device(sender, device_id="built", call_timeout=given)  # type: ignore[arg-type]
    assert isinstance(built.invoker, codec.CallSite) and built.invoker.timeout == want
    device = Device(sender, device_id="set", call_timeout=10.0)  # type: ignore[arg-type]
    device.call_timeout = given  # type: ignore[assignment]
    assert isinstance(device.invoker, codec.CallSite) and device.invoker.timeout == want
    # Device.request (the awaited path): its own timeout (the default none), then the default
    for timeout, default in ((given, -1.0), (None, given)):
        device.call_timeout = default  # type: ignore[assignment]
        before, sent = wheel.scheduled, len(sender.sent)
        task = asyncio.create_task(device.request("ping", timeout=timeout))
        while len(sender.sent) == sent:  # the deadline is registered before the frame is sent
            await asyncio.sleep(0)
        assert wheel.scheduled - before == (1 if want >= 0 else 0), (timeout, default)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    wheel.close()
