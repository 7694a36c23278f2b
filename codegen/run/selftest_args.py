"""The options of ``codegen selftest`` (:mod:`mcpgen.codegen.run.selftest`), apart so that
building the ``codegen`` parser does not load the checks."""

from __future__ import annotations

import argparse

DEFAULT_CALLS = 50


def add_arguments(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--port",
        help="the board's serial port, e.g. /dev/ttyUSB0, socket://host:port, or auto (found by its USB id)",
    )
    where.add_argument(
        "--device-cmd", help='a device on stdio, e.g. "build/sim/firmware/build/xiaozhi_sim-sim --stdio"'
    )
    where.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="start a gateway and test the first device that connects, e.g. 0.0.0.0:8765",
    )
    p.add_argument(
        "--spec",
        help="the spec the device was built from, e.g. toolspec/desk_lamp.yaml "
        "(fingerprint, tools, resources and events are compared with it)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    p.add_argument("--no-calls", action="store_true", help="call no tool (their effects on a real board)")
    p.add_argument(
        "--skip-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="do not call this tool (repeatable), e.g. --skip-tool self.light.set_power",
    )
    p.add_argument(
        "--call-destructive",
        action="store_true",
        help="also call tools marked destructive (e.g. a reboot); skipped by default",
    )
    p.add_argument(
        "--calls",
        type=int,
        default=DEFAULT_CALLS,
        help=f"round trips timed for the latency figures (default {DEFAULT_CALLS}), e.g. --calls 200",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=20.0,
        help="seconds to wait for the device to connect and answer initialize (default 20)",
    )
    p.add_argument("--baud", type=int, default=115200, help="serial baud rate (default 115200)")
