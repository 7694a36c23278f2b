"""Handles of devices that report alike share one copy (runtime/session/shared.py, issue 32);
devices that report differently each keep what they reported."""

from __future__ import annotations

import asyncio
from typing import Any

from runtime_fakes import EXTRA_TOOLS, FakeCore, FakeWsDevice
from test_gateway_transport import url_of

from mcpgen.runtime import Gateway
from mcpgen.runtime.session import shared


async def _ready(gw: Gateway, fakes: list[FakeWsDevice], device_id: str, core: FakeCore) -> Any:
    fake = FakeWsDevice(url_of(gw), device_id, token=None, core=core)
    fakes.append(fake)
    await fake.start()
    return await gw.wait_for_device(device_id, timeout=5)


async def test_devices_that_report_alike_share_their_tables(fake_devices: list[FakeWsDevice]) -> None:
    async with Gateway(port=0, ping_interval=None) as gw:
        a = await _ready(gw, fake_devices, "a", FakeCore())
        b = await _ready(gw, fake_devices, "b", FakeCore())
        assert a.initialize_result is b.initialize_result
        assert a.hello is b.hello
        assert a._tool_map is b._tool_map and a._kinds is b._kinds
        assert await a.call("self.counter.add", {"amount": 2}) == 2
        assert await b.call("self.counter.add", {"amount": 5}) == 5  # each its own device
        assert a._validators is b._validators and "self.counter.add" in a._validators


async def test_devices_with_other_fingerprints_or_tools_keep_their_own(
    fake_devices: list[FakeWsDevice],
) -> None:
    async with Gateway(port=0, ping_interval=None) as gw:
        a = await _ready(gw, fake_devices, "a", FakeCore())
        b = await _ready(gw, fake_devices, "b", FakeCore(fingerprint="f" * 16, extra_tools=False))
        assert a.fingerprint != b.fingerprint == "f" * 16
        assert a.initialize_result is not b.initialize_result
        assert a._tool_map is not b._tool_map
        extra = {t["name"] for t in EXTRA_TOOLS}
        assert extra <= {t.name for t in a.tools}
        assert not extra & {t.name for t in b.tools}
        assert extra.isdisjoint(b._kinds) and extra <= set(a._kinds)
        assert a._validators is not b._validators


async def test_a_device_whose_fingerprint_changes_on_reconnect_gets_its_own_tables(
    fake_devices: list[FakeWsDevice],
) -> None:
    async with Gateway(port=0, ping_interval=None) as gw:
        other = await _ready(gw, fake_devices, "other", FakeCore())
        first = await _ready(gw, fake_devices, "d", FakeCore())
        assert first._tool_map is other._tool_map
        await fake_devices[-1].close()  # the device goes, then comes back with another firmware
        for _ in range(200):
            if first.closed and "d" not in gw.connected:
                break
            await asyncio.sleep(0.01)
        assert first.closed
        second = await _ready(gw, fake_devices, "d", FakeCore(fingerprint="e" * 16, extra_tools=False))
        assert second is not first and second.fingerprint == "e" * 16
        assert second._tool_map is not other._tool_map
        assert "self.test.big" not in second._tool_map and "self.test.big" in other._tool_map
        assert other.fingerprint != second.fingerprint  # the first device's tables are untouched


def test_shared_json_gives_equal_values_one_object_and_stops_at_its_bound(monkeypatch: Any) -> None:
    monkeypatch.setattr(shared, "_JSON", {})
    one = shared.shared_json({"a": 1, "b": [1, 2]})
    assert shared.shared_json({"b": [1, 2], "a": 1}) is one  # key order does not matter
    assert shared.shared_json({"a": 1.0, "b": [1, 2]}) is not one  # 1.0 is not 1 in JSON text
    assert shared.shared_json({"a": True, "b": [1, 2]}) is not one
    monkeypatch.setattr(shared, "MAX_SHARED", 3)  # the three above fill it
    new = {"c": 3}
    assert shared.shared_json(new) is new
    again = {"c": 3}
    assert shared.shared_json(again) is again  # over the bound: used unshared, not kept
    assert len(shared._JSON) == 3
    assert shared.shared_json({"b": [1, 2], "a": 1}) is one  # what it holds is still shared
