"""Fleet faults against a real Mosquitto: a worker killed under load, a broker restart.

Devices: a few real C++ simulators (libmosquitto) plus Python emulators speaking the
same topics (benchmarks/mqtt_emulator.py, one process): 200 simulator processes would
not fit two shared cores. Every device keeps a real counter that ``self.counter.add``
increments, so a request executed or answered twice shows as a repeated value.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from mqtt_testlib import REPO, Broker, Built, launch

from mcpgen.runtime import DeviceDisconnected, McpDeviceError, MqttFleet

pytestmark = pytest.mark.asyncio

HERE = Path(__file__).parent
N_SIMS = 4
N_EMULATED = 200
DEADLINE = 5.0
SLACK = 1.0  # scheduling on a loaded 2-core machine


@contextlib.asynccontextmanager
async def emulators(port: int, count: int, id_prefix: str) -> AsyncIterator[asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks.mqtt_emulator",
        "--port",
        str(port),
        "--count",
        str(count),
        "--id-prefix",
        id_prefix,
        "--max-seconds",
        "300",
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        assert orjson.loads(line) == {"connected": count, "failed": 0}
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def emulator_summary(proc: asyncio.subprocess.Process) -> dict:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"quit\n")
    await proc.stdin.drain()
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    await asyncio.wait_for(proc.wait(), 30)
    return dict(orjson.loads(line))


async def start_worker(port: int, wid: str, devices: list[str], out: Path) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "fleet_worker.py"),
        "--port",
        str(port),
        "--worker-id",
        wid,
        "--devices",
        ",".join(devices),
        "--out",
        str(out),
        "--deadline",
        str(DEADLINE),
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    return proc


async def wait_ready(proc: asyncio.subprocess.Process) -> None:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 180)
    assert line.strip() == b"ready", line


def read_calls(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.endswith(b"}")]


async def test_killing_a_worker_under_load_fails_only_its_own_calls(built: Built, tmp_path: Path) -> None:
    broker = Broker(tmp_path, extra=("set_tcp_nodelay true",)).start()
    try:
        sims_ids = [f"sim-{i}" for i in range(N_SIMS)]
        async with contextlib.AsyncExitStack() as stack:
            quick = ("--hello-timeout-ms", "1000")  # hello again soon: no worker runs yet
            sims = [
                await stack.enter_async_context(launch(built.exe, broker.port, d, tmp_path, *quick))
                for d in sims_ids
            ]
            emu = await stack.enter_async_context(emulators(broker.port, N_EMULATED, "emu"))
            devices = sims_ids + [f"emu-{i}" for i in range(N_EMULATED)]
            outs = {w: tmp_path / f"{w}.jsonl" for w in ("w1", "w2", "w3")}
            workers = {w: await start_worker(broker.port, w, devices, outs[w]) for w in outs}
            try:
                for proc in workers.values():
                    await wait_ready(proc)
                for sim in sims:  # one worker of the group answered each hello
                    await sim.wait_log("server hello, session_id=")
                await asyncio.sleep(3.0)
                workers["w3"].send_signal(signal.SIGKILL)
                killed_at = time.time()
                await workers["w3"].wait()
                await asyncio.sleep(4.0)
                for w in ("w1", "w2"):
                    stdin = workers[w].stdin
                    assert stdin is not None
                    stdin.write(b"quit\n")
                    await stdin.drain()
                for w in ("w1", "w2"):
                    assert await asyncio.wait_for(workers[w].wait(), 30) == 0
            finally:
                for proc in workers.values():
                    if proc.returncode is None:
                        proc.kill()
                        await proc.wait()
            summary = await emulator_summary(emu)
            sim_logs = [sim.log() for sim in sims]

        calls = {w: read_calls(p) for w, p in outs.items()}
        survivors = calls["w1"] + calls["w2"]
        # The surviving workers' callers saw no failure at all, before or after the kill,
        # and kept calling the very devices the killed worker was calling.
        failed = [c for c in survivors if "ok" not in c]
        assert not failed, failed[:5]
        after = {c["d"] for c in survivors if c["t0"] > killed_at + 0.5}
        assert after >= {c["d"] for c in calls["w3"]} and len(after) == len(devices)
        assert len([c for c in survivors if c["t0"] > killed_at]) > 100
        # Every recorded call ended within its deadline; failures (if any) were typed.
        for c in survivors + calls["w3"]:
            assert c["t1"] - c["t0"] <= DEADLINE + SLACK, c
            assert "ok" in c or c["typed"], c
        # None executed or answered twice: each device's totals are all different.
        per_device: dict[str, list[int]] = {}
        for c in survivors + calls["w3"]:
            if "ok" in c:
                per_device.setdefault(c["d"], []).append(c["ok"])
        for device, totals in per_device.items():
            dupes = [v for v, n in Counter(totals).items() if n > 1]
            assert not dupes, (device, dupes)
        # No device reconnected: the emulated devices kept their one broker connection
        # and the simulators never logged a reconnect.
        assert summary["reconnects"] == 0
        assert summary["calls"] >= len([c for c in survivors if "ok" in c and c["d"].startswith("emu-")])
        for log in sim_logs:
            assert "reconnecting" not in log and "connection lost" not in log
    finally:
        broker.stop()


async def test_broker_restart_fails_pending_calls_typed_and_everyone_reconnects(
    built: Built, tmp_path: Path
) -> None:
    broker = Broker(tmp_path, extra=("set_tcp_nodelay true",)).start()
    try:
        async with (
            MqttFleet("127.0.0.1", broker.port, call_timeout=DEADLINE) as fleet,
            launch(built.exe, broker.port, "sim-r", tmp_path) as sim,
            emulators(broker.port, 20, "emr"),
        ):
            devices = ["sim-r"] + [f"emr-{i}" for i in range(20)]
            await sim.wait_log("server hello, session_id=")
            handles = [await fleet.device(d, timeout=30) for d in devices]
            sim.stop()  # one device mute: its call stays pending until the broker goes
            outcome: list[tuple[str, object, float]] = []

            async def one(h: object) -> None:
                t0 = time.monotonic()
                try:
                    val: object = await h.call("self.counter.add", {"amount": 1})  # type: ignore[attr-defined]
                except McpDeviceError as exc:
                    val = exc
                outcome.append((h.device_id, val, time.monotonic() - t0))  # type: ignore[attr-defined]

            pending = asyncio.ensure_future(one(handles[0]))
            await asyncio.sleep(0.3)
            broker.stop()
            await asyncio.wait_for(pending, DEADLINE + SLACK)
            sim.cont()
            device_id, val, took = outcome[0]
            # A stopping Mosquitto publishes its clients' wills first, so the call ends on
            # the device's "offline" or on the lost broker link, whichever comes first.
            assert isinstance(val, DeviceDisconnected), val
            assert "broker" in str(val) or "last will" in str(val), val
            assert took < DEADLINE
            for _ in range(100):
                if not fleet.connected:
                    break
                await asyncio.sleep(0.05)
            assert not fleet.connected and all(h.closed for h in handles)
            # Calls while the broker is away fail typed and quickly, nothing hangs.
            with pytest.raises(DeviceDisconnected):
                await asyncio.wait_for(fleet.device("emr-1", timeout=0.5), 5)

            broker.start(port=broker.port)
            # Backoff reconnects: the worker and every device come back by themselves.
            fresh = await asyncio.wait_for(
                asyncio.gather(*(fleet.device(d, timeout=30) for d in devices)), 60
            )
            assert fleet.connected
            await sim.wait_log("reconnecting in", timeout=5)
            totals = await asyncio.gather(*(h.call("self.counter.add", {"amount": 1}) for h in fresh))
            assert all(isinstance(t, int) and t >= 1 for t in totals)
            assert fleet.stray_replies == 0
    finally:
        broker.stop()
