"""Prometheus metrics of a fleet: devices, sessions, calls, events, handshakes, loop lag.

:class:`FleetMetrics` owns one ``prometheus_client`` registry (its own, not the
library's global one, so several instances can live in one process) and observes the
runtime through what it already offers, without hooks on the call path:

* ready sessions: :meth:`FleetMetrics.track` (the console calls it for every device it
  shows; :meth:`FleetMetrics.watch_hub` does it for every device a ``Gateway`` or
  ``MqttGateway`` hands out), events through ``device.on_notification``;
* refused handshakes and hellos: the ``rejected`` counters that ``DeviceHub`` and
  ``MqttFleet`` keep, read when scraped;
* ``MqttFleet`` workers: :meth:`FleetMetrics.watch_fleet` (presence, notifications,
  ``rejected``);
* calls: whoever makes them reports them (:meth:`record_call`, or :meth:`timing` around
  any awaited call, e.g. one of the generated bindings); the console does for its own.

Label values that come from devices (tool and event names) are bounded in number and in
length: past :data:`MAX_LABEL_VALUES` distinct values, further ones are counted under
``"other"``, and a value longer than :data:`MAX_LABEL_LENGTH` characters is clipped to its
prefix plus a short digest of the whole (so two long names stay two series). A device
reporting thousands of names, or names of 60 kB, cannot grow the registry or a scrape
without limit (issue 40: 256 event names of 60 kB made a 30.7 MB scrape).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
import weakref
from collections.abc import AsyncIterator, Iterable
from typing import Any, Optional

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from mcpgen.runtime.errors import (
    DeviceDisconnected,
    DeviceTimeout,
    ProtocolError,
    RpcError,
    ToolError,
    ValidationError,
)
from mcpgen.runtime.session.events import event_name

log = logging.getLogger("mcpgen.runtime.console.metrics")

#: Call latency buckets (seconds): a loopback simulator answers in well under a
#: millisecond, a device on Wi-Fi in tens of milliseconds, a slow tool in seconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LOOP_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
MAX_LABEL_VALUES = 256
#: Longest label value exported; longer ones are clipped (see :func:`clip_label`).
MAX_LABEL_LENGTH = 128
OTHER = "other"
#: Device ids remembered for ``mcpgen_reconnects`` (the least recently seen forgotten first).
MAX_SEEN_IDS = 10000

#: Call outcomes (the ``outcome`` label): ``ok``; ``tool_error`` (the tool ran and failed,
#: ``isError: true``); ``invalid`` (refused before sending: an argument broke the schema);
#: ``rpc_error``, ``timeout``, ``disconnected``, ``protocol_error``, ``error`` (anything else).
OUTCOMES = ("ok", "tool_error", "invalid", "rpc_error", "timeout", "disconnected", "protocol_error", "error")


def outcome_of(exc: Optional[BaseException]) -> str:
    """The ``outcome`` label for a call that raised ``exc`` (None: it succeeded)."""
    if exc is None:
        return "ok"
    for kind, name in (
        (ToolError, "tool_error"),
        (ValidationError, "invalid"),
        (RpcError, "rpc_error"),
        (DeviceTimeout, "timeout"),
        (DeviceDisconnected, "disconnected"),
        (ProtocolError, "protocol_error"),
    ):
        if isinstance(exc, kind):
            return name
    return "error"


def clip_label(value: str, limit: int = MAX_LABEL_LENGTH) -> str:
    """``value`` itself when at most ``limit`` characters; else its prefix, ``"~"`` and
    the first 12 hex digits of its SHA-256, ``limit`` characters in all. The digest keeps
    two long names that share a prefix apart."""
    if len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{value[: limit - 13]}~{digest}"


class _BoundedLabel:
    """Keeps at most ``limit`` distinct label values, each clipped to
    :data:`MAX_LABEL_LENGTH` characters; later new ones become ``"other"``."""

    def __init__(self, limit: int = MAX_LABEL_VALUES) -> None:
        self.limit = limit
        self._seen: set[str] = set()

    def __call__(self, value: str) -> str:
        value = clip_label(value)
        if value in self._seen:
            return value
        if len(self._seen) >= self.limit:
            return OTHER
        self._seen.add(value)
        return value


class FleetMetrics:
    """The metrics of one process that talks to devices (see the module docstring).

    ``registry``: where to register (default: a new ``CollectorRegistry``).
    ``process_metrics``: also export ``process_*`` (CPU, memory, file descriptors).
    """

    def __init__(self, registry: Optional[CollectorRegistry] = None, *, process_metrics: bool = True) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.calls = Counter(
            "mcpgen_calls", "Tool calls by tool and outcome.", ["tool", "outcome"], registry=r
        )
        self.call_seconds = Histogram(
            "mcpgen_call_duration_seconds",
            "Time from sending a tool call to its answer (calls that reached the device).",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.events = Counter(
            "mcpgen_events", "Device events received, by event name.", ["event"], registry=r
        )
        self.sessions = Counter(
            "mcpgen_sessions", "Device sessions that became ready, by transport.", ["transport"], registry=r
        )
        self.reconnects = Counter(
            "mcpgen_reconnects",
            "Ready sessions of a device id that had one before in this process, by transport.",
            ["transport"],
            registry=r,
        )
        self.loop_lag = Histogram(
            "mcpgen_event_loop_lag_seconds",
            "How late the event loop ran a timer (sampled): time the loop spent on other work.",
            buckets=LOOP_LAG_BUCKETS,
            registry=r,
        )
        self.loop_lag_last = Gauge(
            "mcpgen_event_loop_lag_last_seconds", "The latest event-loop lag sample.", registry=r
        )
        self.http_refused = Counter(
            "mcpgen_http_refused_requests",
            "Requests the console refused before serving them (421 Host, 403 Origin, 401 token, "
            "405, 408, 413, 415, 400), by status.",
            ["status"],
            registry=r,
        )
        r.register(_SourceCollector(self))
        if process_metrics:
            ProcessCollector(registry=r)
        self._tools = _BoundedLabel()
        self._event_names = _BoundedLabel()
        self._live: dict[str, weakref.WeakSet[Any]] = {}
        # (transport, device id) of sessions seen, for reconnects: the newest MAX_SEEN_IDS
        self._seen: dict[tuple[str, str], None] = {}
        self._hubs: list[tuple[Any, str]] = []
        self._fleets: list[Any] = []
        self._tasks: set[asyncio.Task[None]] = set()

    # -- devices --------------------------------------------------------------------------

    def track(self, device: Any, transport: str) -> None:
        """Counts a ready session of ``device`` (any ``DeviceLike``) that came through
        ``transport``: a session, a reconnect when its id was seen before, its events from
        now on, and a connected device until it closes."""
        self.sessions.labels(transport).inc()
        key = (transport, str(device.device_id))
        if key in self._seen:
            self.reconnects.labels(transport).inc()
            del self._seen[key]  # re-inserted as the newest
        elif len(self._seen) >= MAX_SEEN_IDS:  # ids that come once each cannot grow it
            del self._seen[next(iter(self._seen))]
        self._seen[key] = None
        self._live.setdefault(transport, weakref.WeakSet()).add(device)
        device.on_notification(self._notification)

    def _notification(self, method: str, params: Any) -> None:
        name = event_name(method) if isinstance(method, str) else None
        if name is not None:
            self.events.labels(self._event_names(name)).inc()

    def connected(self) -> dict[str, int]:
        """Devices connected now, by transport (tracked handles not closed, fleets' online)."""
        counts: dict[str, int] = {}
        for transport, devices in self._live.items():
            counts[transport] = sum(1 for d in list(devices) if not d.closed)
        for fleet in self._fleets:
            counts["mqtt-fleet"] = counts.get("mqtt-fleet", 0) + len(fleet.online())
        return counts

    def watch_hub(self, hub: Any, transport: Optional[str] = None) -> asyncio.Task[None]:
        """Observes a ``Gateway``/``MqttGateway``: every device it hands out is tracked
        (:meth:`track`) and its ``rejected`` count is exported. Returns the watching task
        (it ends when the hub closes); a caller that tracks the hub's devices itself uses
        :meth:`watch_rejections` instead."""
        name = transport or getattr(hub, "transport_name", "") or "gateway"
        self.watch_rejections(hub, name)

        async def follow() -> None:
            async for device in hub.devices():
                self.track(device, name)

        return self._spawn(follow())

    def watch_rejections(self, hub: Any, transport: str) -> None:
        """Exports ``hub.rejected`` (handshakes and hellos refused) under ``transport``."""
        self._hubs.append((hub, transport))

    def watch_fleet(self, fleet: Any) -> None:
        """Observes an ``MqttFleet`` worker: devices online, hellos refused (``rejected``),
        events it receives, and reconnects (a device online again after being offline)."""
        self._fleets.append(fleet)
        self._hubs.append((fleet, "mqtt-fleet"))
        offline: set[str] = set()

        def presence(device_id: str, online: bool) -> None:
            if not online:
                offline.add(device_id)
            elif device_id in offline:
                offline.discard(device_id)
                self.reconnects.labels("mqtt-fleet").inc()

        fleet.on_presence(presence)
        fleet.on_notification(lambda _device_id, method, params: self._notification(method, params))

    # -- calls ----------------------------------------------------------------------------

    def record_call(self, tool: str, outcome: str, seconds: Optional[float]) -> None:
        """One finished call. ``seconds`` None: it never reached the device (``invalid``),
        so it counts but has no latency."""
        label = self._tools(tool)
        self.calls.labels(label, outcome).inc()
        if seconds is not None:
            self.call_seconds.labels(label).observe(seconds)

    @contextlib.asynccontextmanager
    async def timing(self, tool: str) -> AsyncIterator[None]:
        """``async with metrics.timing("self.light.set_rgb"): await lamp.light.set_rgb(...)``:
        records the call, its latency and its outcome (from the exception, if any)."""
        start = time.perf_counter()
        try:
            yield
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                outcome = outcome_of(exc)
                self.record_call(tool, outcome, None if outcome == "invalid" else time.perf_counter() - start)
            raise
        self.record_call(tool, "ok", time.perf_counter() - start)

    # -- the event loop -------------------------------------------------------------------

    def start_loop_monitor(self, interval: float = 0.5) -> asyncio.Task[None]:
        """Samples the running loop's lag every ``interval`` seconds until :meth:`close`."""

        async def sample() -> None:
            loop = asyncio.get_running_loop()
            while True:
                due = loop.time() + interval
                await asyncio.sleep(interval)
                lag = max(0.0, loop.time() - due)
                self.loop_lag.observe(lag)
                self.loop_lag_last.set(lag)

        return self._spawn(sample())

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        """Stops the loop monitor and hub watchers (the counts stay readable)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- exposition -----------------------------------------------------------------------

    def render(self) -> tuple[bytes, str]:
        """The registry in the Prometheus text format, and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def asgi_app(self) -> Any:
        """An ASGI app that serves :meth:`render` (``prometheus_client.make_asgi_app``), to
        mount in a backend at ``/metrics``. It has no access control of its own: mount it
        behind the backend's, or serve it through ``ConsoleApp`` (Host, Origin, token)."""
        from prometheus_client import make_asgi_app

        return make_asgi_app(self.registry)


class _SourceCollector(Collector):
    """Values read from the runtime's own objects when scraped."""

    def __init__(self, metrics: FleetMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        connected = GaugeMetricFamily(
            "mcpgen_devices_connected", "Devices connected now, by transport.", labels=["transport"]
        )
        for transport, count in sorted(self.metrics.connected().items()):
            connected.add_metric([transport], count)
        yield connected
        rejected = CounterMetricFamily(
            "mcpgen_rejected_handshakes",
            "Devices refused at the handshake or hello (authentication, not MCP), by transport.",
            labels=["transport"],
        )
        totals: dict[str, int] = {}
        for hub, transport in self.metrics._hubs:
            totals[transport] = totals.get(transport, 0) + int(getattr(hub, "rejected", 0))
        for transport, count in sorted(totals.items()):
            rejected.add_metric([transport], count)
        yield rejected


__all__ = [
    "LATENCY_BUCKETS",
    "MAX_LABEL_LENGTH",
    "MAX_LABEL_VALUES",
    "OUTCOMES",
    "FleetMetrics",
    "clip_label",
    "outcome_of",
]
