"""Fault injection against the device gateway (issue 18), black-box through the public API.

A swarm process (``device_swarm.py``) runs a few hundred misbehaving devices and raw
peers against a :class:`mcpgen.runtime.Gateway` in this process, while a caller per
device keeps calling a tool. One warm-up cycle, then ``cycles`` fault cycles; after each
the swarm leaves. Asserted, for every call of every cycle:

* it completes (with the right answer: each call has its own tag, so a reply delivered
  to the wrong call or twice shows) or fails with a typed ``McpDeviceError``;
* it ends within ``call_timeout + slack``; no caller is left hanging;
* devices that behave get every answer, even while others drop, stall, send garbage or
  try to take over their ids with forged tokens;
* unauthenticated peers receive an HTTP 401 response and nothing else, never a device;
* peers that never say hello are closed within ``hello_timeout`` and never announced;
* every device is gone from ``Gateway.connected`` once the swarm has left, and the
  process's RSS after the last cycle is within a tolerance of its RSS before the gateway
  started (the empty process; the test itself never trims the heap).

Scale by environment (CI defaults in ``faults_lib.Scale``; ``scripts/soak.sh`` runs
1000 devices for 10 minutes): MCPGEN_FAULTS_DEVICES, _DURATION, _CYCLES, _CALL_TIMEOUT,
_HELLO_TIMEOUT, _CALL_INTERVAL, _SWARMS, _SLACK. Figures are printed (``-s`` shows them).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memstats
import pytest
from faults_lib import RAW_KINDS, Scale, kind_of, plan_peers, rss_bytes, settled_rss, trimmed_rss

from mcpgen.runtime import Device, Gateway, HmacAuth, McpDeviceError

HERE = Path(__file__).resolve().parent
SWARM = HERE / "device_swarm.py"
SECRET = "fault-injection-secret"
MiB = 1 << 20


@dataclass
class Call:
    kind: str
    device_id: str
    outcome: str  # "ok", a McpDeviceError subclass name, or "UNTYPED ..." / "WRONG ..."
    elapsed: float


@dataclass
class Run:
    """What the backend side saw over the whole test."""

    scale: Scale
    calls: list[Call] = field(default_factory=list)
    announced: list[str] = field(default_factory=list)  # device ids handed out by the gateway
    callers: set[asyncio.Task[None]] = field(default_factory=set)
    stop_calls_at: float = 0.0
    tags: Iterator[int] = field(default_factory=itertools.count)

    async def caller(self, device: Device) -> None:
        kind = kind_of(device.device_id)
        rng = random.Random(device.session_id)
        while not device.closed and time.monotonic() < self.stop_calls_at:
            tag = f"t{next(self.tags)}x"
            t0 = time.monotonic()
            try:
                got = await device.call("fault.echo", {"tag": tag})
                outcome = "ok" if got == tag else f"WRONG reply {got!r} for {tag!r}"
            except McpDeviceError as exc:
                outcome = type(exc).__name__
            except Exception as exc:  # noqa: BLE001 - exactly what must not happen
                outcome = f"UNTYPED {type(exc).__name__}: {exc}"
            self.calls.append(Call(kind, device.device_id, outcome, time.monotonic() - t0))
            await asyncio.sleep(self.scale.call_interval * rng.uniform(0.5, 1.5))

    async def consume(self, gw: Gateway) -> None:
        async for device in gw.devices():
            self.announced.append(device.device_id)
            task = asyncio.ensure_future(self.caller(device))
            self.callers.add(task)
            task.add_done_callback(self.callers.discard)


async def run_swarms(url: str, scale: Scale, cycle: int, duration: float, tmp: Path) -> list[dict[str, Any]]:
    peers = plan_peers(scale.devices, cycle)
    random.Random(cycle).shuffle(peers)
    procs = []
    for i in range(scale.swarms):
        plan = {
            "url": url,
            "secret": SECRET,
            "duration": duration,
            "hello_timeout": scale.hello_timeout,
            "seed": cycle * 100 + i,
            "peers": peers[i :: scale.swarms],
        }
        path = tmp / f"plan-{cycle}-{i}.json"
        path.write_text(json.dumps(plan), encoding="utf-8")
        procs.append(
            await asyncio.create_subprocess_exec(
                sys.executable,
                str(SWARM),
                str(path),
                cwd=str(HERE),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        )
    # Every swarm's pipes are read at once: one left unread while another is awaited
    # would block at its next log line once its pipe is full.
    try:
        outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), duration + 60)
    except TimeoutError:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        pytest.fail("the device swarm did not finish")
    reports = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
        reports.append(json.loads(out))
    return reports


def check_raw_peers(reports: list[dict[str, Any]], scale: Scale) -> dict[str, int]:
    forged = [r for rep in reports for r in rep["raw"]["forged"]]
    nohello = [r for rep in reports for r in rep["raw"]["nohello"]]
    dribble = [r for rep in reports for r in rep["raw"]["dribble"]]
    assert forged and nohello and dribble
    for r in forged:
        data: str = r["received"]
        head, sep, body = data.partition("\r\n\r\n")
        who = f"forged token {r['token']!r} for {r['device_id']!r}"
        assert head.startswith("HTTP/1.1 401 "), f"{who}: {data[:200]!r}"
        lengths = [
            line.split(":", 1)[1].strip()
            for line in head.split("\r\n")
            if line.lower().startswith("content-length:")
        ]
        # Exactly the 401 response: with a Content-Length, nothing after that many bytes;
        # without one (the body runs to EOF), at least no server hello or WebSocket frame.
        if lengths:
            extra = body[int(lengths[0]) :]
        else:
            extra = body if "session_id" in body or "\x81" in body else ""
        assert sep and not extra, f"a refused peer received more than the 401 response: {data[:400]!r}"
        assert r["eof"], "the gateway kept a refused connection open"
    for r in nohello:
        assert r["received"] == [], f"{r['device_id']} got {r['received']!r} without saying hello"
        assert r["closed_after"] <= scale.hello_timeout + scale.slack, r
    for r in dribble:
        assert r["status"].startswith("HTTP/1.1 101"), r
    return {"forged": len(forged), "nohello": len(nohello), "dribble": len(dribble)}


def check_calls(calls: list[Call], counters: collections.Counter[str], scale: Scale) -> dict[str, Any]:
    deadline = scale.call_timeout + scale.slack
    bad = [c for c in calls if c.outcome.startswith(("UNTYPED", "WRONG"))]
    assert not bad, f"{len(bad)} calls neither completed nor failed typed, e.g. {bad[:5]}"
    late = [c for c in calls if c.elapsed > deadline]
    assert not late, f"{len(late)} calls ended after {deadline}s, e.g. {late[:5]}"
    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for c in calls:
        by_kind[c.kind][c.outcome] += 1
    for kind in ("good", "dup"):
        assert set(by_kind[kind]) == {"ok"}, f"{kind} devices must get every answer: {dict(by_kind[kind])}"
        assert counters[f"{kind}.early_end"] == 0, f"a {kind} device lost its session: {dict(counters)}"
    assert by_kind["silent"]["DeviceTimeout"] > 0
    assert set(by_kind["silent"]) <= {"DeviceTimeout", "DeviceDisconnected"}  # the latter: it left
    assert counters["drop.aborted_mid_call"] > 0 and by_kind["drop"]["DeviceDisconnected"] > 0
    assert counters["big.sent_oversized"] > 0 and by_kind["big"]["DeviceDisconnected"] > 0
    assert by_kind["garbage"]["ok"] > 0
    return {kind: dict(outcomes) for kind, outcomes in sorted(by_kind.items())}


@pytest.fixture
def quiet_logs() -> Iterator[None]:
    # Thousands of expected warnings (refused tokens, dropped devices) would be kept in
    # memory by pytest's log capture and pollute the RSS measurement; behaviour is
    # asserted, never log text.
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


async def test_gateway_under_faults(tmp_path: Path, quiet_logs: None) -> None:
    scale = Scale.from_env()
    run = Run(scale)
    cycle_seconds = scale.duration / scale.cycles
    figures: list[str] = []
    peak = [0]

    async def sample_peak() -> None:
        while True:
            peak[0] = max(peak[0], rss_bytes())
            await asyncio.sleep(0.2)

    before = settled_rss()
    empty = memstats.snapshot()
    sampler = asyncio.ensure_future(sample_peak())
    async with Gateway(
        host="127.0.0.1",
        port=0,
        auth=HmacAuth(SECRET),
        call_timeout=scale.call_timeout,
        hello_timeout=scale.hello_timeout,
        max_frame=64 * 1024,
    ) as gw:
        url = f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"
        consumer = asyncio.ensure_future(run.consume(gw))
        rss: list[int] = []
        for cycle in range(scale.cycles + 1):  # cycle 0 warms up, then the measured ones
            # The warm-up is a cycle like the others: a shorter one leaves the allocator's
            # pools and the runtime's caches below their steady size, and the growth to it
            # would read as a leak (seen in a 1000-device soak with an 8 s warm-up).
            duration = cycle_seconds
            t0 = time.monotonic()
            run.stop_calls_at = t0 + duration - 1.0
            reports = await run_swarms(url, scale, cycle, duration, tmp_path)
            counters: collections.Counter[str] = collections.Counter()
            for rep in reports:
                assert rep["errors"] == [], rep["errors"][:5]
                counters.update(rep["counters"])
            # No caller hangs: each ends within one call deadline after the swarm left.
            if run.callers:
                _, pending = await asyncio.wait(set(run.callers), timeout=scale.call_timeout + scale.slack)
                assert not pending, f"{len(pending)} callers still waiting after every device left"
            # Every device is gone from the gateway.
            for _ in range(100):
                if not gw.connected:
                    break
                await asyncio.sleep(0.1)
            assert not gw.connected, f"still connected after the swarm left: {sorted(gw.connected)[:10]}"
            announced = list(run.announced)
            assert not [d for d in announced if kind_of(d) in RAW_KINDS - {"dribble"}], announced
            raw = check_raw_peers(reports, scale)
            outcomes = check_calls(run.calls, counters, scale)
            storms = sum(1 for p in plan_peers(scale.devices, cycle) if p["kind"] == "storm")
            assert counters["storm.connections"] > storms, "the reconnect storm did not happen"
            await asyncio.sleep(1.5)  # the gateway trims a quiet second after a departure
            rss.append(settled_rss())
            figures.append(
                f"cycle {cycle}: {duration:.0f}s, {len(run.calls)} calls, "
                f"{len(announced)} sessions, "
                f"raw peers {raw}, RSS {rss[-1] / MiB:.1f} MiB, outcomes {outcomes}"
            )
            print(figures[-1], flush=True)  # progress of long soaks
            # The test's own records must not grow with the run (they would count as the
            # gateway's memory): keep only this cycle's.
            run.calls.clear()
            run.announced.clear()
        left = memstats.snapshot()
        consumer.cancel()
    sampler.cancel()
    floor = trimmed_rss()
    grown = rss[-1] - before
    # Against the EMPTY process (before the gateway started), not a warmed-up cycle. What
    # may stay: the modules and code objects the first sessions load lazily, and CPython's
    # arenas pinned by the few objects that outlive the load (an arena goes back only when
    # wholly empty); glibc's free pages the gateway's trim returns. Measured +2.1 MiB for
    # 200 devices (docs/security.md), where issue 18's soak stayed 47 MiB above empty and
    # this bound was 16 MiB. The soak at 1000 devices sets its own (scripts/soak.sh).
    tolerance = int(scale.rss_mib * MiB)
    # Live heap (objects' bytes, whatever the allocators keep mapped): what retention of
    # departed sessions or their buffers grows (1000 dead sessions kept by the call
    # deadlines until their timeout were ~1 MiB in ~10,000 blocks, tests/faults/test_memtrim.py).
    live = memstats.live_bytes(left) - memstats.live_bytes(empty)
    figures.append(
        f"RSS before any device {before / MiB:.1f} MiB, peak {peak[0] / MiB:.1f} MiB, after warm-up "
        f"{rss[0] / MiB:.1f} MiB, after the last cycle {rss[-1] / MiB:.1f} MiB "
        f"(+{grown / MiB:.1f} MiB over empty, tolerance {tolerance / MiB:.0f} MiB; "
        f"{floor / MiB:.1f} MiB after a test-side malloc_trim); live heap {live / MiB:+.2f} MiB; "
        f"empty: {memstats.summary(empty)}; after: {memstats.summary(left)}"
    )
    print(figures[-1])
    assert grown <= tolerance, "\n".join(figures)
    assert live < 4 * MiB, "\n".join(figures)
