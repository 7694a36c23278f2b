"""``codegen ota``: roll devices onto a new firmware image and watch it (docs/ota.md).

Starts a device gateway (devices connect to it as they do to any backend), serves the
image over HTTP (or uses ``--url``), waits for the devices, then updates them in batches
with :func:`mcpgen.runtime.ota.rollout`, printing one line per device as it finishes.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mcpgen.codegen.errors import BuildError

if TYPE_CHECKING:  # the runtime is imported when the command runs, not when codegen parses
    from mcpgen.runtime.ota import DeviceResult

Out = Callable[[str], None]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("image", type=Path, help="the new simulator image, built with device.ota: true, "
                   "e.g. build/lamp-v2/firmware/build/desk_lamp-sim")
    p.add_argument("--host", default="127.0.0.1", help="gateway address (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765,
                   help="gateway port the devices connect to (default: 8765)")
    p.add_argument("--token", help="accept only devices with this bearer token (default: any)")
    p.add_argument("--serve", default="127.0.0.1:0", metavar="HOST:PORT",
                   help="where the image server listens (default: 127.0.0.1 on a free port)")
    p.add_argument("--url", help="download URL of the image when it is served elsewhere (no image server)")
    p.add_argument("--devices", type=int, default=1, metavar="N",
                   help="wait for N devices, then update them all (default: 1)")
    p.add_argument("--device", action="append", default=[], metavar="ID",
                   help="update only this device id (repeatable; waits for each)")
    p.add_argument("--wait", type=float, default=60.0, help="seconds to wait for the devices (default: 60)")
    p.add_argument("--batch", type=int, default=1, help="devices updated at once (default: 1)")
    p.add_argument("--max-failures", type=int, default=0,
                   help="halt once more devices than this failed (default: 0)")
    p.add_argument("--deadline", type=float, default=60.0,
                   help="seconds per device to install and come back (default: 60)")


async def run(args: argparse.Namespace, out: Out = print) -> int:
    """Exit code 0 when every device ended on the new image, 1 otherwise."""
    from mcpgen.runtime import Gateway, TokenAuth
    from mcpgen.runtime.ota import ImageError, ImageServer, read_image, rollout

    try:
        image = read_image(args.image)
    except ImageError as exc:
        raise BuildError(str(exc)) from None
    serve_host, _, serve_port = args.serve.rpartition(":")
    auth = TokenAuth({"*": args.token}) if args.token else None
    async with Gateway(host=args.host, port=args.port, auth=auth) as gw:
        out(f"gateway {gw.url}: waiting for {len(args.device) or args.devices} device(s)")
        ids: list[str] = []
        if args.device:
            for d in args.device:
                ids.append((await gw.wait_for_device(d, timeout=args.wait)).device_id)
        else:
            for _ in range(args.devices):
                ids.append((await gw.wait_for_device(timeout=args.wait)).device_id)
        server = None
        url = args.url
        if url is None:
            server = await ImageServer(image, serve_host or "127.0.0.1", int(serve_port or 0)).start()
            url = server.url
        out(f"image {image.device_name} {image.version} (spec {image.fingerprint}, "
            f"{image.size} bytes) at {url}")
        done = 0
        t0 = time.monotonic()

        def progress(r: DeviceResult) -> None:
            nonlocal done
            done += 1
            out(f"[{done}/{len(ids)}] {r.line()}")

        try:
            report = await rollout(gw, ids, image, url, batch=args.batch, max_failures=args.max_failures,
                                   deadline=args.deadline, on_result=progress)
        finally:
            if server is not None:
                await server.close()
    counts = ", ".join(f"{n} {o}" for o, n in collections.Counter(r.outcome for r in report.results).items())
    halted = f"; halted after {report.failures} failures" if report.halted else ""
    out(f"{len(ids)} devices in {time.monotonic() - t0:.1f}s: {counts}{halted}")
    return 0 if report.count("updated") == len(ids) else 1


def main(args: argparse.Namespace) -> int:
    return asyncio.run(run(args))
