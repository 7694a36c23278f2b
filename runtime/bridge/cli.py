"""``codegen bridge``: serve devices' tools to standard MCP clients.

The lead's ``codegen`` command calls :func:`add_arguments` on its ``bridge`` sub-parser
and ``asyncio.run(run(args))``; ``python -m mcpgen.runtime.bridge`` does the same on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import shlex
import sys
from typing import Any

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
        "--gateway-port",
        type=int,
        metavar="PORT",
        help="accept devices over WebSocket on this port (the xiaozhi protocol)",
    )
    d.add_argument(
        "--gateway-host", default="127.0.0.1", help="gateway address (use 0.0.0.0 for devices on the LAN)"
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
    sources = len(args.device_cmd) + (1 if args.gateway_port is not None else 0)
    if args.gateway_port is not None and len(args.device) != 1:
        return True
    return sources > 1


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
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    protocol_out = protect_stdout() if args.transport == "stdio" else None
    if not args.device_cmd and args.gateway_port is None:
        log.error("no devices: give --device-cmd CMD and/or --gateway-port PORT")
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
    gateway: Any = None
    try:
        try:
            from mcpgen import runtime
        except ImportError as exc:  # pragma: no cover - the runtime ships with the bridge
            log.error("the backend runtime is not importable: %s", exc)
            return 1
        for command in args.device_cmd:
            argv = shlex.split(command)
            try:
                device = await runtime.connect_process(argv, call_timeout=args.call_timeout)
            except Exception as exc:
                log.error("could not start device %r: %s", command, exc)
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
            log.info("device gateway listening on %s:%s", args.gateway_host, gateway.port)

            async def accept() -> None:
                async for device in gateway.devices():
                    devices.append(device)
                    bridge.add_device(device)

            background.append(asyncio.ensure_future(accept()))
        background.append(asyncio.ensure_future(bridge.watch()))

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
                ready=lambda port: log.info("MCP endpoint: http://%s:%d%s", args.host, port, args.path),
            )
        return 0
    finally:
        await bridge.close()
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        for device in devices:
            await _call_maybe_async(device.close)
        if gateway is not None:
            await _call_maybe_async(gateway.close)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcpgen.runtime.bridge", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return 130
