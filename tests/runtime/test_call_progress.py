"""Progress reporting through ``Device.call``/``call_raw`` (``progress_token``/``on_progress``)."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Optional

import pytest
from runtime_fakes import FakeCore

from mcpgen.runtime import Device


class ProgressDevice:
    """A loopback transport whose fake device reports progress before it answers.

    For a ``tools/call`` carrying ``_meta.progressToken`` it first sends three
    ``notifications/progress`` for that token, plus reports the client must not deliver
    to this call (another token, no number, a token the client never sent).
    """

    def __init__(self) -> None:
        self.core = FakeCore()
        self.device: Any = None
        self.sent: list[dict] = []
        self.gate: Optional[asyncio.Event] = None  # when set, answer only once it is set

    async def send(self, data: bytes) -> None:
        msg = json.loads(data)
        self.sent.append(msg)
        asyncio.get_running_loop().create_task(self._answer(msg))

    def _notify(self, params: dict) -> None:
        self.device.feed(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}))

    async def _answer(self, msg: dict) -> None:
        params = msg.get("params") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        if msg.get("method") == "tools/call" and token is not None:
            self._notify({"progressToken": "someone-else", "progress": 1, "total": 9})
            for i in (1, 2, 3):
                await asyncio.sleep(0)
                extra = {"message": f"step {i}"} if i != 2 else {}
                self._notify({"progressToken": token, "progress": i, "total": 3, **extra})
            self._notify({"progressToken": token, "progress": "lots"})  # not a number: skipped
            self._notify({"progressToken": token, "progress": 3.5, "total": True, "message": 7})
            if self.gate is not None:
                await self.gate.wait()
        reply = await self.core.handle(msg)
        if reply is not None:
            self.device.feed(json.dumps(reply).encode())

    async def close(self) -> None:
        pass


async def make() -> tuple[Device, ProgressDevice]:
    t = ProgressDevice()
    d = Device(t, device_id="progress", call_timeout=5)
    t.device = d
    await d.setup()
    return d, t


EXPECTED = [(1.0, 3.0, "step 1"), (2.0, 3.0, None), (3.0, 3.0, "step 3"), (3.5, None, None)]


async def test_call_raw_sends_the_token_and_delivers_its_progress() -> None:
    device, t = await make()
    seen_by_subscribers: list[Any] = []
    device.on_notification(lambda m, p: seen_by_subscribers.append(p.get("progressToken")))
    reports: list[tuple] = []
    res = await device.call_raw(
        "self.audio_speaker.set_volume",
        {"volume": 30},
        progress_token="tok-1",
        on_progress=lambda p, total, msg: reports.append((p, total, msg)),
    )
    assert res["content"][0]["text"] == "true"
    call = t.sent[-1]
    assert call["method"] == "tools/call"
    assert call["params"] == {
        "name": "self.audio_speaker.set_volume",
        "arguments": {"volume": 30},
        "_meta": {"progressToken": "tok-1"},
    }
    assert reports == EXPECTED
    assert all(type(p) is float for p, _, _ in reports)
    # every progress notification still reaches the generic subscribers (the MCP bridge
    # routes them by token itself)
    assert seen_by_subscribers.count("tok-1") == 5 and "someone-else" in seen_by_subscribers
    # after the call, reports for its token go nowhere
    t._notify({"progressToken": "tok-1", "progress": 9})
    assert len(reports) == len(EXPECTED)


async def test_call_with_on_progress_only_picks_a_token_and_decodes_the_result() -> None:
    device, t = await make()
    reports: list[tuple] = []

    async def on_progress(p: float, total: Optional[float], msg: Optional[str]) -> None:
        await asyncio.sleep(0)
        reports.append((p, total, msg))

    value = await device.call("self.counter.add", {"amount": 2}, on_progress=on_progress)
    assert value == 2
    token = t.sent[-1]["params"]["_meta"]["progressToken"]
    assert isinstance(token, str) and token
    for _ in range(5):
        await asyncio.sleep(0)
    assert reports == EXPECTED
    # a second call gets another token
    await device.call("self.counter.add", {"amount": 1}, on_progress=on_progress)
    assert t.sent[-1]["params"]["_meta"]["progressToken"] != token


async def test_integer_token_without_callback_and_no_meta_by_default() -> None:
    device, t = await make()
    assert await device.call_raw("self.counter.add", {"amount": 1}, progress_token=41)
    assert t.sent[-1]["params"]["_meta"] == {"progressToken": 41}
    await device.call_raw("self.counter.add", {"amount": 1})
    assert "_meta" not in t.sent[-1]["params"]
    await device.call("self.counter.add", {"amount": 1})
    assert "_meta" not in t.sent[-1]["params"]


async def test_concurrent_calls_get_their_own_reports() -> None:
    device, t = await make()
    t.gate = asyncio.Event()
    a: list[tuple] = []
    b: list[tuple] = []
    ta = asyncio.ensure_future(
        device.call_raw("self.counter.add", {"amount": 1}, on_progress=lambda *r: a.append(r))
    )
    tb = asyncio.ensure_future(
        device.call_raw("self.counter.add", {"amount": 1}, on_progress=lambda *r: b.append(r))
    )
    for _ in range(10):
        await asyncio.sleep(0)
    t.gate.set()
    await asyncio.gather(ta, tb)
    assert a == EXPECTED and b == EXPECTED


async def test_bad_tokens_and_a_token_in_use_are_refused() -> None:
    device, t = await make()
    with pytest.raises(TypeError):
        await device.call_raw("self.counter.add", {"amount": 1}, progress_token=True)
    with pytest.raises(TypeError):
        await device.call_raw("self.counter.add", {"amount": 1}, progress_token=1.5)  # type: ignore[arg-type]
    t.gate = asyncio.Event()
    first = asyncio.ensure_future(
        device.call_raw("self.counter.add", {"amount": 1}, progress_token="same", on_progress=lambda *r: None)
    )
    await asyncio.sleep(0)
    with pytest.raises(ValueError):
        await device.call_raw(
            "self.counter.add", {"amount": 1}, progress_token="same", on_progress=lambda *r: None
        )
    t.gate.set()
    await first


async def test_a_failing_callback_does_not_break_the_call() -> None:
    device, _ = await make()

    def boom(*_: Any) -> None:
        raise RuntimeError("callback bug")

    assert await device.call("self.counter.add", {"amount": 3}, on_progress=boom) == 3


def test_the_bridge_finds_the_progress_keyword() -> None:
    # runtime/bridge/core.py passes progress through when call_raw takes progress_token=
    params = inspect.signature(Device.call_raw).parameters
    assert "progress_token" in params and params["progress_token"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "on_progress" in inspect.signature(Device.call).parameters


async def test_invoke_progress_is_the_bindings_entry_point() -> None:
    """What generated bindings call for a tool with `progress: true` and an on_progress:
    pre-validated arguments, the binding's return kind, a fresh token."""
    from mcpgen.runtime.core import wire

    device, t = await make()
    reports: list[tuple] = []
    value = await device.invoke_progress(
        "self.counter.add", {"amount": 3}, wire.KIND_INTEGER, lambda *r: reports.append(r)
    )
    assert value == 3
    assert t.sent[-1]["params"]["arguments"] == {"amount": 3}
    assert isinstance(t.sent[-1]["params"]["_meta"]["progressToken"], str)
    assert reports == EXPECTED
    await device.invoke_progress(
        "self.counter.add", {"amount": 1}, wire.KIND_INTEGER, lambda *r: None, progress_token=5
    )
    assert t.sent[-1]["params"]["_meta"] == {"progressToken": 5}


def test_tool_info_reports_progress_from_its_meta() -> None:
    from mcpgen.runtime.session.session_setup import ToolInfo

    def info(raw_meta: Any) -> ToolInfo:
        raw = {"name": "t", "inputSchema": {"type": "object"}}
        if raw_meta is not None:
            raw["_meta"] = raw_meta
        return ToolInfo.from_raw(raw)

    assert info({"mcpgen/progress": True}).reports_progress is True
    for meta in (None, {}, {"mcpgen/progress": "yes"}, {"mcpgen/progress": 1}, ["mcpgen/progress"]):
        assert info(meta).reports_progress is False
