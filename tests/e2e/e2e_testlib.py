"""Building and launching the real simulator for the end-to-end tests."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from mcpgen.codegen.run.simulator import launch_simulator
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.names import device_class, device_slug
from mcpgen.codegen.targets.host import build_host
from mcpgen.codegen.targets.python import build_bindings, import_bindings

REPO = Path(__file__).resolve().parents[2]
PURE = os.environ.get("MCPGEN_PURE_PYTHON") == "1"


@dataclass
class Built:
    spec: Spec
    spec_path: Path
    exe: Path
    module: ModuleType

    @property
    def bindings(self) -> Any:
        return getattr(self.module, device_class(self.spec.device.name))


def build(name: str, spec_path: Path, out: Path) -> Built:
    exe = build_host(spec_path, out, log=lambda _m: None)
    pydir = build_bindings(spec_path, out, log=lambda _m: None, compile=not PURE)
    spec = load_spec(spec_path)
    module = import_bindings(pydir, f"{device_slug(spec.device.name)}_tools")
    return Built(spec, spec_path, exe, module)


class SimProcess:
    """A simulator process connected to a gateway over WebSocket."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    def stop(self) -> None:  # SIGSTOP: the device stays connected but never answers
        self.proc.send_signal(19)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()


@contextlib.asynccontextmanager
async def launch_ws(
    exe: Path, url: str, token: str, device_id: str, extra: tuple[str, ...] = ()
) -> AsyncIterator[SimProcess]:
    proc = await launch_simulator(exe, url, token, device_id, *extra)
    sim = SimProcess(proc)
    try:
        yield sim
    finally:
        sim.kill()
        await proc.wait()
