"""Device events as MCP resources: one resource per served device holding its recent events.

A device sends a spec-declared event as ``notifications/events/<name>`` (params = the
event's arguments). Besides the log message every client gets (see ``core.py``), each
event updates the resource ``mcpgen://devices/<device id>/events``: ``resources/read``
returns the device's last :data:`KEPT_EVENTS` events as JSON, and a client subscribed to
the URI (``resources/subscribe`` in the handshake era, ``resourceSubscriptions`` of
``subscriptions/listen`` at 2026-07-28, where log messages are not pushed) gets
``notifications/resources/updated``. One resource per device, rather than one per event,
because the bridge does not know a device's event names before the first one arrives,
but it does know the device: the URI exists (and is listed) from the moment the device
is served.
"""

from __future__ import annotations

import json
import time
from collections import deque
from typing import Any
from urllib.parse import quote, unquote

URI_PREFIX = "mcpgen://devices/"
URI_SUFFIX = "/events"
KEPT_EVENTS = 32
"""Events kept per device for ``resources/read`` (oldest dropped first)."""
MIME_TYPE = "application/json"


def events_uri(device_id: str) -> str:
    """``kitchen`` -> ``mcpgen://devices/kitchen/events`` (the id percent-encoded)."""
    return f"{URI_PREFIX}{quote(device_id, safe='')}{URI_SUFFIX}"


def device_of(uri: str) -> str | None:
    """The device id an events URI names, or None for any other URI."""
    if not (uri.startswith(URI_PREFIX) and uri.endswith(URI_SUFFIX)):
        return None
    encoded = uri[len(URI_PREFIX) : -len(URI_SUFFIX)]
    if not encoded or "/" in encoded:
        return None
    return unquote(encoded)


class EventLog:
    """The recent events of each device (bounded), for ``resources/read``."""

    def __init__(self, kept: int = KEPT_EVENTS) -> None:
        self.kept = kept
        self._events: dict[str, deque[dict[str, Any]]] = {}

    def record(self, device_id: str, event: str, arguments: dict[str, Any]) -> None:
        log = self._events.setdefault(device_id, deque(maxlen=self.kept))
        log.append({"event": event, "arguments": arguments, "time": time.time()})

    def forget(self, device_id: str) -> None:
        self._events.pop(device_id, None)

    def resource(self, device_id: str) -> dict[str, Any]:
        """The ``resources/list`` entry of a device's events."""
        return {
            "uri": events_uri(device_id),
            "name": f"{device_id} events",
            "description": f"The last {self.kept} events device {device_id} reported (newest last).",
            "mimeType": MIME_TYPE,
        }

    def contents(self, device_id: str) -> dict[str, Any]:
        """The ``resources/read`` result for a device's events."""
        events = list(self._events.get(device_id, ()))
        text = json.dumps({"device": device_id, "events": events}, ensure_ascii=False)
        return {"contents": [{"uri": events_uri(device_id), "mimeType": MIME_TYPE, "text": text}]}
