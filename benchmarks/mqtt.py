"""Section ``mqtt``: fleet workers through Mosquitto beside the direct WebSocket gateway.

For each device count: one Mosquitto (``set_tcp_nodelay true``, a free loopback port),
one emulator process with that many MQTT 5 devices (``benchmarks.mqtt_emulator``),
three fleet worker processes (``benchmarks.mqtt_worker``: ``A`` opens every device,
``B1``/``B2`` half each), and the direct WebSocket gateway of the gateway section
(``benchmarks.gw_worker`` + ``benchmarks.gw_emulator``) with the same device count.
Rounds then run the three configurations in random order, one at a time, each for a fixed
time with one call in flight per device (desk-lamp's ``self.light.set_rgb``,
schema-validated ``device.call``):

* ``websocket gateway``: the gateway process;
* ``mqtt, 1 worker``: ``A`` calls every device;
* ``mqtt, 2 workers``: ``B1`` and ``B2`` at once, each its half.

Backend CPU per call = CPU time of the worker (or gateway) processes over the round /
calls; the broker's CPU share is Mosquitto's CPU time over the round / its length (1.0 =
one core), and the same for the MQTT device emulator's process. For two workers, p50 is
the mean of the two workers' p50 and p99 the larger p99. Ratios are taken round by round
against the gateway of the same round. Workers on
the link's fast path (runtime/links/mqtt/mqttfast.py) also report how many replies one socket read
brought and how many requests one write carried (the batching their CPU per call depends
on). Last, the unloaded latency: worker ``A`` makes one call at a time (round robin over
the devices).
"""

from __future__ import annotations

import getpass
import os
import random
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.procutil import Child, raise_nofile_limit, write_line
from mcpgen.codegen.resources import example_spec

Log = Callable[[str], None]
CONFIGS = ("websocket gateway", "mqtt, 1 worker", "mqtt, 2 workers")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Broker:
    def __init__(self, workdir: Path) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.port = _free_port()
        conf = workdir / "mosquitto.conf"
        lines = [f"listener {self.port} 127.0.0.1", "set_tcp_nodelay true", "persistence false",
                 "allow_anonymous true", "log_dest none", "max_connections -1"]  # fmt: skip
        if os.geteuid() == 0:
            lines.append(f"user {getpass.getuser()}")
        conf.write_text("\n".join(lines) + "\n")
        self.proc = subprocess.Popen(
            [exe, "-c", str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("mosquitto did not start")

    def cpu_seconds(self) -> float:
        return _cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _spread(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def _bench_many(children: list[Child], duration: float) -> dict[str, Any]:
    for c in children:
        assert c.proc.stdin is not None
        write_line(c.proc.stdin, {"cmd": "bench", "duration": duration})
    rs = [c.read(120 + duration * 4) for c in children]
    for r in rs:
        if "error" in r:
            raise RuntimeError(r["error"])
    calls = sum(r["calls"] for r in rs)
    seconds = max(r["seconds"] for r in rs)
    io = [r.get("io") or {} for r in rs]
    cpu = sum(r["cpu_seconds"] for r in rs)
    return {
        "calls": calls,
        "errors": sum(r["errors"] for r in rs),
        "seconds": seconds,
        "calls_per_s": calls / seconds if seconds > 0 else 0.0,
        "p50_us": statistics.mean(r["p50_us"] for r in rs),
        "p99_us": max(r["p99_us"] for r in rs),
        "cpu_seconds": cpu,
        "cpu_us_per_call": cpu / calls * 1e6 if calls else 0.0,
        # MQTT workers on the fast path: replies per socket read, requests per write.
        "replies_per_read": _ratio(
            sum(i.get("messages_in", 0) for i in io), sum(i.get("reads", 0) for i in io)
        ),
        "requests_per_write": _ratio(
            sum(i.get("messages_out", 0) for i in io), sum(i.get("writes", 0) for i in io)
        ),
    }


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def run_count(count: int, rounds: int, duration: float, log: Log, seed: int = 11) -> dict[str, Any]:
    spec = str(example_spec("desk_lamp"))
    workdir = Path(tempfile.mkdtemp(prefix="mcpgen-mqtt-bench-"))
    children: list[Child] = []
    broker = _Broker(workdir)
    out: dict[str, Any] = {"devices": count, "configs": {c: {"rounds": []} for c in CONFIGS}}
    try:
        life = str(max(300.0, 60 + rounds * duration * 8 + count * 0.2))
        emu_args = ["--port", str(broker.port), "--count", str(count), "--spec", spec, "--id-prefix", "bench"]
        emu = Child(
            ["-m", "benchmarks.mqtt_emulator", *emu_args, "--max-seconds", life], name="mqtt emulator"
        )
        children.append(emu)
        gw = Child(["-m", "benchmarks.gw_worker"], name="websocket gateway")
        children.append(gw)
        gw_info = gw.read(60)
        gw_emu = Child(["-m", "benchmarks.gw_emulator", "--url", f"ws://127.0.0.1:{gw_info['port']}/",
                        "--count", str(count), "--max-seconds", life], name="websocket emulator")  # fmt: skip
        children.append(gw_emu)
        conn = emu.read(180 + count * 0.2)
        if conn.get("connected", 0) < count:
            raise RuntimeError(f"only {conn.get('connected')} of {count} MQTT devices connected")
        if gw_emu.read(180 + count * 0.1).get("connected", 0) < count:
            raise RuntimeError("not every WebSocket device connected")
        gw.request({"cmd": "await", "n": count, "timeout": 180}, 190)
        workers = {w: Child(["-m", "benchmarks.mqtt_worker", "--port", str(broker.port), "--worker-id", w],
                            name=f"fleet worker {w}") for w in ("A", "B1", "B2")}  # fmt: skip
        children += workers.values()
        for w in workers.values():
            w.read(60)
        ids = [f"bench-{i}" for i in range(count)]
        opened = {
            "A": workers["A"].request({"cmd": "open", "devices": ids}, 600),
            "B1": workers["B1"].request({"cmd": "open", "devices": ids[0::2]}, 600),
            "B2": workers["B2"].request({"cmd": "open", "devices": ids[1::2]}, 600),
        }
        out["open_seconds"] = {k: round(v["seconds"], 2) for k, v in opened.items()}
        runners: dict[str, list[Child]] = {
            "websocket gateway": [gw],
            "mqtt, 1 worker": [workers["A"]],
            "mqtt, 2 workers": [workers["B1"], workers["B2"]],
        }
        for cfg in CONFIGS:  # warm-up, not recorded
            _bench_many(runners[cfg], min(duration, 0.5))
        rng = random.Random(seed)
        order = list(CONFIGS)
        for _ in range(rounds):
            rng.shuffle(order)
            for cfg in order:
                b0, t0 = broker.cpu_seconds(), time.perf_counter()
                e0 = _cpu_seconds(emu.proc.pid)
                r = _bench_many(runners[cfg], duration)
                elapsed = time.perf_counter() - t0
                # The MQTT device emulator's share: it must stay well below one core, or it
                # (not the worker) paces the round.
                r["emulator_cpu_share"] = (_cpu_seconds(emu.proc.pid) - e0) / elapsed
                r["broker_cpu_share"] = (broker.cpu_seconds() - b0) / elapsed
                r["broker_cpu_us_per_call"] = (
                    (broker.cpu_seconds() - b0) / r["calls"] * 1e6 if r["calls"] else 0
                )
                out["configs"][cfg]["rounds"].append(r)
        serial = [
            workers["A"].request({"cmd": "serial", "duration": duration}, 120 + duration * 4)
            for _ in range(3)
        ]
        out["serial_1_worker"] = {
            "p50_us": statistics.median(r["p50_us"] for r in serial),
            "p99_us": statistics.median(r["p99_us"] for r in serial),
            "calls": sum(r["calls"] for r in serial),
        }
        log(
            f"  {count} devices, mqtt, 1 worker, one call in flight: p50 "
            f"{out['serial_1_worker']['p50_us']:,.0f} us, p99 {out['serial_1_worker']['p99_us']:,.0f} us"
        )
        for cfg in CONFIGS:
            m = out["configs"][cfg]
            rs = m["rounds"]
            for key in ("calls_per_s", "p50_us", "p99_us", "cpu_us_per_call", "broker_cpu_share",
                        "emulator_cpu_share", "replies_per_read", "requests_per_write"):  # fmt: skip
                m[key] = _spread([r[key] for r in rs])
            m["errors"] = sum(r["errors"] for r in rs)
            m["calls"] = sum(r["calls"] for r in rs)
        ws_rounds = out["configs"]["websocket gateway"]["rounds"]
        for cfg in CONFIGS[1:]:
            rs = out["configs"][cfg]["rounds"]
            out["configs"][cfg]["cpu_per_call_vs_gateway"] = statistics.median(
                a["cpu_us_per_call"] / b["cpu_us_per_call"]
                for a, b in zip(rs, ws_rounds, strict=False)
                if b["cpu_us_per_call"]
            )
            out["configs"][cfg]["throughput_vs_gateway"] = statistics.median(
                a["calls_per_s"] / b["calls_per_s"]
                for a, b in zip(rs, ws_rounds, strict=False)
                if b["calls_per_s"]
            )
        for cfg in CONFIGS:
            m = out["configs"][cfg]
            extra = ""
            if "cpu_per_call_vs_gateway" in m:
                share = m["broker_cpu_share"]["median"] * 100
                emu_share = m["emulator_cpu_share"]["median"] * 100
                extra = (
                    f", {m['cpu_per_call_vs_gateway']:.2f}x gateway CPU/call, broker {share:.0f} %,"
                    f" emulator {emu_share:.0f} %"
                )
                if m["replies_per_read"]["median"]:
                    extra += (
                        f", {m['replies_per_read']['median']:.1f} replies/read,"
                        f" {m['requests_per_write']['median']:.1f} requests/write"
                    )
            log(
                f"  {count} devices, {cfg}: {m['calls_per_s']['median']:,.0f} calls/s, p50 "
                f"{m['p50_us']['median']:,.0f} us, p99 {m['p99_us']['median']:,.0f} us, "
                f"{m['cpu_us_per_call']['median']:,.0f} us CPU/call{extra}"
            )
    finally:
        for c in reversed(children):
            c.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def run(counts: list[int], rounds: int, duration: float, log: Log) -> dict[str, Any]:
    soft, hard = raise_nofile_limit()
    return {
        "counts": counts,
        "rounds": rounds,
        "round_seconds": duration,
        "nofile_limit": [soft, hard],
        "tool": "`device.call('self.light.set_rgb', {...})` (schema-validated)",
        "results": [run_count(n, rounds, duration, log) for n in counts],
    }
