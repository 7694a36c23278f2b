"""What the MQTT fleet worker keeps of devices that left (issue 18 item 6).

A worker after a mass departure returns near its empty RSS only when nothing allocated
per device during the peak outlives the devices: a few such survivors per device keep
CPython's arenas (or glibc's pages) of the peak resident. These tests pin the
survivors found with benchmarks/mqtt_memory.py; its figures are in docs/security.md.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from mcpgen.runtime.links.mqtt.broker import BrokerLink, _RouteMatcher

REPO = Path(__file__).resolve().parents[2]  # `python -m benchmarks.mqtt_memory` runs from here

log = logging.getLogger("test.fleet_memory")


class _Msg:
    __slots__ = ("topic", "payload", "retain", "properties")

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.payload = b"{}"
        self.retain = False
        self.properties = None


def test_dispatch_keeps_no_reference_to_the_topics_of_departed_devices() -> None:
    """The fast path's dispatch used to cache matching handlers per topic: one topic
    string and one tuple per device ever seen (up to 65,536), alive after the device left."""
    got: list[str] = []
    link = BrokerLink(
        "127.0.0.1", 1, client_id="x", subscriptions=[], on_lost=print, logger=log,
        routes=[("fp/+/reply/w", lambda m: got.append(m.topic)), ("fp/+/state", lambda m: None)],
    )  # fmt: skip
    topics = ["".join(["fp/dev-", str(i), "/reply/w"]) for i in range(500)]  # fresh objects
    before = [sys.getrefcount(t) for t in topics]
    for topic in topics:
        link._dispatch(_Msg(topic))
    del topic
    assert len(got) == 500
    got.clear()
    after = [sys.getrefcount(t) for t in topics]
    assert after == before, "the link still references topics of messages it handled"


FILTERS = ["fp/+/up", "fp/+/reply/w1", "+/x", "a/+", "+", "fp/#", "fp/+/+", "#", "fp/up", "$share/g/+"]
TOPICS = [
    "fp/d1/up", "fp//up", "fp/d1/x/up", "fp/up", "fp/d1/reply/w1", "fp/d1/reply/w12", "fp/a/b/reply/w1",
    "x", "/x", "q/x", "q/r/x", "a/", "a/b", "a/b/c", "a", "$SYS/x", "$SYS", "fp/d1/state", "fp/d1",
    "fp/d1/upx", "fpx/d1/up", "", "/",
]  # fmt: skip


@pytest.mark.parametrize("topic_filter", FILTERS)
def test_route_matching_agrees_with_paho(topic_filter: str) -> None:
    m = _RouteMatcher(topic_filter, lambda _m: None)
    for topic in TOPICS:
        if not topic:
            continue  # (paho's matcher refuses an empty topic; brokers never send one)
        assert m.matches(topic) == mqtt.topic_matches_sub(topic_filter, topic), (topic_filter, topic)


def test_release_drops_the_names_the_attribute_cache_keeps() -> None:
    """paho builds the name of every MQTT 5 property anew each time it packs or reads a
    Properties (a few times per device) and looks it up; CPython's attribute cache then
    keeps that string, which pinned the peak's memory after the devices left. The
    release before a trim clears that cache."""
    from mcpgen.runtime.links.memtrim import release_sessions

    class Props:
        pass

    props = Props()
    name = "".join(["Response", "Topic"])  # made at run time, as paho's names are
    baseline = sys.getrefcount(name)
    assert not hasattr(props, name)
    held = sys.getrefcount(name)
    if held == baseline:
        pytest.skip("this CPython's attribute cache keeps no reference to looked-up names")
    release_sessions()
    assert sys.getrefcount(name) == baseline


@pytest.mark.parametrize(
    "filters", [["fp/+/up", "fp/+/reply/w1", "fp/+/state"], ["fp/+/up", "fp/#"], ["a/+", "+/x"]]
)
def test_dispatch_calls_the_routes_paho_would(filters: list[str]) -> None:
    """Dispatch by the tail after the ``+`` level (routes with one head) or route by
    route (others) calls exactly the handlers whose filters paho matches, in order."""
    calls: list[tuple[str, str]] = []
    routes = [(f, lambda m, f=f: calls.append((f, m.topic))) for f in filters]
    link = BrokerLink(
        "127.0.0.1", 1, client_id="x", subscriptions=[], routes=routes, on_lost=print, logger=log
    )
    for topic in TOPICS:
        if not topic:
            continue
        calls.clear()
        link._dispatch(_Msg(topic))
        assert calls == [(f, topic) for f in filters if mqtt.topic_matches_sub(f, topic)], topic


def test_worker_process_returns_near_its_empty_rss_after_two_waves() -> None:
    """A fleet worker in its own process (benchmarks/mqtt_memory.py): 200 devices with
    fresh ids connect, are called back to back, and vanish (SIGKILL: the broker sends their
    wills) twice. Afterwards the worker's RSS is within 8 MiB of its empty RSS (the bound
    of the gateway's fault suite) and the bytes of live objects within 1 MiB: one kept
    Device with its session per departed device would be about 2 MiB."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.mqtt_memory", "--devices", "200", "--cycles", "2",
         "--calls-seconds", "2", "--fresh-ids", "--allocators", "default", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [res] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rss_over_empty_mib"] <= 8.0, res
    assert res["live_over_empty_mib"] <= 1.0, res
