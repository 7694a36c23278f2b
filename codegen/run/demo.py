"""``codegen demo``: the whole system in one command, on a host-simulated device.

Builds the default spec for the host, starts a device gateway, launches the simulator
as a WebSocket device, then calls every tool through the generated typed bindings and
prints tool, arguments, result and round-trip time.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any, Optional

from mcpgen.codegen import resources
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.run.simulator import launch_simulator
from mcpgen.codegen.spec.examples import example_arguments, example_call
from mcpgen.codegen.spec.loader import SpecErrors, load_spec
from mcpgen.codegen.spec.names import device_class, device_slug
from mcpgen.codegen.targets.base import BuildContext, BuildOptions
from mcpgen.codegen.targets.host import compile_simulator
from mcpgen.codegen.targets.python import import_bindings, make_bindings


def find_default_spec() -> Path:
    """The demo spec, ``default_device.yaml``, as shipped inside the package."""
    return resources.example_spec("default_device")


def _step(n: int, total: int, text: str) -> None:
    print(f"[{n}/{total}] {text}", flush=True)


def _detail(text: str) -> None:
    print("      " + text, flush=True)


def _short(value: Any, width: int) -> str:
    if isinstance(value, (dict, list)):
        text = json.dumps(value, separators=(",", ":"))
    else:
        text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(rows: list[tuple[str, str, str, str]]) -> str:
    header = ("tool", "arguments", "result", "rtt ms")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    line = "  ".join(f"{{:<{w}}}" for w in widths[:3]) + f"  {{:>{widths[3]}}}"
    out = [line.format(*header), "  ".join("-" * w for w in widths)]
    out += [line.format(*r) for r in rows]
    return "\n".join(out)


async def _show_checks(spec: Any, device: Any, bound: Any) -> None:
    """Out-of-range arguments: refused locally by the bindings, and by the device itself."""
    from mcpgen.runtime.errors import McpDeviceError

    bounded = [(t, p) for t in spec.tools for p in t.params if p.type == "integer" and p.maximum is not None]
    if not bounded:
        return
    tool, param = bounded[0]
    args = {**example_arguments(tool, spec.types), param.name: int(param.maximum) + 1}
    method: Any = bound
    for part in tool.path:
        method = getattr(method, part)
    try:
        await method(**args)
    except McpDeviceError as exc:
        print(f"bindings:  {'.'.join(tool.path)}(**{args}) -> {type(exc).__name__}: {exc} (nothing sent)")
    try:
        await device.call(tool.name, args, validate=False)
    except McpDeviceError as exc:
        print(f"on device: the same call with validate=False -> {type(exc).__name__}: {exc}")
    print()


async def run_demo(spec_path: Optional[Path], outdir: Path) -> int:
    from mcpgen.runtime import Gateway, TokenAuth
    from mcpgen.runtime.errors import McpDeviceError

    spec_path = spec_path or find_default_spec()
    try:
        spec = load_spec(spec_path)
    except SpecErrors as exc:
        print("\n".join(e.format() for e in exc.errors), file=sys.stderr)
        return 1
    total = 5
    _step(
        1,
        total,
        f"spec {spec_path}: {spec.device.name} {spec.device.version}, "
        f"{len(spec.tools)} tools, fingerprint {spec.fingerprint}",
    )
    ctx = BuildContext(spec, spec_path, outdir, BuildOptions(log=_detail))
    _step(2, total, "compiling the simulated device (g++) ...")
    try:
        exe = await asyncio.to_thread(compile_simulator, ctx)
        _step(3, total, "compiling the typed Python bindings (Cython) ...")
        pydir = await asyncio.to_thread(make_bindings, ctx)
    except BuildError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    module = import_bindings(pydir, f"{device_slug(spec.device.name)}_tools")
    bindings_cls = getattr(module, device_class(spec.device.name))

    token = secrets.token_hex(16)
    device_log = outdir / "simulator.log"
    async with Gateway(
        host="127.0.0.1",
        port=0,
        auth=TokenAuth({"*": token}),
        fingerprint=bindings_cls.FINGERPRINT,
        policy="strict",
    ) as gateway:
        url = f"ws://127.0.0.1:{gateway.port}/xiaozhi/v1/"
        _step(4, total, f"gateway on {url}; launching the simulator as device demo-01 (log: {device_log})")
        with open(device_log, "wb") as log_file:
            proc = await launch_simulator(exe, url, token, "demo-01", output=log_file)
            try:
                device = await gateway.wait_for_device(timeout=20.0)
                info = device.server_info
                _detail(
                    f"connected: {info.get('name')} {info.get('version')}, protocol "
                    f"{device.protocol_version}, fingerprint {device.fingerprint} (matches the bindings)"
                )
                bound = bindings_cls(device)
                _step(5, total, f"calling every tool through {module.__name__}.{bindings_cls.__name__}")
                rows = []
                for tool in spec.tools:
                    args, human = example_call(tool, spec.types)
                    method: Any = bound
                    for part in tool.path:
                        method = getattr(method, part)
                    started = time.perf_counter()
                    try:
                        result: Any = await method(**args, **({"human": human} if human else {}))
                    except McpDeviceError as exc:
                        result = f"{type(exc).__name__}: {exc}"
                    rtt = (time.perf_counter() - started) * 1000
                    name = tool.name + (" (user-only)" if tool.user_only else "")
                    rows.append((name, _short(args, 40), _short(result, 60), f"{rtt:.2f}"))
                print()
                print(format_table(rows))
                print()
                await _show_checks(spec, device, bound)
                print(
                    f"{len(rows)} tools called on {device.device_id}; the device lists "
                    f"{len(device.tools)} tools. Bindings: {pydir}, simulator: {exe}"
                )
            finally:
                if proc.returncode is None:
                    proc.terminate()
                await proc.wait()
    return 0
