"""Spec events end to end: the C++ emitters of the real simulator, the core's framing and
the host port's send path, the runtime's typed subscriptions (compiled or pure bindings)."""

from __future__ import annotations

import asyncio
from typing import Any

from e2e_testlib import Built, launch_ws

from mcpgen.runtime import Gateway, TokenAuth, connect_process


def url(gw: Gateway) -> str:
    return f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"


async def _exercise(lamp: Any, built: Built) -> None:
    mod = built.module
    device = lamp.device
    presses = lamp.events.button_pressed()
    power: list[Any] = []
    untyped: list[tuple[str, dict]] = []
    lamp.on_power_changed(power.append)
    device.on_event(lambda name, params: untyped.append((name, params)))

    on_after = await lamp.button.press(count=3)  # three toggles from off: on
    assert on_after is True
    event = await presses.next(timeout=5)
    assert event == mod.ButtonPressedEvent(count=3)
    assert isinstance(event, mod.ButtonPressedEvent) and event.count == 3
    assert power == [mod.PowerChangedEvent(on=True, source="button")]

    assert await lamp.light.set_power(on=False) is True
    for _ in range(50):
        if len(power) == 2:
            break
        await asyncio.sleep(0.02)
    assert power[1] == mod.PowerChangedEvent(on=False, source="assistant")
    assert untyped == [
        ("button_pressed", {"count": 3}),
        ("power_changed", {"on": True, "source": "button"}),
        ("power_changed", {"on": False, "source": "assistant"}),
    ]
    # An even number of presses leaves the power as it was: no power_changed event.
    assert await lamp.button.press(count=2) is False
    assert (await presses.next(timeout=5)).count == 2
    assert len(power) == 2
    presses.close()
    assert [e async for e in presses] == []


async def test_events_reach_typed_subscribers_over_websocket(built_lamp: Built, token: str) -> None:
    async with Gateway(port=0, auth=TokenAuth({"*": token})) as gw:
        async with launch_ws(built_lamp.exe, url(gw), token, "lamp-events"):
            lamp = built_lamp.bindings(await gw.wait_for_device(timeout=10), policy="strict")
            await _exercise(lamp, built_lamp)


async def test_events_over_stdio_and_streams_end_with_the_device(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    lamp = built_lamp.bindings(device, policy="strict")
    try:
        await _exercise(lamp, built_lamp)
        stream = lamp.events.power_changed()
    finally:
        await device.close()
    assert [e async for e in stream] == []  # the device closed: the iteration ends
