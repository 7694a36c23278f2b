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

from device_testlib import bindings_module, host_simulator

from mcpgen.codegen.run.simulator import launch_simulator
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.model import Spec
from mcpgen.codegen.spec.names import device_class

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


#: Every build of this session by spec (its path and text): the folders that build through
#: here (tests/e2e, tests/console) share one simulator and one bindings module per spec
#: instead of each compiling its own (two to three minutes each on a loaded 2-core machine).
#: Nothing writes into a build once made: the tests run the simulator and import the bindings.
_BUILT: dict[tuple[Path, bytes], Built] = {}


def build(name: str, spec_path: Path, out: Path) -> Built:
    """The simulator and bindings of ``spec_path``, built into ``out`` unless this session
    built the same spec already (then that build, wherever it is)."""
    key = (spec_path.resolve(), spec_path.read_bytes())
    if key in _BUILT:
        return _BUILT[key]
    exe = host_simulator(spec_path, out)
    module = bindings_module(spec_path, out, compile=not PURE)
    _BUILT[key] = Built(load_spec(spec_path), spec_path, exe, module)
    return _BUILT[key]


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
