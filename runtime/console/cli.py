"""``codegen console``: a web console for the devices named on the command line.

Devices are attached exactly as ``codegen bridge`` attaches them
(:mod:`mcpgen.runtime.bridge.attach`); ``python -m mcpgen.runtime.console`` runs the same.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
import sys
from typing import Any

from mcpgen.runtime.bridge.attach import (
    DeviceSources,
    add_device_arguments,
    url_host,
    usage_error,
)
from mcpgen.runtime.bridge.cli import cancel_all, configure_logging, run_main, start_sources
from mcpgen.runtime.bridge.http import default_allowed_hosts
from mcpgen.runtime.links import fdlimit
from mcpgen.secret_options import SecretError, SecretOption, add_secret_argument, resolve_secret

from .console import Console
from .metrics import FleetMetrics
from .server import serve_console

log = logging.getLogger("mcpgen.runtime.console")

#: The page's token: ``--token-file FILE``, ``MCPGEN_CONSOLE_TOKEN`` or (warned) ``--token``.
PAGE_TOKEN = SecretOption("--token", "MCPGEN_CONSOLE_TOKEN", "the console's page token")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the console's options (the page, then the devices) to ``parser``."""
    w = parser.add_argument_group("the web page")
    w.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)"
    )
    w.add_argument("--port", type=int, default=8780, help="port (default: 8780; 0 picks a free one)")
    add_secret_argument(
        w,
        PAGE_TOKEN,
        metavar="TOKEN",
        help="what the browser (?token=) and scripts (Authorization: Bearer) must present "
        "(without it: a random one, printed with the URL)",
    )
    w.add_argument(
        "--no-token",
        action="store_true",
        help="no token at all: any local user (and program) of this machine may call tools",
    )
    w.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="Host header name allowed besides IP addresses, localhost and the bind host (repeatable)",
    )
    w.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="browser Origin allowed besides the console's own (repeatable)",
    )
    w.add_argument("--user-tools", action="store_true", help="also show tools the spec marks user-only")
    add_device_arguments(parser)
    parser.add_argument("--log-level", default="INFO", help="stderr log level (default: INFO)")


async def run(args: argparse.Namespace) -> int:
    """Attach the devices and serve the console until interrupted; exit status."""
    configure_logging(args.log_level)  # as the bridge does (see there why it forces)
    problem = usage_error(args)  # a usage error (exit 2) before anything starts
    if problem is None and not args.no_token:
        try:
            resolve_secret(args, PAGE_TOKEN)
        except SecretError as exc:
            problem = str(exc)
    if problem is not None:
        log.error("%s", problem)
        return 2
    # Every page, event stream and device holds a descriptor: as the gateway does, take
    # the most the hard limit allows (a soft limit of 1024 is common).
    fdlimit.raise_nofile_limit()
    token = None if args.no_token else (args.token or secrets.token_urlsafe(16))
    metrics = FleetMetrics()
    console = Console(
        user_tools=args.user_tools,
        call_timeout=args.call_timeout,
        metrics=metrics,
        device_ids=set(args.device) or None,
    )
    sources = DeviceSources(args, console.add_device, open_gateway_risk="the console will show and call")
    background: list[asyncio.Task[Any]] = []
    try:
        if not await start_sources(sources, log):
            return 1
        for hub, transport in sources.hubs:
            metrics.watch_rejections(hub, transport)
        background.append(metrics.start_loop_monitor())
        background.append(asyncio.ensure_future(console.watch()))

        def ready(port: int) -> None:
            shown = url_host(args.host)
            query = f"?token={token}" if token else ""
            # printed whatever the log level: what a person (and a test) looks for; the page last
            for hub, transport in sources.hubs:
                gateway = f"ws://{url_host(args.gateway_host)}:{hub.port}/"
                where = gateway if transport == "websocket" else hub.url
                print(f"devices ({transport}): {where}", file=sys.stderr, flush=True)
            print(f"metrics: http://{shown}:{port}/metrics", file=sys.stderr, flush=True)
            print(f"console: http://{shown}:{port}/{query}", file=sys.stderr, flush=True)

        await serve_console(
            console,
            host=args.host,
            port=args.port,
            token=token,
            allowed_hosts=[*default_allowed_hosts(args.host), *args.allowed_host],
            allowed_origins=args.allowed_origin,
            ready=ready,
        )
        return 0
    finally:
        await console.close()
        await cancel_all(background)
        await metrics.close()
        await sources.close()


def main(argv: list[str] | None = None) -> int:
    return run_main(run, add_arguments, "python -m mcpgen.runtime.console", __doc__, argv)
