"""A rolling over-the-air upgrade of many simulated devices, measured (docs/ota.md).

Builds the desk lamp 0.3.1 and 0.4.0 with ``device.ota: true`` for the host, starts N
supervised 0.3.1 simulators (``--ota-dir``) against one WebSocket gateway, and rolls them to
0.4.0 in batches of 10 % with :func:`mcpgen.runtime.ota.rollout`, the image served by the
built-in :class:`~mcpgen.runtime.ota.ImageServer`. Prints the total time, the per-device
update time (call -> new session ready) p50/p99, the backend process's CPU time during the
rollout and the image server's throughput.

    python -m benchmarks.ota_rollout --devices 500          # print the figures
    python -m benchmarks.ota_rollout --devices 500 --write  # and keep them in benchmarks/ota_rollout.md

``benchmarks.report`` puts ``benchmarks/ota_rollout.md`` into docs/benchmarks.md (section 6).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SECTION = Path(__file__).resolve().parent / "ota_rollout.md"
V1 = REPO / "toolspec" / "desk_lamp.yaml"
V1_HANDLERS = REPO / "toolspec" / "desk_lamp_handlers.cpp"


def _build(work: Path, version: str) -> Path:
    from mcpgen.codegen.targets.host import build_host

    spec = work / version / "desk_lamp.yaml"
    spec.parent.mkdir(parents=True)
    text = V1.read_text(encoding="utf-8")
    text = text.replace("  version: 0.3.1\n", f"  version: {version}\n  ota: true\n", 1)
    spec.write_text(text, encoding="utf-8")
    shutil.copy(V1_HANDLERS, spec.with_name("desk_lamp_handlers.cpp"))
    return build_host(spec, work / version / "build", log=lambda _m: None)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _run(n: int, work: Path) -> dict[str, float]:
    from mcpgen.runtime import Gateway
    from mcpgen.runtime.ota import ImageServer, read_image, rollout

    exe1, exe2 = _build(work, "0.3.1"), _build(work, "0.4.0")
    image = read_image(exe2)
    ids = [f"lamp-{i:04d}" for i in range(n)]
    procs: list[subprocess.Popen] = []
    (work / "fleet").mkdir()  # the supervisor creates its --ota-dir, not the parents
    async with Gateway(host="127.0.0.1", port=0, call_timeout=60) as gw, ImageServer(image) as server:

        def spawn() -> None:  # in a thread: forking 500 times must not stall the gateway's loop
            for i in ids:
                with open(work / "fleet" / f"{i}.log", "wb") as log:
                    procs.append(
                        subprocess.Popen(
                            [
                                str(exe1),
                                "--ws",
                                gw.url,
                                "--device-id",
                                i,
                                "--ota-dir",
                                str(work / "fleet" / i),
                                "--ota-deadline-ms",
                                "120000",
                            ],
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=log,
                        )
                    )

        try:
            await asyncio.to_thread(spawn)
            for i in ids:
                try:
                    await gw.wait_for_device(i, timeout=300)
                except Exception:
                    print((work / "fleet" / f"{i}.log").read_text(errors="replace")[-3000:])
                    raise
            cpu0, t0 = time.process_time(), time.monotonic()
            report = await rollout(
                gw, ids, image, server.url, batch=max(1, n // 10), max_failures=0, deadline=300
            )
            total, cpu = time.monotonic() - t0, time.process_time() - cpu0
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait()
    durations = [r.duration for r in report.results]
    return {
        "devices": n,
        "updated": report.count("updated"),
        "image_bytes": image.size,
        "total_s": total,
        "p50_s": statistics.median(durations),
        "p99_s": _percentile(durations, 0.99),
        "backend_cpu_s": cpu,
        "served_mib_per_s": server.bytes_served / total / 2**20,
        "burst_mib_per_s": await _throughput(image),
    }


async def _throughput(image: object, clients: int = 50) -> float:
    """MiB/s the image server delivers to ``clients`` concurrent downloads on loopback."""
    from mcpgen.runtime.ota import FirmwareImage, ImageServer

    assert isinstance(image, FirmwareImage)
    async with ImageServer(image) as server:
        path = server.path.encode()

        async def fetch() -> int:
            reader, writer = await asyncio.open_connection(server.host, server.port)
            writer.write(b"GET " + path + b" HTTP/1.0\r\n\r\n")
            data = await reader.read()
            writer.close()
            return len(data)

        t0 = time.monotonic()
        got = sum(await asyncio.gather(*(fetch() for _ in range(clients))))
        return got / (time.monotonic() - t0) / 2**20


def _table(r: dict[str, float]) -> str:
    return "\n".join(
        [
            f"{int(r['devices'])} simulated desk lamps (0.3.1 -> 0.4.0, "
            f"image {r['image_bytes'] / 2**20:.2f} MiB), "
            f"batches of {max(1, int(r['devices']) // 10)}, "
            "one gateway and image server in one backend process; "
            f"{int(r['updated'])} of {int(r['devices'])} updated. Written by "
            f"`python -m benchmarks.ota_rollout --devices {int(r['devices'])} --write` "
            "(code: `benchmarks/ota_rollout.py`). The simulators share the machine's cores with the backend.",
            "",
            "Per-device update: from the `self.upgrade_firmware` call to the device's new session being "
            "ready (download, verify, reboot, reconnect, MCP setup). Backend CPU: the backend process "
            "during the rollout. Image bytes: served during the rollout / its total time. Image server: "
            "50 concurrent downloads of the image on loopback, after the rollout.",
            "",
            "| total | per-device update p50 | p99 | backend CPU | image bytes / rollout time "
            "| image server, 50 "
            "concurrent downloads |",
            "|---|---|---|---|---|---|",
            f"| {r['total_s']:.1f} s | {r['p50_s']:.2f} s | {r['p99_s']:.2f} s | {r['backend_cpu_s']:.1f} s "
            f"| {r['served_mib_per_s']:.1f} MiB/s | {r['burst_mib_per_s']:.0f} MiB/s |",
        ]
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", type=int, default=500, help="simulated devices (default: 500)")
    ap.add_argument("--write", action="store_true", help="keep the table in benchmarks/ota_rollout.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ota-bench-") as tmp:
        result = asyncio.run(_run(args.devices, Path(tmp)))
    text = _table(result)
    print(text)
    if args.write:
        SECTION.write_text(text + "\n", encoding="utf-8")
    return 0 if result["updated"] == result["devices"] else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
