"""What the console knows of each device: identity, status, call statistics, history, events.

One :class:`DeviceEntry` per device id. A device that reconnects (a new session under the
same id) keeps its entry, statistics and history; the entry then holds the new handle.
Everything a page shows is produced here as plain JSON-ready dicts, so the HTTP layer
only moves them.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from mcpgen.runtime.core.validate import SchemaValidator

#: Calls kept per device for the history table and the latency plot and percentiles.
HISTORY = 100
LATENCIES = 500
#: Events kept per device.
EVENTS = 100
#: A stored call result larger than this (as JSON) is replaced by a note in the history.
MAX_STORED_RESULT = 256 * 1024

_call_ids = itertools.count(1)


def now_ms() -> int:
    return int(time.time() * 1000)


def compatibility(device: Any) -> dict[str, str]:
    """The device's spec compatibility as ``{"status", "label", "detail"}``.

    ``status`` is one word the page styles: ``match``, ``mismatch``, ``unchecked``, or
    whatever a handle's own ``compatibility`` attribute says (policies beyond the
    fingerprint check can report through it: a string, or an object with ``status`` and
    optionally ``label``/``detail``); the fingerprint comparison is the fallback.
    """
    own = getattr(device, "compatibility", None)
    if isinstance(own, str) and own:
        return {"status": own, "label": own, "detail": ""}
    status = getattr(own, "status", None)
    if isinstance(status, str) and status:
        return {
            "status": status,
            "label": str(getattr(own, "label", None) or status),
            "detail": str(getattr(own, "detail", None) or ""),
        }
    expected = getattr(device, "expected_fingerprint", None)
    actual = getattr(device, "fingerprint", None)
    if expected is None:
        return {
            "status": "unchecked",
            "label": "no spec",
            "detail": "no expected fingerprint: tools as the device reports them (dynamic mode)",
        }
    if actual == expected:
        return {"status": "match", "label": "spec match", "detail": f"fingerprint {actual} as expected"}
    return {
        "status": "mismatch",
        "label": "spec mismatch",
        "detail": f"device reports {actual!r}, expected {expected!r}: dynamic mode",
    }


def percentile(sorted_values: list[float], q: float) -> Optional[float]:
    """The ``q`` quantile (0..1) of ascending values, nearest rank; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def tool_json(tool: Any) -> dict[str, Any]:
    """A tool as the page needs it: name, title, description, input schema, user-only, and
    why it cannot be called (``refused``: a ``pattern`` RE2 cannot run, else None)."""
    raw = getattr(tool, "raw", None) or {}
    title = getattr(tool, "title", None) or (raw.get("title") if isinstance(raw, Mapping) else None)
    refused = getattr(tool, "refused", None)
    return {
        "name": tool.name,
        "title": title if isinstance(title, str) else None,
        "description": tool.description,
        # as the device reported it, sane or not: the page renders what it can of it
        "inputSchema": dict(schema) if isinstance(schema := tool.input_schema, Mapping) else schema,
        "userOnly": bool(tool.user_only),
        "refused": refused if isinstance(refused, str) else None,
        # the device says the tool reports progress: the page draws a bar while it runs
        "progress": getattr(tool, "reports_progress", False) is True,
    }


@dataclass
class CallRecord:
    """One call made from the console, as shown in the history."""

    tool: str
    arguments: Any
    outcome: str
    ms: Optional[float]
    result: Optional[dict[str, Any]] = None
    error: Optional[dict[str, Any]] = None
    id: int = field(default_factory=lambda: next(_call_ids))
    time: int = field(default_factory=now_ms)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "time": self.time,
            "tool": self.tool,
            "arguments": self.arguments,
            "outcome": self.outcome,
            "ms": self.ms,
            "result": self.result,
            "error": self.error,
        }


class DeviceEntry:
    """A device id as the console tracks it across its sessions."""

    def __init__(self, device: Any, transport: str) -> None:
        self.device = device
        self.transport = transport
        self.connected_since = now_ms()
        self.disconnected_at: Optional[int] = None
        self.sessions = 1
        self.calls = 0
        self.errors = 0
        self.latencies: deque[float] = deque(maxlen=LATENCIES)
        self.history: deque[CallRecord] = deque(maxlen=HISTORY)
        self.events: deque[dict[str, Any]] = deque(maxlen=EVENTS)
        self.subscriptions: set[str] = set()
        """Resource URIs the console watches on this device (renewed on reconnect)."""
        self._validators: dict[str, tuple[Any, SchemaValidator]] = {}

    @property
    def device_id(self) -> str:
        return str(self.device.device_id)

    @property
    def connected(self) -> bool:
        return self.disconnected_at is None and not self.device.closed

    def replace(self, device: Any, transport: str) -> None:
        """A new session of the same device id: statistics and history stay."""
        self.device = device
        self.transport = transport
        self.connected_since = now_ms()
        self.disconnected_at = None
        self.sessions += 1
        self._validators.clear()

    def tools(self, user_tools: bool) -> list[Any]:
        return [t for t in self.device.tools if user_tools or not t.user_only]

    def tool(self, name: str) -> Optional[Any]:
        for t in self.device.tools:
            if t.name == name:
                return t
        return None

    def validator(self, tool: Any) -> SchemaValidator:
        """The runtime's validator for ``tool``'s reported schema (rebuilt when the
        device re-lists its tools with another schema). Patterns run on RE2, in linear
        time, so a device's pattern cannot stall the console while someone types; a
        pattern RE2 cannot take raises :class:`UnsupportedPattern` (a ValidationError)."""
        cached = self._validators.get(tool.name)
        if cached is not None and cached[0] is tool.input_schema:
            return cached[1]
        validator = SchemaValidator(tool.input_schema)
        self._validators[tool.name] = (tool.input_schema, validator)
        return validator

    def record(self, call: CallRecord) -> None:
        self.history.append(call)
        if call.outcome == "invalid":
            return  # refused before sending: the device never saw it
        self.calls += 1
        if call.outcome != "ok":
            self.errors += 1
        if call.ms is not None:
            self.latencies.append(call.ms)

    def summary(self) -> dict[str, Any]:
        """The device's row in the list."""
        device = self.device
        info = getattr(device, "server_info", None) or {}
        ordered = sorted(self.latencies)
        return {
            "id": self.device_id,
            "name": str(info.get("name") or ""),
            "version": str(info.get("version") or ""),
            "fingerprint": getattr(device, "fingerprint", None),
            "compatibility": compatibility(device),
            "transport": self.transport,
            "connected": self.connected,
            "connectedSince": self.connected_since,
            "disconnectedAt": self.disconnected_at,
            "sessions": self.sessions,
            "calls": self.calls,
            "errors": self.errors,
            "p50": percentile(ordered, 0.50),
            "p99": percentile(ordered, 0.99),
            "tools": len(device.tools),
        }

    def detail(self, user_tools: bool) -> dict[str, Any]:
        """Everything the device's panel shows."""
        device = self.device
        return {
            **self.summary(),
            "protocolVersion": getattr(device, "protocol_version", None),
            "toolList": [tool_json(t) for t in self.tools(user_tools)],
            "hiddenTools": sum(1 for t in device.tools if t.user_only and not user_tools),
            "history": [c.to_json() for c in self.history],
            "events": list(self.events),
            "latencies": list(self.latencies),
            "subscriptions": sorted(self.subscriptions),
        }


__all__ = ["CallRecord", "DeviceEntry", "compatibility", "percentile", "tool_json"]
