"""An MCP SDK client's ``tools/call`` through the bridge against the SDK's own server.

``python -m benchmarks.bridge_sdk`` starts four servers: the bridge (``mcpgen.runtime
.bridge``, one in-process device that answers at once, so only the bridge's own work is
measured) and the official ``mcp`` SDK's ``MCPServer`` with the same tool, each over stdio
(the client starts it) and over Streamable HTTP (uvicorn, the SDK's default stateful
sessions), plus the bridge over HTTP with calls sent through the SDK's session as before
issue 43 (``StreamableHttpApp.plain_json_calls = False``). One SDK ``Client`` per server
(``mode="legacy"``: an initialize handshake, then calls in its session), all in this
process. Rounds are interleaved in random order; in each, every client makes ``calls``
sequential ``tools/call`` and the server process's CPU time (``/proc/<pid>/stat``, user +
system) per call is recorded. Ratios are medians over paired rounds.

``--write`` writes ``benchmarks/bridge_sdk.md`` (section 10 of docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
OUT = HERE / "bridge_sdk.md"
ROWS = ("bridge stdio", "SDK server stdio", "bridge HTTP", "bridge HTTP (SDK path)", "SDK server HTTP")
TOOL = {"bridge": "self__light__set_rgb", "sdk": "set_rgb"}
_TICK = os.sysconf("SC_CLK_TCK")


# -- the servers (child processes) --------------------------------------------------------


class _Tool:
    name = "self.light.set_rgb"
    description = "Set the light colour."
    input_schema = {
        "type": "object",
        "properties": {c: {"type": "integer", "minimum": 0, "maximum": 255} for c in "rgb"},
        "required": ["r", "g", "b"],
    }
    user_only = False
    raw: dict[str, Any] = {}


class _Lamp:
    """A device in the bridge's process that answers at once (DeviceLike)."""

    device_id = "lamp"
    tools = [_Tool()]
    closed = False

    async def call_raw(self, name: str, arguments: Any, *, timeout: Optional[float] = None) -> dict[str, Any]:
        a = arguments or {}
        return {"content": [{"type": "text", "text": f"rgb {a.get('r')},{a.get('g')},{a.get('b')}"}]}

    def on_notification(self, callback: Any) -> Any:
        return lambda: None


def serve(kind: str, transport: str, port: int, sdk_path: bool) -> None:
    if kind == "sdk":
        from mcp.server.mcpserver import MCPServer

        # WARNING: no uvicorn access-log line per request (INFO, its default, writes one;
        # the bridge's uvicorn writes none), in the SDK server's favour
        server = MCPServer("sdk-lamp", log_level="WARNING")

        @server.tool()
        def set_rgb(r: int, g: int, b: int) -> str:
            """Set the light colour."""
            return f"rgb {r},{g},{b}"

        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host="127.0.0.1", port=port)
        return
    from mcpgen.runtime.bridge import Bridge, serve_http, serve_stdio
    from mcpgen.runtime.bridge.http import StreamableHttpApp

    bridge = Bridge()
    bridge.add_device(_Lamp())  # type: ignore[arg-type]
    if transport == "stdio":
        asyncio.run(serve_stdio(bridge))
    else:
        StreamableHttpApp.plain_json_calls = not sdk_path
        asyncio.run(serve_http(bridge, host="127.0.0.1", port=port))


# -- the driver ----------------------------------------------------------------------------


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _child_pid(marker: str) -> int:
    """The pid of this process's child whose command line contains ``marker``."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and marker in cmd:
            return int(entry)
    raise RuntimeError(f"no child process running {marker!r}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _args(kind: str, transport: str, port: int = 0, sdk_path: bool = False) -> list[str]:
    args = ["-m", "benchmarks.bridge_sdk", "serve", "--kind", kind, "--transport", transport]
    args += ["--port", str(port)]
    return args + (["--sdk-path"] if sdk_path else [])


async def _wait_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def measure(rounds: int, calls: int, log: Any = print) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    procs: list[subprocess.Popen[bytes]] = []
    clients: dict[str, Any] = {}
    pids: dict[str, int] = {}
    try:
        async with contextlib.AsyncExitStack() as stack:
            for row in ROWS:
                kind = "sdk" if row.startswith("SDK") else "bridge"
                sdk_path = row.endswith("(SDK path)")
                if "stdio" in row:
                    params = StdioServerParameters(command=sys.executable, args=_args(kind, "stdio"), env=env)
                    clients[row] = await stack.enter_async_context(
                        Client(params, mode="legacy", read_timeout_seconds=60)
                    )
                    pids[row] = _child_pid(" ".join(_args(kind, "stdio")))
                else:
                    port = _free_port()
                    proc = subprocess.Popen(
                        [sys.executable, *_args(kind, "http", port, sdk_path)],
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,  # uvicorn's start and stop lines
                    )
                    procs.append(proc)
                    pids[row] = proc.pid
                    await _wait_port(port)
                    clients[row] = await stack.enter_async_context(
                        Client(f"http://127.0.0.1:{port}/mcp", mode="legacy", read_timeout_seconds=60)
                    )
            per_round: dict[str, list[float]] = {row: [] for row in ROWS}
            wall: dict[str, list[float]] = {row: [] for row in ROWS}
            for row in ROWS:  # warm-up
                tool = TOOL["sdk" if row.startswith("SDK") else "bridge"]
                for i in range(min(calls, 50)):
                    await clients[row].call_tool(tool, {"r": i % 256, "g": 1, "b": 2})
            rng = random.Random(43)
            order = list(ROWS)
            for _ in range(rounds):
                rng.shuffle(order)
                for row in order:
                    client = clients[row]
                    tool = TOOL["sdk" if row.startswith("SDK") else "bridge"]
                    c0, t0 = _cpu(pids[row]), time.perf_counter()
                    for i in range(calls):
                        result = await client.call_tool(tool, {"r": i % 256, "g": 1, "b": 2})
                    t1, c1 = time.perf_counter(), _cpu(pids[row])
                    assert result.content[0].text == f"rgb {(calls - 1) % 256},1,2", result
                    per_round[row].append((c1 - c0) / calls * 1e6)
                    wall[row].append((t1 - t0) / calls * 1e6)
    finally:  # the clients ended their sessions first (the stack closed)
        for proc in procs:
            proc.terminate()
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)

    def paired(a: str, b: str) -> float:
        """Median of per-round ratios; NaN when no round of ``b`` used a clock tick (10 ms)."""
        xs = [x / y for x, y in zip(per_round[a], per_round[b], strict=True) if y > 0]
        return statistics.median(xs) if xs else float("nan")

    out = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": os.getloadavg()[0],
        "rounds": rounds,
        "calls": calls,
        "server_cpu_us_per_call": {row: statistics.median(v) for row, v in per_round.items()},
        "wall_us_per_call": {row: statistics.median(v) for row, v in wall.items()},
        "ratios": {
            "bridge / SDK server, stdio": paired("bridge stdio", "SDK server stdio"),
            "bridge / SDK server, HTTP": paired("bridge HTTP", "SDK server HTTP"),
            "bridge (SDK path) / SDK server, HTTP": paired("bridge HTTP (SDK path)", "SDK server HTTP"),
            "bridge / bridge (SDK path), HTTP": paired("bridge HTTP", "bridge HTTP (SDK path)"),
        },
    }
    for row in ROWS:
        log(
            f"  {row}: server CPU {out['server_cpu_us_per_call'][row]:,.0f} us/call, "
            f"round trip {out['wall_us_per_call'][row]:,.0f} us"
        )
    ratios = ", ".join(f"{k} {v:.2f}x" for k, v in out["ratios"].items())
    log(f"  ratios (server CPU per call, paired rounds): {ratios}")
    return out


def render(res: dict[str, Any]) -> str:
    lines = [
        'An official `mcp` SDK `Client` (`mode="legacy"`: initialize, then calls in the session) '
        "calls one tool through the bridge (one device in the bridge's process, answering at once) "
        "and through the SDK's own `MCPServer` with the same tool, over stdio and over Streamable "
        "HTTP (uvicorn; the SDK server with its defaults, stateful sessions and SSE answers, but "
        '`log_level="WARNING"`: no access-log line per request). '
        "*bridge HTTP (SDK path)* is the bridge with calls sent through the SDK's session as before "
        "issue 43 (`StreamableHttpApp.plain_json_calls = False`: the SDK's SSE answer re-emitted as "
        "JSON). Server process CPU (user + system) per call; written by "
        "`python -m benchmarks.bridge_sdk --write` (code: `benchmarks/bridge_sdk.py`), "
        f"{res['rounds']} interleaved rounds x {res['calls']} sequential calls per server, "
        f"{res.get('when', '?')}, load average {res.get('load', 0):.1f} on 2 cores. "
        "Target (issue 43): ≤ 0.6× the SDK server's CPU on HTTP.",
        "",
        "| server | server CPU µs / call (median) | round trip µs (median) |",
        "|---|---|---|",
    ]
    for row in ROWS:
        lines.append(
            f"| {row} | {res['server_cpu_us_per_call'][row]:,.0f} | {res['wall_us_per_call'][row]:,.0f} |"
        )
    lines += ["", "| ratio (median of paired rounds) | server CPU per call |", "|---|---|"]
    lines += [f"| {k} | {v:.2f}× |" for k, v in res["ratios"].items()]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="cmd")
    s = sub.add_parser("serve", help="(internal) one server")
    s.add_argument("--kind", choices=("bridge", "sdk"), required=True)
    s.add_argument("--transport", choices=("stdio", "http"), required=True)
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--sdk-path", action="store_true")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name}")
    args = ap.parse_args(argv)
    if args.cmd == "serve":
        serve(args.kind, args.transport, args.port, args.sdk_path)
        return 0
    res = asyncio.run(measure(args.rounds, args.calls))
    if args.write:
        OUT.write_text(render(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
