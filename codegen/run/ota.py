"""``codegen ota``: roll devices onto a new firmware image and watch it (docs/ota.md).

Starts a device gateway (devices connect to it as they do to any backend), or with
``--mqtt`` joins the devices' MQTT broker as an :class:`~mcpgen.runtime.MqttFleet` worker,
serves the image over HTTP (HTTPS with ``--cert``; or uses ``--url``), waits for the
devices, then updates them in batches with :func:`mcpgen.runtime.ota.rollout`, printing
one line per device as it finishes.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from mcpgen.codegen.errors import BuildError
from mcpgen.secret_options import SecretError, SecretOption, add_secret_argument, resolve_secret

if TYPE_CHECKING:  # the runtime is imported when the command runs, not when codegen parses
    from mcpgen.runtime import Gateway, MqttFleet
    from mcpgen.runtime.auth import Authenticator
    from mcpgen.runtime.ota import DeviceResult, Devices

Out = Callable[[str], None]

#: The token devices must present: ``--token-file FILE``, ``MCPGEN_AUTH_TOKEN`` (as for the
#: bridge's and the console's ``--auth-token``) or, warned, ``--token``.
DEVICE_TOKEN = SecretOption("--token", "MCPGEN_AUTH_TOKEN", "the bearer token devices must present")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "image",
        type=Path,
        help="the new image, built with device.ota: true: a simulator "
        "(e.g. build/lamp-v2/firmware/build/desk_lamp-sim) or an ESP32 firmware.bin",
    )
    p.add_argument("--host", default="127.0.0.1", help="gateway address (default: 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=8765, help="gateway port the devices connect to (default: 8765)"
    )
    add_secret_argument(
        p, DEVICE_TOKEN, metavar="TOKEN", help="accept only devices with this bearer token (default: any)"
    )
    p.add_argument(
        "--serve",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="where the image server listens (default: 127.0.0.1 on a free port)",
    )
    p.add_argument(
        "--cert",
        type=Path,
        metavar="PEM",
        help="serve the image over HTTPS with this certificate (chain); devices verify it "
        "against their CA (the simulator's --ota-ca)",
    )
    p.add_argument(
        "--key", type=Path, metavar="PEM", help="the private key of --cert (when not in that file)"
    )
    p.add_argument("--url", help="download URL of the image when it is served elsewhere (no image server)")
    p.add_argument(
        "--mqtt",
        metavar="HOST[:PORT]",
        help="reach the devices through this MQTT broker as an MqttFleet worker instead of "
        "serving a WebSocket gateway (port default 1883)",
    )
    p.add_argument("--topic-prefix", default=None, help="MQTT topic prefix of the fleet (default: mcpgen)")
    p.add_argument(
        "--devices",
        type=int,
        default=1,
        metavar="N",
        help="wait for N devices, then update them all (default: 1)",
    )
    p.add_argument(
        "--device",
        action="append",
        default=[],
        metavar="ID",
        help="update only this device id (repeatable; waits for each)",
    )
    p.add_argument("--wait", type=float, default=60.0, help="seconds to wait for the devices (default: 60)")
    p.add_argument("--batch", type=int, default=1, help="devices updated at once (default: 1)")
    p.add_argument(
        "--max-failures", type=int, default=0, help="halt once more devices than this failed (default: 0)"
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=60.0,
        help="seconds per device to install and come back (default: 60)",
    )
    p.add_argument(
        "--sign-key",
        type=Path,
        metavar="KEY.pem",
        help="sign the image with this ECDSA P-256 private key before serving it (ESP-IDF's "
        "signed-app block, written by espsecure; for devices whose spec has "
        "device.ota.public_key)",
    )
    p.add_argument(
        "--allow-downgrade",
        action="store_true",
        help="let devices install an image whose version is lower than the one they run "
        "(they refuse it otherwise)",
    )


async def run(args: argparse.Namespace, out: Out = print) -> int:
    """Exit code 0 when every device ended on the new image, 1 otherwise."""
    from mcpgen.runtime.bridge.attach import is_loopback  # the bridge's and the console's rule
    from mcpgen.runtime.ota import UnsafeUrl, check_url

    if args.url is not None:
        try:
            check_url(args.url)
        except UnsafeUrl as exc:
            raise BuildError(f"--url: {exc}") from None
    try:  # the token from --token-file or MCPGEN_AUTH_TOKEN, before the loopback rule reads it
        resolve_secret(args, DEVICE_TOKEN)
    except SecretError as exc:
        raise BuildError(str(exc)) from None
    if not args.mqtt and not args.token and not is_loopback(args.host):
        raise BuildError(
            f"--host {args.host}: the gateway would listen beyond this machine and take any "
            "device that connects (and any such device would be sent the image); give the "
            "devices' token (--token-file FILE or MCPGEN_AUTH_TOKEN), or listen on 127.0.0.1"
        )
    signed_dir: Optional[Path] = None
    image_path = args.image
    if args.sign_key is not None:
        from mcpgen.codegen.run.ota_sign import signed_copy

        image_path = signed_copy(args.image, args.sign_key)
        signed_dir = image_path.parent
    try:
        return await _run(args, out, image_path)
    finally:
        if signed_dir is not None:
            shutil.rmtree(signed_dir, ignore_errors=True)


async def _run(args: argparse.Namespace, out: Out, image_path: Path) -> int:
    from mcpgen.runtime import Gateway, TokenAuth
    from mcpgen.runtime.ota import ImageError, ImageServer, read_image, rollout

    try:
        image = read_image(image_path)
    except ImageError as exc:
        raise BuildError(str(exc)) from None
    serve_host, _, serve_port = args.serve.rpartition(":")
    auth = TokenAuth({"*": args.token}) if args.token else None
    tls = None
    if args.cert is not None:
        from mcpgen.runtime.ota import server_tls

        try:
            tls = server_tls(args.cert, args.key)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            raise BuildError(
                f"--cert {args.cert}: cannot load the certificate and key: {exc}; expected "
                "PEM files (pass the key with --key when it is not in the certificate "
                "file)"
            ) from None
    hub: Devices
    if args.mqtt:
        fleet = await _fleet(args, auth)
        hub, where, close = fleet, f"MQTT broker {fleet.url}", fleet.close
        wait = _fleet_devices(fleet, args)
    else:
        gw = await Gateway(host=args.host, port=args.port, auth=auth).start()
        hub, where, close = gw, f"gateway {gw.url}", gw.close
        wait = _gateway_devices(gw, args)
    server = None
    try:
        out(f"{where}: waiting for {len(args.device) or args.devices} device(s)")
        ids = await wait
        url = args.url
        if url is None:
            server = ImageServer(image, serve_host or "127.0.0.1", int(serve_port or 0), tls=tls)
            await server.start()
            url = server.url
        signed = ", signed" if args.sign_key is not None else ""
        out(
            f"image {image.device_name} {image.version} (spec {image.fingerprint}, "
            f"{image.size} bytes{signed}) at {url}"
        )
        done = 0
        t0 = time.monotonic()

        def progress(r: DeviceResult) -> None:
            nonlocal done
            done += 1
            out(f"[{done}/{len(ids)}] {r.line()}")

        report = await rollout(
            hub,
            ids,
            image,
            url,
            batch=args.batch,
            max_failures=args.max_failures,
            deadline=args.deadline,
            on_result=progress,
            allow_downgrade=args.allow_downgrade,
            server=server,
        )
    finally:
        if server is not None:
            await server.close()
        await close()
    counts = ", ".join(f"{n} {o}" for o, n in collections.Counter(r.outcome for r in report.results).items())
    halted = f"; halted after {report.failures} failures" if report.halted else ""
    out(f"{len(ids)} devices in {time.monotonic() - t0:.1f}s: {counts}{halted}")
    return 0 if report.count("updated") == len(ids) else 1


async def _fleet(args: argparse.Namespace, auth: Optional[Authenticator]) -> MqttFleet:
    from mcpgen.runtime import MqttFleet

    host, _, port = args.mqtt.partition(":")
    if not host or (port and not port.isdigit()):
        raise BuildError(f"--mqtt {args.mqtt}: expected HOST or HOST:PORT, e.g. --mqtt 127.0.0.1:1883")
    extra = {"topic_prefix": args.topic_prefix} if args.topic_prefix else {}
    fleet = MqttFleet(host, int(port or 1883), auth=auth, **extra)
    try:
        return await fleet.start()
    except Exception as exc:  # aiomqtt.MqttError: the broker is unreachable or refused us
        raise BuildError(f"--mqtt {args.mqtt}: cannot use the broker: {exc}") from None


async def _gateway_devices(gw: Gateway, args: argparse.Namespace) -> list[str]:
    """The ids to update: each ``--device`` (once, however often named) once it is connected,
    else the first ``--devices N``. Waiting longer than ``--wait`` is a one-line error."""
    from mcpgen.runtime import DeviceTimeout

    ids: list[str] = []
    try:
        if args.device:
            for d in dict.fromkeys(args.device):
                ids.append((await gw.wait_for_device(d, timeout=args.wait)).device_id)
        else:
            while len(ids) < args.devices:  # a device that reconnected comes again: named once
                d = await gw.wait_for_device(timeout=args.wait)
                if d.device_id not in ids:
                    ids.append(d.device_id)
    except (DeviceTimeout, TimeoutError):
        wanted = len(dict.fromkeys(args.device)) or args.devices
        raise BuildError(
            f"{len(ids)} of {wanted} device(s) connected to {gw.url} within {args.wait:g}s "
            f"({', '.join(ids) or 'none'}); check that the simulators run and point at "
            "this gateway (a simulator that cannot start, e.g. an --ota-dir it cannot create, "
            "says why on its stderr)"
        ) from None
    return ids


async def _fleet_devices(fleet: MqttFleet, args: argparse.Namespace) -> list[str]:
    """The same through a fleet worker, which learns who is there from the retained presence."""
    if args.device:
        return [(await fleet.device(d, timeout=args.wait)).device_id for d in dict.fromkeys(args.device)]
    until = time.monotonic() + args.wait
    while len(fleet.online()) < args.devices and time.monotonic() < until:
        await asyncio.sleep(0.2)
    online = fleet.online()
    if len(online) < args.devices:
        raise BuildError(
            f"--devices {args.devices}: only {len(online)} device(s) online on the broker after "
            f"{args.wait:g}s ({', '.join(online) or 'none'}); start them or lower --devices"
        )
    return online[: args.devices]


def main(args: argparse.Namespace) -> int:
    return asyncio.run(run(args))
