"""The console's state without HTTP: a minimal DeviceLike (no on_close, no server_info), the
live feed, spec status, percentiles and bounded metric labels."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from mcpgen.runtime import DeviceTimeout
from mcpgen.runtime.console import Console, FleetMetrics
from mcpgen.runtime.console.metrics import MAX_LABEL_LENGTH, MAX_LABEL_VALUES
from mcpgen.runtime.console.registry import compatibility, percentile
from mcpgen.runtime.console.server import tcp_listener


@dataclass(frozen=True)
class Tool:
    name: str
    input_schema: dict[str, Any]
    description: str = ""
    user_only: bool = False
    raw: dict[str, Any] = field(default_factory=dict)


class Bare:
    """Only what ``runtime.bridge.DeviceLike`` promises: no ``on_close``, no ``server_info``."""

    def __init__(self, device_id: str) -> None:
        self.device_id = device_id
        self.tools = [Tool("self.wait", {"type": "object", "properties": {"s": {"type": "number"}}})]
        self.closed = False
        self.sent: list[dict[str, Any]] = []
        self.callbacks: list[Callable[[str, dict[str, Any]], Any]] = []

    async def call_raw(
        self, name: str, arguments: dict[str, Any] | None, *, timeout: float | None = None
    ) -> Any:
        self.sent.append(dict(arguments or {}))
        if (arguments or {}).get("s", 0) > 1:
            raise DeviceTimeout("no answer")
        return {"content": [{"type": "text", "text": "done"}], "isError": False}

    def on_notification(self, callback: Callable[[str, dict[str, Any]], Any]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: None


async def test_calls_events_and_a_closed_handle_without_on_close() -> None:
    console = Console()
    device = Bare("bare-1")
    async with console.subscribe() as feed:
        console.add_device(device, "custom")
        assert (await feed.get()) == {"type": "device", "device": console.entries["bare-1"].summary()}
        ok = await console.call("bare-1", "self.wait", {"s": 0.5})
        slow = await console.call("bare-1", "self.wait", {"s": 5})
        bad = await console.call("bare-1", "self.wait", {"s": "x"})
        assert (ok.outcome, slow.outcome, bad.outcome) == ("ok", "timeout", "invalid")
        assert slow.error == {"type": "DeviceTimeout", "message": "no answer"}
        assert bad.error is not None and bad.error["message"] == "s: must be a number, got string"
        assert device.sent == [{"s": 0.5}, {"s": 5}], "the invalid call was not sent"
        calls = [await feed.get() for _ in range(3)]
        assert [c["call"]["outcome"] for c in calls] == ["ok", "timeout", "invalid"]
        row = console.entries["bare-1"].summary()
        assert (row["calls"], row["errors"], row["name"], row["transport"]) == (2, 1, "", "custom")

        for callback in device.callbacks:
            callback("notifications/events/door_opened", {"door": "front"})
        event = await feed.get()
        assert event["type"] == "event" and event["event"]["arguments"] == {"door": "front"}
        assert console.state()["feed"][0]["event"] == "door_opened"

        device.closed = True  # no on_close: watch() notices it
        watcher = asyncio.ensure_future(console.watch(0.01))
        gone = await asyncio.wait_for(feed.get(), 5)
        watcher.cancel()
        assert gone["type"] == "device" and gone["device"]["connected"] is False

        again = Bare("bare-1")  # the same id comes back: a new session, statistics kept
        console.add_device(again, "custom")
        row = (await feed.get())["device"]
        assert (row["connected"], row["sessions"], row["calls"]) == (True, 2, 2)
        await console.close()
        assert await feed.get() is None  # the stream ends with the console


def test_spec_status_from_the_fingerprints_or_the_handle() -> None:
    @dataclass
    class Handle:
        fingerprint: str | None = None
        expected_fingerprint: str | None = None
        compatibility: Any = None

    assert compatibility(Handle("abc", "abc"))["status"] == "match"
    assert compatibility(Handle("abd", "abc"))["status"] == "mismatch"
    assert compatibility(Handle("abc", None))["status"] == "unchecked"

    @dataclass
    class Verdict:
        status: str = "compatible"
        label: str = "compatible (v1)"

    assert compatibility(Handle("abd", "abc", Verdict())) == {
        "status": "compatible",
        "label": "compatible (v1)",
        "detail": "",
    }
    assert compatibility(Handle("abd", "abc", "incompatible"))["status"] == "incompatible"


def test_percentiles_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.99), percentile(values, 1.0)) == (50.0, 99.0, 100.0)
    assert percentile([], 0.5) is None and percentile([7.0], 0.99) == 7.0


def test_label_values_from_devices_are_bounded() -> None:
    metrics = FleetMetrics(process_metrics=False)
    for i in range(MAX_LABEL_VALUES + 44):
        metrics.record_call(f"tool.{i}", "ok", 0.001)
    tools = {
        s.labels["tool"]: s.value
        for family in text_string_to_metric_families(metrics.render()[0].decode())
        for s in family.samples
        if s.name == "mcpgen_calls_total"
    }
    assert len(tools) == MAX_LABEL_VALUES + 1 and tools["other"] == 44


def test_label_values_from_devices_are_clipped_in_length() -> None:
    """Regression (issue 40): the count of label values was capped but not their length, so
    256 event names of 60 kB made a 30.7 MB scrape. Each value is now clipped to a prefix
    and a digest of the whole, and names sharing a long prefix stay distinct series."""
    metrics = FleetMetrics(process_metrics=False)
    device = Bare("noisy-1")
    metrics.track(device, "custom")
    prefix = "x" * 60_000
    for i in range(MAX_LABEL_VALUES):
        for callback in device.callbacks:
            callback(f"notifications/events/{prefix}{i}", {})
    metrics.record_call("t" * 60_000, "ok", 0.001)
    text = metrics.render()[0].decode()
    events = {
        s.labels["event"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "mcpgen_events_total"
    }
    assert len(events) == MAX_LABEL_VALUES and set(events.values()) == {1.0}
    assert max(len(name) for name in events) == MAX_LABEL_LENGTH
    assert all(name.startswith("x" * 100) for name in events)
    assert len(text) < 200_000, f"the scrape is {len(text):,} characters"


async def test_the_console_listener_turns_nagle_off_on_accepted_connections() -> None:
    """Regression: a listener made with protocol 0 left Nagle on (asyncio sets TCP_NODELAY
    only when the socket's protocol says TCP), and each response on a kept-alive
    connection waited ~40 ms for the client's delayed ACK."""
    sock = tcp_listener("127.0.0.1", 0)
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Accept(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            raw = transport.get_extra_info("socket")
            accepted.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Accept, sock=sock)
    async with server:
        _reader, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
        assert await asyncio.wait_for(accepted, 5) != 0
        writer.close()


def test_pages_have_a_favicon() -> None:
    """Both pages name an inline SVG icon (the CSP allows data: images), so the browser
    shows one and asks the server for no /favicon.ico."""
    import re
    import xml.etree.ElementTree as ET
    from importlib.resources import files
    from urllib.parse import unquote

    for page in ("index.html", "login.html"):
        html = (files("mcpgen.runtime.console") / "static" / page).read_text(encoding="utf-8")
        found = re.search(r'<link rel="icon" type="image/svg\+xml" href="data:image/svg\+xml,([^"]+)">', html)
        assert found, page
        svg = ET.fromstring(unquote(found.group(1)))
        assert svg.tag == "{http://www.w3.org/2000/svg}svg" and svg.get("viewBox") == "0 0 16 16"
