"""``codegen selftest`` on the two emulated MCUs (Cortex-M3 ``mps2-an385``, RV32IMC ``virt``):
the example specs' images booted in QEMU, their MCP UART given as ``--port socket://...``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from device_testlib import DEFAULT_SPEC, LAMP_SPEC

from mcpgen.codegen.run.run_qemu import boot
from mcpgen.codegen.targets.qemu import build_qemu
from mcpgen.codegen.targets.qemu_machines import MACHINES

pytestmark = pytest.mark.slow


def _toolchain(name: str) -> None:
    machine = MACHINES[name]
    missing = [t for t in (machine.qemu, machine.toolchain.prefix + "g++") if shutil.which(t) is None]
    if missing:
        msg = (
            f"{', '.join(missing)} not installed (apt-get install {machine.qemu_apt_package} "
            f"{machine.toolchain.apt_packages})"
        )
        if os.environ.get("CI"):
            pytest.fail(msg + " -- required in CI")
        pytest.skip(msg)


@pytest.mark.parametrize("spec", [DEFAULT_SPEC, LAMP_SPEC], ids=["default", "desk_lamp"])
@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_selftest_passes_on_the_emulated_mcu(machine: str, spec: Path, tmp_path: Path) -> None:
    _toolchain(machine)
    elf = build_qemu(spec, tmp_path / "build", target=machine, log=lambda _: None)
    with boot(elf, workdir=tmp_path / "run") as dev:
        r = subprocess.run(
            [
                "codegen",
                "selftest",
                "--port",
                dev.url,
                "--spec",
                str(spec),
                "--calls",
                "50",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    report = json.loads(r.stdout)
    failed = [c for c in report["checks"] if c["status"] == "FAIL"]
    assert r.returncode == 0 and not failed, failed
    print(f"{machine} {spec.stem}: {report['summary']} latency {report['latency']}")
