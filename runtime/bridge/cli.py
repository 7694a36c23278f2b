"""``codegen bridge``: serve devices' tools to standard MCP clients.

The lead's ``codegen`` command calls :func:`add_arguments` on its ``bridge`` sub-parser
and ``asyncio.run(run(args))``; ``python -m mcpgen.runtime.bridge`` does the same on its own.
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
import sys
from typing import Any

from mcpgen.mqtt_topics import DEFAULT_PREFIX

from .core import Bridge
from .http import default_allowed_hosts, serve_http
from .stdio import protect_stdout, serve_stdio

log = logging.getLogger("mcpgen.runtime.bridge")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the bridge's options to ``parser``."""
    t = parser.add_argument_group("MCP clients")
    t.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="how MCP clients connect: stdio (the client launches the bridge) or Streamable HTTP",
    )
    t.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default: 127.0.0.1)")
    t.add_argument("--port", type=int, default=8808, help="HTTP port (default: 8808; 0 picks a free one)")
    t.add_argument("--path", default="/mcp", help="HTTP MCP endpoint path (default: /mcp)")
    t.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="browser Origin allowed besides the bridge's own, e.g. http://localhost:6274 "
        "(repeatable; '*' allows any)",
    )
    t.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="NAME",
        help="Host header name allowed besides IP addresses, localhost and the bind host "
        "(DNS-rebinding protection; repeatable; '*' allows any)",
    )
    t.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds an HTTP request body may take to arrive (default: 30)",
    )
    t.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds an HTTP client may take to send a request's headers (default: 10)",
    )
    t.add_argument(
        "--session-idle-timeout",
        type=float,
        default=1800.0,
        metavar="S",
        help="end an HTTP session unused for this long (default: 1800; 0: never)",
    )
    t.add_argument(
        "--client-token",
        metavar="TOKEN",
        help="require 'Authorization: Bearer TOKEN' from HTTP clients",
    )

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
    d.add_argument("--mqtt-username", metavar="NAME", help="the bridge's own broker user name")
    d.add_argument(
        "--mqtt-password-env",
        metavar="VAR",
        help="environment variable holding the broker password (not on the command line: "
        "other local users can read it there)",
    )
    d.add_argument(
        "--auth-token",
        action="append",
        default=[],
        metavar="[DEVICE_ID=]TOKEN",
        help="bearer token devices must present to the gateway (repeatable; DEVICE_ID= binds it to one)",
    )
    d.add_argument("--hmac-secret", metavar="SECRET", help="authenticate gateway devices with HMAC tokens")
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

    n = parser.add_argument_group("tools")
    n.add_argument(
        "--prefix-tools",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="name tools <device>__<tool> (default: on when more than one device can connect)",
    )
    n.add_argument("--user-tools", action="store_true", help="also expose tools the spec marks user-only")
    n.add_argument(
        "--raw-tool-names",
        action="store_true",
        help="export tool names unchanged (default: LLM-safe names, self.a.b -> self__a__b)",
    )
    n.add_argument(
        "--no-validate",
        dest="validate",
        action="store_false",
        help="forward arguments without checking them against the tool's schema first",
    )
    parser.add_argument("--log-level", default="INFO", help="stderr log level (default: INFO)")


def _prefix_default(args: argparse.Namespace) -> bool:
    if args.prefix_tools is not None:
        return bool(args.prefix_tools)
    many_can_connect = args.gateway_port is not None or args.mqtt_broker is not None
    if many_can_connect and len(args.device) != 1:
        return True
    sources = len(args.device_cmd) + len(args.serial) + (1 if many_can_connect else 0)
    return sources > 1


def _broker_address(value: str) -> tuple[str, int]:
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


def _is_loopback(host: str) -> bool:
    """Is ``host`` (a bind address) reachable from this machine only?"""
    name = host.strip("[]").lower()
    if name in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a name that may resolve anywhere, or a wildcard: assume reachable


def _url_host(host: str) -> str:
    """A bind address as a URL's host part (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _unique_id(device_id: str, taken: set[str]) -> str:
    """``device_id``, or ``<device_id>-2``, ``-3``... when an earlier --device-cmd device has
    it (two simulators of one firmware report the same name): the command line's order
    decides, so the ids stay the same across restarts."""
    candidate, n = device_id, 1
    while candidate in taken:
        n += 1
        candidate = f"{device_id}-{n}"
    return candidate


def _auth(args: argparse.Namespace) -> Any:
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


async def run(args: argparse.Namespace) -> int:
    """Start the device connections and serve MCP until the client leaves; exit status."""
    # force: ``codegen`` configures logging (WARNING) before it calls this, and without
    # it --log-level and the endpoint/device lines below were silently dropped.
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        force=True,
    )
    protocol_out = protect_stdout() if args.transport == "stdio" else None
    if not (args.device_cmd or args.serial or args.gateway_port is not None or args.mqtt_broker):
        log.error(
            "no devices: give --device-cmd CMD, --serial PORT, --gateway-port PORT or --mqtt-broker HOST"
        )
        return 2
    if len(args.device_id) > len(args.device_cmd):
        log.error(
            "%d --device-id for %d --device-cmd: give one id per command, in the same order",
            len(args.device_id),
            len(args.device_cmd),
        )
        return 2
    try:
        broker = _broker_address(args.mqtt_broker) if args.mqtt_broker else None
    except ValueError as exc:
        log.error("%s", exc)
        return 2

    bridge = Bridge(
        prefix_tools=_prefix_default(args),
        user_tools=args.user_tools,
        device_ids=args.device or None,
        call_timeout=args.call_timeout,
        validate_arguments=args.validate,
        safe_names=not args.raw_tool_names,
        instructions="Tools of connected ESP32 devices (mcpgen bridge).",
    )
    devices: list[Any] = []
    background: list[asyncio.Task[Any]] = []
    gateways: list[Any] = []
    try:
        try:
            from mcpgen import runtime
        except ImportError as exc:  # pragma: no cover - the runtime ships with the bridge
            log.error("the backend runtime is not importable: %s", exc)
            return 1
        for index, command in enumerate(args.device_cmd):
            argv = shlex.split(command)
            given = args.device_id[index] if index < len(args.device_id) else None
            try:
                device = await runtime.connect_process(argv, call_timeout=args.call_timeout, device_id=given)
            except Exception as exc:
                log.error("could not start device %r: %s", command, exc)
                return 1
            device.device_id = _unique_id(device.device_id, {d.device_id for d in devices})
            devices.append(device)
            bridge.add_device(device)
        for url in args.serial:
            try:
                device = await runtime.connect_serial(
                    url, baudrate=args.baudrate, call_timeout=args.call_timeout
                )
            except Exception as exc:
                log.error("could not open the device on serial port %s: %s", url, exc)
                return 1
            devices.append(device)
            bridge.add_device(device)
        if args.gateway_port is not None:
            gateway = runtime.Gateway(
                host=args.gateway_host,
                port=args.gateway_port,
                auth=_auth(args),
                call_timeout=args.call_timeout,
            )
            await gateway.start()
            gateways.append(gateway)
            log.info("device gateway listening on %s:%s", args.gateway_host, gateway.port)
            if _auth(args) is None and not _is_loopback(args.gateway_host):
                log.warning(
                    "the device gateway on %s:%s accepts devices without authentication: anyone "
                    "who can reach it can connect a device whose tools MCP clients will call "
                    "(give --auth-token or --hmac-secret, or bind it to 127.0.0.1)",
                    args.gateway_host,
                    gateway.port,
                )
        if broker is not None:
            from mcpgen.runtime.mqtt import MqttGateway

            password = os.environ.get(args.mqtt_password_env) if args.mqtt_password_env else None
            mqtt = MqttGateway(
                broker[0],
                broker[1],
                topic_prefix=args.mqtt_prefix,
                username=args.mqtt_username,
                password=password,
                auth=_auth(args),
                call_timeout=args.call_timeout,
            )
            try:
                await mqtt.start()
            except Exception as exc:
                log.error("could not use the MQTT broker %s:%d: %s", broker[0], broker[1], exc)
                return 1
            gateways.append(mqtt)
            log.info("MQTT device gateway on %s", mqtt.url)

        async def accept(source: Any) -> None:
            async for device in source.devices():
                devices.append(device)
                bridge.add_device(device)

        background.extend(asyncio.ensure_future(accept(g)) for g in gateways)
        background.append(asyncio.ensure_future(bridge.watch()))

        log.debug("exported tools: %s", ", ".join(bridge.tool_names()) or "none yet")
        if args.transport == "stdio":
            log.info("serving %d tools over stdio", len(bridge.tool_names()))
            await serve_stdio(bridge, stdout=protocol_out)
        else:
            await serve_http(
                bridge,
                host=args.host,
                port=args.port,
                path=args.path,
                allowed_origins=args.allowed_origin,
                allowed_hosts=None if args.allowed_host is None else [
                    *default_allowed_hosts(args.host), *args.allowed_host
                ],
                client_token=args.client_token,
                body_timeout=args.body_timeout,
                header_timeout=args.header_timeout,
                session_idle_timeout=args.session_idle_timeout or None,
                ready=lambda port: log.info(
                    "MCP endpoint: http://%s:%d%s", _url_host(args.host), port, args.path
                ),
            )
        return 0
    finally:
        await bridge.close()
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        for device in devices:
            await _call_maybe_async(device.close)
        for gateway in gateways:
            await _call_maybe_async(gateway.close)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcpgen.runtime.bridge", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return 130
