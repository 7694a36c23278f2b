"""The bridge's URIs for device resources (issue 30): reversible, templates kept, never
an events URI."""

from __future__ import annotations

from mcpgen.runtime.bridge.device_resources import bridge_uri, device_uri
from mcpgen.runtime.bridge.events import events_uri


def test_device_uris_round_trip() -> None:
    for device_id, uri in [
        ("lamp-1", "lamp://status"),
        ("lamp 1/x", "lamp://pattern/{length}"),
        ("d", "urn:x:y"),
    ]:
        mapped = bridge_uri(device_id, uri)
        assert mapped is not None and mapped.startswith("mcpgen://devices/")
        assert device_uri(mapped) == (device_id, uri)


def test_what_is_not_a_device_resource() -> None:
    assert bridge_uri("d", "no-scheme") is None
    assert device_uri(events_uri("lamp-1")) is None  # the events resource stays the bridge's own
    assert device_uri("mcpgen://devices/") is None
    assert device_uri("file:///etc/passwd") is None
