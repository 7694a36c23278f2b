"""Attaching devices from a command line: what ``codegen bridge`` and ``codegen console`` share.

:func:`add_device_arguments` adds the "devices" options (``--device-cmd``, ``--serial``,
``--gateway-port``, ``--mqtt-broker`` and their companions) to a parser, and
:class:`DeviceSources` starts what they name: device processes and serial lines at once,
and the WebSocket and MQTT gateways that hand over devices as their sessions become
ready. Each ready device is passed to the ``on_device(device, transport)`` callback with
the name of the transport it came through (:data:`TRANSPORTS`).

A ``--device-cmd`` device's id is stable across restarts: ``--device-id`` in the same
order, else ``process:<the name the device reports>``, with ``-2``, ``-3``... for the
second and third of one name (:func:`unique_id`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import ipaddress
import logging
import os
import shlex
from collections.abc import Callable
from typing import Any

from mcpgen.mqtt_topics import DEFAULT_PREFIX
from mcpgen.secret_options import AUTH_TOKEN, HMAC_SECRET, SecretError, add_secret_argument, resolve_secrets

log = logging.getLogger("mcpgen.runtime.bridge")

#: The transport names :class:`DeviceSources` reports, one per kind of source.
TRANSPORTS = ("stdio", "serial", "websocket", "mqtt")

#: The device-authentication secrets (each also as ``--...-file`` and ``MCPGEN_...``).
DEVICE_SECRETS = (AUTH_TOKEN, HMAC_SECRET)

OnDevice = Callable[[Any, str], object]
"""``on_device(device, transport)``; what it returns is ignored."""


class AttachError(Exception):
    """A device source could not be started; the message says which and why."""


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that name devices (the "devices" group) to ``parser``."""
    d = parser.add_argument_group("devices")
    d.add_argument(
        "--device-cmd",
        action="append",
        default=[],
        metavar="CMD",
        help="launch a device (e.g. the simulator) and talk to it over its stdio (repeatable)",
    )
    d.add_argument(
        "--device-id",
        action="append",
        default=[],
        metavar="ID",
        help="the id of a --device-cmd device, in the same order (repeatable; default: "
        "process:<the name the device reports>, the same at every restart)",
    )
    d.add_argument(
        "--gateway-port",
        type=int,
        metavar="PORT",
        help="accept devices over WebSocket on this port (the xiaozhi protocol)",
    )
    d.add_argument(
        "--gateway-host", default="127.0.0.1", help="gateway address (use 0.0.0.0 for devices on the LAN)"
    )
    d.add_argument(
        "--serial",
        action="append",
        default=[],
        metavar="PORT",
        help="a device on a serial port or pyserial URL, e.g. /dev/ttyUSB0 (repeatable)",
    )
    d.add_argument("--baudrate", type=int, default=115200, help="serial speed (default: 115200)")
    d.add_argument(
        "--mqtt-broker",
        metavar="HOST[:PORT]",
        help="accept devices through this MQTT broker (docs/mqtt.md; port default 1883)",
    )
    d.add_argument(
        "--mqtt-prefix", default=DEFAULT_PREFIX, help=f"MQTT topic prefix (default: {DEFAULT_PREFIX})"
    )
    d.add_argument("--mqtt-username", metavar="NAME", help="this program's own broker user name")
    d.add_argument(
        "--mqtt-password-env",
        metavar="VAR",
        help="environment variable holding the broker password (not on the command line: "
        "other local users can read it there)",
    )
    add_secret_argument(
        d,
        AUTH_TOKEN,
        metavar="[DEVICE_ID=]TOKEN",
        help="bearer tokens devices must present to the gateway, each [DEVICE_ID=]TOKEN "
        "(DEVICE_ID= binds it to one device)",
    )
    add_secret_argument(d, HMAC_SECRET, metavar="SECRET", help="authenticate gateway devices by HMAC tokens")
    d.add_argument(
        "--device",
        action="append",
        default=[],
        metavar="ID",
        help="serve only this device id (repeatable; default: every device)",
    )
    d.add_argument(
        "--call-timeout", type=float, default=30.0, help="seconds a tool call may take (default: 30)"
    )
    parser.add_argument(
        "device_argv",
        nargs="*",
        metavar="-- CMD [ARG ...]",
        help="a device command after a lone `--`, one word per argument: like --device-cmd, "
        "but no launcher can split or join its words (e.g. -- ./sim --stdio); it comes last",
    )


def take_trailing_command(args: argparse.Namespace) -> None:
    """Moves the trailing ``-- CMD ARG...`` into ``args.device_cmd`` (quoted so that
    :class:`DeviceSources` splits it back into exactly those words); idempotent."""
    trailing = getattr(args, "device_argv", None)
    if trailing:
        args.device_cmd = [*args.device_cmd, shlex.join(trailing)]
        args.device_argv = []


def has_sources(args: argparse.Namespace) -> bool:
    """Whether the command line names at least one device source."""
    return bool(args.device_cmd or args.serial or args.gateway_port is not None or args.mqtt_broker)


NO_SOURCES = "no devices: give --device-cmd CMD, --serial PORT, --gateway-port PORT or --mqtt-broker HOST"


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the device options before anything starts (exit 2), or None."""
    take_trailing_command(args)
    if not has_sources(args):
        return NO_SOURCES
    if len(args.device_id) > len(args.device_cmd):
        return (
            f"{len(args.device_id)} --device-id for {len(args.device_cmd)} --device-cmd: "
            "give one id per command, in the same order"
        )
    if args.mqtt_broker:
        try:
            broker_address(args.mqtt_broker)
        except ValueError as exc:
            return str(exc)
    try:
        resolve_secrets(args, *DEVICE_SECRETS)
    except SecretError as exc:
        return str(exc)
    return None


def many_can_connect(args: argparse.Namespace) -> bool:
    """Whether more than one device may show up (several sources, or a gateway)."""
    gateway = args.gateway_port is not None or args.mqtt_broker is not None
    if gateway and len(args.device) != 1:
        return True
    return len(args.device_cmd) + len(args.serial) + (1 if gateway else 0) > 1


def broker_address(value: str) -> tuple[str, int]:
    """``HOST[:PORT]`` (``[v6]:PORT`` for IPv6) -> (host, port)."""
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    if not port:
        return host, 1883
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--mqtt-broker {value!r}: the port must be a number from 1 to 65535")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Is ``host`` (a bind address) reachable from this machine only?"""
    name = host.strip("[]").lower()
    if name in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a name that may resolve anywhere, or a wildcard: assume reachable


def url_host(host: str) -> str:
    """A bind address as a URL's host part (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def unique_id(device_id: str, taken: set[str]) -> str:
    """``device_id``, or ``<device_id>-2``, ``-3``... when an earlier --device-cmd device has
    it (two simulators of one firmware report the same name): the command line's order
    decides, so the ids stay the same across restarts."""
    candidate, n = device_id, 1
    while candidate in taken:
        n += 1
        candidate = f"{device_id}-{n}"
    return candidate


def device_authenticator(args: argparse.Namespace) -> Any:
    """The gateways' authenticator from ``--auth-token`` / ``--hmac-secret`` in any of their
    forms (:mod:`mcpgen.secret_options`; None: none). :class:`SecretError` when one cannot
    be read."""
    resolve_secrets(args, *DEVICE_SECRETS)
    if not args.auth_token and not args.hmac_secret:
        return None
    from mcpgen import runtime

    if args.hmac_secret:
        return runtime.HmacAuth(args.hmac_secret)
    tokens: dict[str, str] = {}  # device id -> token; "*" is the token for any device
    for item in args.auth_token:
        device_id, sep, token = item.partition("=")
        if sep and device_id:
            tokens[device_id] = token
        else:
            tokens["*"] = item
    return runtime.TokenAuth(tokens)


async def _call_maybe_async(fn: Any) -> None:
    with contextlib.suppress(Exception):
        result = fn()
        if inspect.isawaitable(result):
            await asyncio.wait_for(result, 5.0)


class DeviceSources:
    """The device sources named by :func:`add_device_arguments` options, started and closed.

    :meth:`start` launches the ``--device-cmd`` processes and opens the ``--serial``
    lines (each handed to ``on_device`` once its session is ready), then starts the
    gateways, whose devices are handed over from background tasks as they arrive.
    ``hubs`` holds the started gateways (``runtime.Gateway``, ``runtime.links.mqtt.gateway.MqttGateway``)
    for callers that observe them (metrics). :meth:`close` closes every device and gateway.
    """

    def __init__(
        self,
        args: argparse.Namespace,
        on_device: OnDevice,
        open_gateway_risk: str = "clients will call",
    ) -> None:
        take_trailing_command(args)
        self.args = args
        self.on_device = on_device
        #: completes the open-gateway warning: "... a device whose tools <this>"
        self.open_gateway_risk = open_gateway_risk
        #: the open device handles, oldest first; a handle leaves when it closes (a gateway
        #: hands out a new handle per session: keeping the ended ones grew without bound)
        self.devices: dict[int, Any] = {}
        self.hubs: list[tuple[Any, str]] = []  # (gateway, transport name)
        self._accepting: list[asyncio.Task[None]] = []

    def _add(self, device: Any, transport: str) -> None:
        self.devices[id(device)] = device
        on_close = getattr(device, "on_close", None)
        if callable(on_close):  # runtime.Device: forgotten as soon as its session ends
            on_close(self._forget)
        self.on_device(device, transport)
        if getattr(device, "closed", False):  # closed before on_close was registered
            self._forget(device)

    def _forget(self, device: Any) -> None:
        if self.devices.get(id(device)) is device:
            del self.devices[id(device)]

    async def start(self) -> None:
        """Start every source; :class:`AttachError` names the first that fails."""
        args = self.args
        if not has_sources(args):
            raise AttachError(NO_SOURCES)
        try:
            broker = broker_address(args.mqtt_broker) if args.mqtt_broker else None
        except ValueError as exc:
            raise AttachError(str(exc)) from None
        try:
            from mcpgen import runtime
        except ImportError as exc:  # pragma: no cover - the runtime ships with the bridge
            raise AttachError(f"the backend runtime is not importable: {exc}") from exc
        if len(args.device_id) > len(args.device_cmd):
            raise AttachError(str(usage_error(args)))
        # The fingerprints of the specs the caller knows (``codegen console --spec``): each
        # device's session is checked against them (policy warn: another one is dynamic mode).
        fingerprint = list(getattr(args, "fingerprints", None) or []) or None
        for index, command in enumerate(args.device_cmd):
            given = args.device_id[index] if index < len(args.device_id) else None
            try:
                device = await runtime.connect_process(
                    shlex.split(command),
                    call_timeout=args.call_timeout,
                    device_id=given,
                    fingerprint=fingerprint,
                )
            except Exception as exc:
                raise AttachError(f"could not start device {command!r}: {exc}") from exc
            device.device_id = unique_id(device.device_id, {d.device_id for d in self.devices.values()})
            self._add(device, "stdio")
        for url in args.serial:
            try:
                device = await runtime.connect_serial(
                    url, baudrate=args.baudrate, call_timeout=args.call_timeout, fingerprint=fingerprint
                )
            except Exception as exc:
                raise AttachError(f"could not open the device on serial port {url}: {exc}") from exc
            self._add(device, "serial")
        try:
            auth = device_authenticator(args)
        except SecretError as exc:
            raise AttachError(str(exc)) from None
        if args.gateway_port is not None:
            gateway = runtime.Gateway(
                host=args.gateway_host,
                port=args.gateway_port,
                auth=auth,
                call_timeout=args.call_timeout,
                fingerprint=fingerprint,
            )
            await gateway.start()
            self.hubs.append((gateway, "websocket"))
            log.info("device gateway listening on %s:%s", args.gateway_host, gateway.port)
            if auth is None and not is_loopback(args.gateway_host):
                log.warning(
                    "the device gateway on %s:%s accepts devices without authentication: anyone "
                    "who can reach it can connect a device whose tools %s "
                    "(give --auth-token-file or --hmac-secret-file, or bind it to 127.0.0.1)",
                    args.gateway_host,
                    gateway.port,
                    self.open_gateway_risk,
                )
        if broker is not None:
            from mcpgen.runtime.links.mqtt.gateway import MqttGateway

            password = os.environ.get(args.mqtt_password_env) if args.mqtt_password_env else None
            mqtt = MqttGateway(
                broker[0],
                broker[1],
                topic_prefix=args.mqtt_prefix,
                username=args.mqtt_username,
                password=password,
                auth=auth,
                call_timeout=args.call_timeout,
                fingerprint=fingerprint,
            )
            try:
                await mqtt.start()
            except Exception as exc:
                raise AttachError(f"could not use the MQTT broker {broker[0]}:{broker[1]}: {exc}") from exc
            self.hubs.append((mqtt, "mqtt"))
            log.info("MQTT device gateway on %s", mqtt.url)
        self._accepting = [asyncio.ensure_future(self._accept(hub, name)) for hub, name in self.hubs]

    async def _accept(self, hub: Any, transport: str) -> None:
        async for device in hub.devices():
            self._add(device, transport)

    async def close(self) -> None:
        for task in self._accepting:
            task.cancel()
        await asyncio.gather(*self._accepting, return_exceptions=True)
        for device in list(self.devices.values()):
            await _call_maybe_async(device.close)
        for hub, _name in self.hubs:
            await _call_maybe_async(hub.close)


__all__ = [
    "DEVICE_SECRETS",
    "NO_SOURCES",
    "TRANSPORTS",
    "AttachError",
    "DeviceSources",
    "add_device_arguments",
    "broker_address",
    "device_authenticator",
    "has_sources",
    "is_loopback",
    "many_can_connect",
    "take_trailing_command",
    "unique_id",
    "url_host",
    "usage_error",
]
