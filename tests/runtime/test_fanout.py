"""Fan-out calls (runtime.session.fanout): one call on many gateway devices, awaited as one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import orjson
import pytest
from runtime_fakes import DEFAULT_SPEC, FakeCore, FakeWsDevice, text

from mcpgen import runtime
from mcpgen.codegen.targets.python import build_bindings, import_bindings
from mcpgen.runtime import Device, Fanout, FanoutResults, Gateway
from mcpgen.runtime.errors import DeviceDisconnected, DeviceTimeout, SpecMismatch, ToolError, ValidationError


@pytest.fixture(scope="module")
def sim_mod(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("fanout-bindings")
    build_bindings(DEFAULT_SPEC, out, log=lambda s: None, compile=runtime.COMPILED)
    return import_bindings(out / "python", "xiaozhi_sim_tools")


class MoodyCore(FakeCore):
    """set_volume answers per ``mood``: "ok", "fail" (isError), or "hang" (until released)."""

    def __init__(self, mood: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.mood = mood
        self.release = asyncio.Event()

    async def call(self, name: str, a: dict[str, Any]) -> Optional[dict[str, Any]]:
        if name == "self.audio_speaker.set_volume" and self.mood == "fail":
            return text("speaker unplugged", error=True)
        if name == "self.audio_speaker.set_volume" and self.mood == "hang":
            await self.release.wait()
        return await super().call(name, a)


async def _connect(
    gateway: Gateway, ws_url: str, fake_devices: list, moods: dict[str, str], **core_kw: Any
) -> dict[str, tuple[FakeWsDevice, Device]]:
    out: dict[str, tuple[FakeWsDevice, Device]] = {}
    for name, mood in moods.items():
        fake = FakeWsDevice(ws_url, name, core=MoodyCore(mood, **core_kw))
        fake_devices.append(fake)
        await fake.start()
        out[name] = (fake, await gateway.wait_for_device(name, timeout=5))
    return out


def _calls(fake: FakeWsDevice) -> list[dict]:
    return [m for m in fake.core.received if m.get("method") == "tools/call"]


def _cancelled(fake: FakeWsDevice) -> list[Any]:
    return [p for m, p in fake.core.notifications if m == "notifications/cancelled"]


async def _until(cond: Any, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if cond():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not met in time")


async def test_typed_fanout_gives_each_device_its_result_or_typed_error(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    devs = await _connect(gateway, ws_url, fake_devices, {"a": "ok", "b": "fail", "c": "hang", "d": "ok"})
    handles = [d for _, d in devs.values()]
    sims = [sim_mod.XiaozhiSim(d) for d in handles]
    group = sim_mod.XiaozhiSim.fanout(sims, timeout=0.5)
    assert len(group) == 4
    res = await group.audio_speaker.set_volume(volume=33)
    assert isinstance(res, FanoutResults) and len(res) == 4 and list(res) == sims
    a, b, c, d = sims
    assert res[a] is True and res[d] is True
    assert res.ok == {a: True, d: True} and not res.all_ok
    assert isinstance(res.error(b), ToolError) and "speaker unplugged" in str(res.error(b))
    with pytest.raises(ToolError):
        res[b]
    err = res.error(c)
    assert isinstance(err, DeviceTimeout) and "within 0.5s" in str(err)
    assert set(res.errors) == {b, c}
    assert [k for k, v in res.items() if v is True] == [a, d]
    # Arguments were encoded once and sent to each device with its own id and session.
    for name, (fake, dev) in devs.items():
        (sent,) = _calls(fake)
        assert sent["params"] == {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 33}}
        assert dev.session.pending_count == 0, name
    # The slow device was told to stop, like a single call that times out.
    fake_c = devs["c"][0]
    await _until(lambda: bool(_cancelled(fake_c)))
    assert _cancelled(fake_c)[0] == {"requestId": _calls(fake_c)[0]["id"], "reason": "timeout"}
    assert fake_c.core.state["volume"] == 50
    fake_c.core.release.set()  # its late reply is dropped as stale; the handle keeps working
    await _until(lambda: devs["c"][1].session.stale == 1)
    assert await sims[2].audio_speaker.set_volume(volume=40) is True
    # Validation happens once, before anything is sent.
    with pytest.raises(ValidationError):
        await group.audio_speaker.set_volume(volume=101)
    assert sum(len(_calls(f)) for f, _ in devs.values()) == 5


async def test_fanout_returns_other_kinds_and_reuses_the_group(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    devs = await _connect(gateway, ws_url, fake_devices, {"x": "ok", "y": "ok"})
    group = sim_mod.XiaozhiSim.fanout([d for _, d in devs.values()])
    first = await group.counter.add(amount=2)
    second = await group.counter.add(amount=3)
    assert list(first.ok.values()) == [2, 2] and list(second.ok.values()) == [5, 5]
    temps = await group.sensor.read_temperature()
    assert all(type(v) is float and v == 21.5 for v in temps.ok.values())


async def test_cancelling_a_fanout_cancels_every_pending_device_call(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    devs = await _connect(gateway, ws_url, fake_devices, {"p": "hang", "q": "hang", "r": "ok"})
    group = sim_mod.XiaozhiSim.fanout([d for _, d in devs.values()], timeout=30)
    task = asyncio.ensure_future(group.audio_speaker.set_volume(volume=7))
    await _until(lambda: all(_calls(f) for f, _ in devs.values()))
    await asyncio.sleep(0.05)  # r's reply is in
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for name in ("p", "q"):
        fake, dev = devs[name]
        await _until(lambda fake=fake: bool(_cancelled(fake)))
        assert _cancelled(fake)[0]["reason"] == "cancelled by the client"
        assert dev.session.pending_count == 0
    assert _cancelled(devs["r"][0]) == []  # it had answered: nothing to cancel


async def test_a_device_that_drops_or_is_closed_fails_alone(
    gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    devs = await _connect(gateway, ws_url, fake_devices, {"m": "ok", "n": "hang", "o": "ok"})
    await devs["o"][1].close()
    fan = Fanout({"m": devs["m"][1], "n": devs["n"][1], "o": devs["o"][1]}, timeout=10)
    task = asyncio.ensure_future(fan.call("self.audio_speaker.set_volume", {"volume": 12}))
    await _until(lambda: bool(_calls(devs["n"][0])))
    devs["n"][0].kill()
    res = await asyncio.wait_for(task, 5)
    assert res["m"] is True
    assert isinstance(res.error("n"), DeviceDisconnected)
    assert isinstance(res.error("o"), DeviceDisconnected) and _calls(devs["o"][0]) == []


async def test_strict_policy_skips_devices_of_another_spec(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    good = await _connect(gateway, ws_url, fake_devices, {"good": "ok"})
    other = await _connect(gateway, ws_url, fake_devices, {"other": "ok"}, fingerprint="ffffffffffffffff")
    handles = [good["good"][1], other["other"][1]]
    res = await sim_mod.XiaozhiSim.fanout(handles, policy="strict").audio_speaker.set_volume(volume=9)
    assert res[handles[0]] is True and isinstance(res.error(handles[1]), SpecMismatch)
    assert _calls(other["other"][0]) == []
    res = await sim_mod.XiaozhiSim.fanout(handles).audio_speaker.set_volume(volume=9)  # warn: called
    assert res.all_ok
    with pytest.raises(ValueError):
        Fanout(handles, policy="sometimes")
    with pytest.raises(TypeError):
        Fanout([object()])


async def test_one_fanout_awaited_twice_at_once_keeps_the_runs_apart(
    sim_mod: ModuleType, gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    # A Fanout reuses one slot per device from run to run; a second run while the first
    # is in flight must get slots of its own, and each run its own replies.
    devs = await _connect(gateway, ws_url, fake_devices, {"s": "ok", "t": "ok"})
    group = sim_mod.XiaozhiSim.fanout([d for _, d in devs.values()])
    both = asyncio.gather(group.counter.add(amount=2), group.counter.add(amount=3))
    first, second = await asyncio.wait_for(both, 10)  # shared slots would leave one run hanging
    assert list(first.ok.values()) == [2, 2] and list(second.ok.values()) == [5, 5]
    third = await group.counter.add(amount=1)  # the reused slots still work afterwards
    assert list(third.ok.values()) == [6, 6]
    assert all(dev.session.pending_count == 0 for _, dev in devs.values())


async def test_a_late_reply_to_a_timed_out_run_does_not_reach_the_next(
    gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    # The second run reuses the device's slot: the first run's late reply, arriving while
    # the second waits, must be dropped as stale, not settle the second run.
    devs = await _connect(gateway, ws_url, fake_devices, {"u": "hang", "v": "ok"})
    fan = Fanout({k: d for k, (_, d) in devs.items()}, timeout=0.3)
    res = await fan.call("self.audio_speaker.set_volume", {"volume": 11})
    assert isinstance(res.error("u"), DeviceTimeout) and res["v"] is True
    fake_u, dev_u = devs["u"]
    task = asyncio.ensure_future(fan.call("self.audio_speaker.set_volume", {"volume": 12}, timeout=10))
    await _until(lambda: len(_calls(fake_u)) == 2)
    fake_u.core.release.set()  # both calls are answered now, the timed-out one first
    res = await task
    assert res.all_ok and res["u"] is True
    assert dev_u.session.stale == 1 and dev_u.session.pending_count == 0
    assert fake_u.core.state["volume"] == 12


async def test_devices_with_different_call_timeouts_expire_each_at_its_own(
    gateway: Gateway, ws_url: str, fake_devices: list
) -> None:
    devs = await _connect(gateway, ws_url, fake_devices, {"w": "hang", "x": "hang", "y": "ok"})
    devs["w"][1].call_timeout = 0.2
    devs["x"][1].call_timeout = 0.5
    fan = Fanout({k: d for k, (_, d) in devs.items()})  # no timeout: each device's own
    res = await fan.call("self.audio_speaker.set_volume", {"volume": 13})
    assert "within 0.2s" in str(res.error("w")) and "within 0.5s" in str(res.error("x"))
    assert res["y"] is True
    for name in ("w", "x"):
        await _until(lambda name=name: bool(_cancelled(devs[name][0])))
        assert _cancelled(devs[name][0])[0]["reason"] == "timeout"


class _AwaitingTransport:
    """A transport without send_now (like serial links): the fan-out calls it through a task."""

    def __init__(self, core: FakeCore, slow: bool = False) -> None:
        self.core = core
        self.slow = slow
        self.device: Optional[Device] = None
        self.tasks: set[asyncio.Task] = set()

    async def send(self, data: bytes) -> None:
        msg = orjson.loads(data)
        if self.slow and msg.get("method") == "tools/call":
            return  # never answered
        t = asyncio.get_running_loop().create_task(self._answer(msg))
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    async def _answer(self, msg: dict) -> None:
        reply = await self.core.handle(msg)
        if reply is not None and self.device is not None:
            self.device.feed(orjson.dumps(reply))

    async def close(self) -> None:
        pass


async def test_devices_whose_transport_awaits_sends() -> None:
    fast, slow = _AwaitingTransport(FakeCore()), _AwaitingTransport(FakeCore(), slow=True)
    devices = []
    for t in (fast, slow):
        dev = Device(t, device_id=f"serial-{len(devices)}", call_timeout=5)
        t.device = dev
        await dev.setup()
        devices.append(dev)
    res = await Fanout(devices, timeout=0.3).call("self.audio_speaker.set_volume", {"volume": 5})
    assert res[devices[0]] is True and isinstance(res.error(devices[1]), DeviceTimeout)
    task = asyncio.ensure_future(Fanout(devices).call("self.audio_speaker.set_volume", {"volume": 6}))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert devices[1].session.pending_count == 0


async def test_empty_fanout() -> None:
    res = await Fanout([]).call("anything")
    assert len(res) == 0 and res.all_ok


def test_stubs_type_fanout_results(sim_mod: ModuleType) -> None:
    stub = Path(sim_mod.__file__).with_name("_bindings.pyi").read_text()
    assert "def fanout(\n        cls,\n        devices:" in stub
    assert "class AudioSpeakerToolsFanout:" in stub  # every namespace, the first one too
    assert "async def set_volume(self, *, volume: int) -> FanoutResults[bool]:" in stub


@pytest.mark.parametrize("session_id", [None, "sid-1"])
def test_call_encoded_frames_like_tools_call(session_id: Optional[str]) -> None:
    from mcpgen.runtime.core import codec

    args = {"r": 1, "g": 2, "b": 3, "name": "ü"}
    plain, shared = codec.RpcSession(session_id), codec.RpcSession(session_id)
    plain.tools_call("warm-up", {})  # both at id 2 next
    shared.tools_call("warm-up", {})
    tail = codec.tools_call_tail("self.light.set_rgb", args)
    slot = object()
    assert shared.call_encoded(tail, slot, codec.KIND_BOOLEAN) == plain.tools_call("self.light.set_rgb", args)
    assert shared.last_id == 2 and shared.is_pending(2) and shared.pending[2].future is slot
