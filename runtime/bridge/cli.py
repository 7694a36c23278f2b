"""``codegen bridge``: serve devices' tools to standard MCP clients.

``codegen bridge`` (``codegen/cli.py``) calls :func:`add_arguments` on its sub-parser
and ``asyncio.run(run(args))``; ``python -m mcpgen.runtime.bridge`` does the same on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from mcpgen.secret_options import SecretError, SecretOption, add_secret_argument, resolve_secret

from .attach import AttachError, DeviceSources, add_device_arguments, many_can_connect, url_host, usage_error
from .core import Bridge
from .elicit import OPT_OUT_FLAG
from .http import default_allowed_hosts, serve_http
from .stdio import protect_stdout, serve_stdio

log = logging.getLogger("mcpgen.runtime.bridge")

#: What HTTP clients must present: ``--client-token-file FILE``, ``MCPGEN_CLIENT_TOKEN`` or
#: (warned) ``--client-token``.
CLIENT_TOKEN = SecretOption("--client-token", "MCPGEN_CLIENT_TOKEN", "the token HTTP clients must present")


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
    add_secret_argument(
        t, CLIENT_TOKEN, metavar="TOKEN", help="require 'Authorization: Bearer TOKEN' from HTTP clients"
    )

    add_device_arguments(parser)

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
    n.add_argument(
        OPT_OUT_FLAG,
        dest="allow_without_elicitation",
        action="store_true",
        help="let clients without MCP elicitation call tools that ask the person (spec from_human, "
        "confirm): the model then supplies those values and nothing is confirmed (default: such a "
        "call is refused with an error naming them)",
    )
    parser.add_argument("--log-level", default="INFO", help="stderr log level (default: INFO)")


def configure_logging(level: str) -> None:
    """Log to stderr at ``level`` (a name such as INFO; unknown names mean INFO)."""
    # force: ``codegen`` configures logging (WARNING) before it calls run(), and without
    # it --log-level and the endpoint/device lines were silently dropped.
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, str(level).upper(), logging.INFO),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        force=True,
    )


async def start_sources(sources: DeviceSources, log: logging.Logger) -> bool:
    """Start the device connections; False (the reason logged on ``log``) if they cannot start."""
    try:
        await sources.start()
    except AttachError as exc:
        log.error("%s", exc)
        return False
    return True


async def cancel_all(tasks: list[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until they have ended (their errors dropped)."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def run_main(
    run: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
    add_arguments: Callable[[argparse.ArgumentParser], None],
    prog: str,
    description: str | None,
    argv: list[str] | None,
) -> int:
    """``python -m`` entry of the bridge and the console: parse ``argv``, run; exit status."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return 130


def _prefix_default(args: argparse.Namespace) -> bool:
    if args.prefix_tools is not None:
        return bool(args.prefix_tools)
    return many_can_connect(args)


async def run(args: argparse.Namespace) -> int:
    """Start the device connections and serve MCP until the client leaves; exit status."""
    configure_logging(args.log_level)
    protocol_out = protect_stdout() if args.transport == "stdio" else None
    problem = usage_error(args)  # a usage error (exit 2) before anything starts
    if problem is None:
        try:
            resolve_secret(args, CLIENT_TOKEN)
        except SecretError as exc:
            problem = str(exc)
    if problem is not None:
        log.error("%s", problem)
        return 2

    bridge = Bridge(
        prefix_tools=_prefix_default(args),
        user_tools=args.user_tools,
        device_ids=args.device or None,
        call_timeout=args.call_timeout,
        validate_arguments=args.validate,
        safe_names=not args.raw_tool_names,
        instructions="Tools of connected ESP32 devices (mcpgen bridge).",
        # ``codegen bridge --spec`` sets it (loading a spec takes the generator)
        template_schemas=getattr(args, "template_schemas", None),
        prompts=getattr(args, "prompts", None) or (),
        allow_without_elicitation=args.allow_without_elicitation,
    )
    sources = DeviceSources(
        args, lambda device, _transport: bridge.add_device(device), open_gateway_risk="MCP clients will call"
    )
    background: list[asyncio.Task[Any]] = []
    try:
        if not await start_sources(sources, log):
            return 1
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
                allowed_hosts=None
                if args.allowed_host is None
                else [*default_allowed_hosts(args.host), *args.allowed_host],
                client_token=args.client_token,
                body_timeout=args.body_timeout,
                header_timeout=args.header_timeout,
                session_idle_timeout=args.session_idle_timeout or None,
                ready=lambda port: log.info(
                    "MCP endpoint: http://%s:%d%s", url_host(args.host), port, args.path
                ),
            )
        return 0
    finally:
        await bridge.close()
        await cancel_all(background)
        await sources.close()


def main(argv: list[str] | None = None) -> int:
    return run_main(run, add_arguments, "python -m mcpgen.runtime.bridge", __doc__, argv)
