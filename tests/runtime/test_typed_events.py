"""Typed events on the runtime side, against frames fed straight into a Device: what the
bindings deliver, what they drop (and log), dynamic mode, stream buffering and closing."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from runtime_fakes import LAMP_SPEC

from mcpgen import runtime
from mcpgen.codegen.targets.python import build_bindings, import_bindings
from mcpgen.runtime.session.device import Device
from mcpgen.runtime.session.events import EventStream, event_name


class _NullTransport:
    async def send(self, data: bytes) -> None:
        pass

    async def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def lamp_mod(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out: Path = tmp_path_factory.mktemp("events_lamp")
    pydir = build_bindings(LAMP_SPEC, out, log=lambda _m: None, compile=runtime.COMPILED)
    return import_bindings(pydir, "desk_lamp_tools")


def _event(name: str, params: Any, session: str | None = "s") -> bytes:
    msg = {"jsonrpc": "2.0", "method": f"notifications/events/{name}", "params": params}
    if session is not None:
        msg = {"session_id": session, "type": "mcp", "payload": msg}
    return json.dumps(msg).encode()


async def test_valid_events_reach_streams_and_callbacks(lamp_mod: ModuleType) -> None:
    device = Device(_NullTransport(), device_id="lamp")
    lamp = lamp_mod.DeskLamp(device, policy="off")
    got: list[Any] = []
    unsubscribe = lamp.on_button_pressed(got.append)
    stream = lamp.events.button_pressed()
    device.feed(_event("button_pressed", {"count": 2}))
    device.feed(_event("power_changed", {"on": True, "source": "timer"}, session=None))
    assert got == [lamp_mod.ButtonPressedEvent(count=2)]
    assert await stream.next(timeout=1) == lamp_mod.ButtonPressedEvent(2)
    unsubscribe()
    device.feed(_event("button_pressed", {"count": 1}))
    assert len(got) == 1 and (await stream.next(timeout=1)).count == 1


async def test_async_callbacks_run(lamp_mod: ModuleType) -> None:
    device = Device(_NullTransport(), device_id="lamp")
    lamp = lamp_mod.DeskLamp(device, policy="off")
    seen = asyncio.Event()

    async def cb(event: Any) -> None:
        assert event.source == "button"
        seen.set()

    lamp.on_power_changed(cb)
    device.feed(_event("power_changed", {"on": False, "source": "button"}))
    await asyncio.wait_for(seen.wait(), 1)


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"count": 0}, "count: must be >= 1"),
        ({"count": "2"}, "count: must be an integer"),
        ({}, "count: missing from event button_pressed"),
        ([1], "count: missing"),  # a params that is no object arrives as {}
    ],
)
async def test_events_that_break_the_spec_are_logged_and_dropped(
    lamp_mod: ModuleType, caplog: pytest.LogCaptureFixture, params: Any, why: str
) -> None:
    device = Device(_NullTransport(), device_id="lamp-7")
    lamp = lamp_mod.DeskLamp(device, policy="off")
    got: list[Any] = []
    lamp.on_button_pressed(got.append)
    stream = lamp.events.button_pressed()
    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.session.events"):
        device.feed(_event("button_pressed", params))
    assert got == [] and lamp.events._hub.rejected == 1
    [record] = [r for r in caplog.records if r.name == "mcpgen.runtime.session.events"]
    assert "lamp-7" in record.getMessage() and "button_pressed" in record.getMessage()
    assert why in record.getMessage()
    device.feed(_event("button_pressed", {"count": 3}))  # the stream carries on
    assert (await stream.next(timeout=1)).count == 3


async def test_dynamic_mode_passes_every_event_untyped(lamp_mod: ModuleType) -> None:
    device = Device(_NullTransport(), device_id="stock")
    untyped: list[tuple[str, Any]] = []
    device.on_event(lambda name, params: untyped.append((name, params)))
    lamp = lamp_mod.DeskLamp(device, policy="off")
    typed: list[Any] = []
    lamp.on_button_pressed(typed.append)
    device.feed(_event("door_opened", {"angle": 90}))  # not in the spec
    device.feed(_event("button_pressed", {"count": 99}))  # breaks the spec
    device.feed(json.dumps({"jsonrpc": "2.0", "method": "notifications/state_changed"}).encode())
    assert untyped == [("door_opened", {"angle": 90}), ("button_pressed", {"count": 99})]
    assert typed == []


async def test_streams_buffer_end_on_close_and_drop_the_oldest(lamp_mod: ModuleType) -> None:
    device = Device(_NullTransport(), device_id="lamp")
    lamp = lamp_mod.DeskLamp(device, policy="off")
    small: EventStream[Any] = lamp.events.button_pressed(buffer=2)
    for n in (1, 2, 3):
        device.feed(_event("button_pressed", {"count": n}))
    assert small.dropped == 1
    waiting = asyncio.ensure_future(small.next(timeout=5))
    assert (await waiting).count == 2
    reader = asyncio.ensure_future(_collect(small))
    await asyncio.sleep(0)
    await device.close()
    assert [e.count for e in await asyncio.wait_for(reader, 1)] == [3]
    late = lamp.events.button_pressed()
    assert [e async for e in late] == []  # subscribing to a closed device ends at once


async def _collect(stream: EventStream[Any]) -> list[Any]:
    return [e async for e in stream]


def test_event_name() -> None:
    assert event_name("notifications/events/a_b") == "a_b"
    assert event_name("notifications/events/") is None
    assert event_name("notifications/progress") is None


async def test_a_parameter_of_a_newer_version_is_ignored(lamp_mod: ModuleType) -> None:
    """A device on a newer spec may add an event parameter (a compatible change): the
    bindings decode the parameters they know."""
    device = Device(_NullTransport(), device_id="lamp-8")
    lamp = lamp_mod.DeskLamp(device, policy="off")
    got: list[Any] = []
    lamp.on_button_pressed(got.append)
    device.feed(_event("button_pressed", {"count": 2, "duration_ms": 40}))
    assert got == [lamp_mod.ButtonPressedEvent(count=2)] and lamp.events._hub.rejected == 0
