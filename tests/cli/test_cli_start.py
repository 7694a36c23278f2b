"""``codegen --help``, ``codegen check`` and a Tab start fast (issue 43): building the
parser imports neither the MCP SDK, uvicorn/starlette, the runtime, the build targets nor
Jinja2; a command that needs them imports them when it runs, and its options, help and
completion are still all there. How fast: ``python -m benchmarks.cli_start`` (no timed test).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_testlib import REPO, SPECS, codegen

#: What building the parser must not import: each is imported by a command that needs it.
HEAVY = (
    "mcp",  # the MCP SDK (and its schema package below): the bridge
    "mcp_types",
    "uvicorn",
    "starlette",
    "anyio",
    "jinja2",  # the emitters' templates: generate, build
    "picows",  # the runtime's transports
    "uvloop",
    "prometheus_client",  # the console's metrics
    "mcpgen.runtime",  # the runtime (its package imports the gateway and the hot path)
    "mcpgen.codegen.run",  # simulators, QEMU, OTA, serial
    "asyncio",  # a third of what was left (the commands that run a device or a server import it)
)


# The user's handlers file (read by `check` for its missing-handler warnings) and the
# writer live beside the targets, and import no emitter until a build writes a starter.
LIGHT_TARGET_MODULES = {
    "mcpgen.codegen.targets",
    "mcpgen.codegen.targets.user_handlers",
    "mcpgen.codegen.targets.writer",
}


def heavy(modules: set[str]) -> list[str]:
    targets = {m for m in modules if m.startswith("mcpgen.codegen.targets")} - LIGHT_TARGET_MODULES
    return sorted(targets | {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)})


def imported_by(
    *args: str, env: dict[str, str] | None = None
) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules ``python -m mcpgen ARGS`` imported (``-X importtime``), and how it ended."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mcpgen", *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    modules = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", proc.stderr, re.MULTILINE))
    assert "mcpgen.codegen.cli" in modules, proc.stderr[-2000:]
    return modules, proc


def tab(line: str, tmp_path: Path) -> tuple[list[str], set[str]]:
    """A Tab at the end of ``line`` as the shell script asks it (argcomplete's protocol):
    the completions offered, and the modules imported to answer."""
    out = tmp_path / "completions"
    env = dict(os.environ, _ARGCOMPLETE="1", COMP_LINE=line, COMP_POINT=str(len(line)),
               _ARGCOMPLETE_STDOUT_FILENAME=str(out), _ARGCOMPLETE_IFS="\n")  # fmt: skip
    modules, proc = imported_by(env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return sorted(w.strip() for w in out.read_text().splitlines() if w.strip()), modules


def test_building_the_parser_imports_nothing_heavy() -> None:
    code = (
        "import json, sys; from mcpgen.codegen.cli import build_parser; build_parser(); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert heavy(set(json.loads(proc.stdout))) == []


def test_help_and_check_import_nothing_heavy() -> None:
    modules, proc = imported_by("--help")
    assert proc.returncode == 0 and "bridge" in proc.stdout and "console" in proc.stdout
    assert heavy(modules) == []
    modules, proc = imported_by("check", str(SPECS / "desk_lamp.yaml"))
    assert proc.returncode == 0 and "desk_lamp.yaml: ok" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert heavy(modules) == []


@pytest.mark.skipif(importlib.util.find_spec("argcomplete") is None, reason="argcomplete is not installed")
def test_a_tab_imports_nothing_heavy_unless_the_command_needs_it(tmp_path: Path) -> None:
    offered, modules = tab("codegen ch", tmp_path)
    assert offered == ["check"] and heavy(modules) == []
    offered, modules = tab("codegen check --f", tmp_path)
    assert offered == ["--format"] and heavy(modules) == []
    # The bridge's options come from the runtime: read for a Tab on that command only.
    offered, modules = tab("codegen bridge --trans", tmp_path)
    assert offered == ["--transport"] and "mcpgen.runtime.bridge.cli" in modules
    offered, _ = tab("codegen bridge --transport ", tmp_path)
    assert offered == ["http", "stdio"]
    offered, _ = tab("codegen ota --max-f", tmp_path)
    assert offered == ["--max-failures"]
    offered, _ = tab("codegen run spec.yaml --target esp32", tmp_path)
    assert offered == ["esp32", "esp32c3", "esp32s3"]


def test_the_options_read_on_first_use_are_all_there() -> None:
    bridge = codegen("bridge", "--help")
    assert "--transport {stdio,http}" in bridge.stdout and "--spec YAML" in bridge.stdout
    console = codegen("console", "--help")
    assert "--device-cmd" in console.stdout and "--no-token" in console.stdout
    ota = codegen("ota", "--help")
    assert "--max-failures" in ota.stdout
    build = " ".join(codegen("build", "--help").stdout.split())
    assert "esp32s3 " in build and "%(targets)s" not in build  # the targets, each with its summary
    names = "host, qemu, qemu-riscv32, esp32, esp32s3, esp32c3, xiaozhi, python"
    assert f"one of {names} (default: host)" in build
    bad = codegen("run", "s.yaml", "--target", "nope")
    assert bad.returncode == 2 and "invalid choice: 'nope' (choose from 'host', 'qemu'" in bad.stderr
    flash = " ".join(codegen("flash", "--help").stdout.split())
    assert "--board BOARD one of esp32, esp32s3, esp32c3 (default: esp32)" in flash
