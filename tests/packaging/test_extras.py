"""A missing optional package is one line naming the pip extra that installs it.

The packages are hidden from a child process by a ``None`` entry in ``sys.modules`` (what
Python does for a module that is not installed: ``ModuleNotFoundError`` with its name).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from mcpgen.extras import OPTIONAL_MODULES, MissingExtra, missing_extra, missing_extra_line

REPO = Path(__file__).resolve().parents[2]


def _codegen_without(hidden: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys; sys.modules[{hidden!r}] = None\n"
        "from mcpgen.codegen.cli import main\n"
        f"sys.exit(main({list(args)!r}))"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_every_optional_module_is_in_the_extra_the_line_names() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    for module, (extra, package) in OPTIONAL_MODULES.items():
        names = {canonicalize_name(Requirement(r).name) for r in extras[extra]}
        assert canonicalize_name(package) in names, f"{module}: {package} is not in the [{extra}] extra"


def test_lines_name_the_distribution_a_reader_installed() -> None:
    assert missing_extra_line("serial.tools", "connect_serial") == (
        "pyserial is not installed (connect_serial): pip install 'mcpgen-runtime[serial]'"
    )
    assert missing_extra_line("paho.mqtt.client", dist="mcpgen") == (
        "paho-mqtt is not installed: pip install 'mcpgen[mqtt]'"
    )
    # The ESP32 tools come with the generator only.
    assert missing_extra_line("esptool") == "esptool is not installed: pip install 'mcpgen[esp32]'"
    assert missing_extra_line("yaml") is None and missing_extra_line(None) is None
    converted = missing_extra(ModuleNotFoundError("No module named 'aiomqtt'", name="aiomqtt"), "MQTT")
    assert isinstance(converted, MissingExtra) and converted.name == "aiomqtt"
    unknown = ModuleNotFoundError("No module named 'nosuch'", name="nosuch")
    assert missing_extra(unknown) is unknown  # not an extra's module: a bug, reported as one


async def test_connect_serial_without_pyserial_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpgen.runtime import connect_serial

    monkeypatch.setitem(sys.modules, "serial", None)
    with pytest.raises(MissingExtra, match=r"pip install 'mcpgen-runtime\[serial\]'"):
        await connect_serial("socket://127.0.0.1:9")


def test_codegen_bridge_without_the_sdk_is_one_line(tmp_path: Path) -> None:
    proc = _codegen_without("mcp", "bridge", "--transport", "stdio", "--device-cmd", "true", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "codegen: error: mcp is not installed: pip install 'mcpgen[bridge]'"
    ], proc.stderr
    # Without the extra, options the bridge does not know are still refused elsewhere.
    proc = _codegen_without("mcp", "check", "--no-such-option", "x.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "unrecognized arguments: --no-such-option" in proc.stderr


def test_codegen_console_without_its_extra_is_one_line(tmp_path: Path) -> None:
    for hidden, package in (("prometheus_client", "prometheus-client"), ("mcp", "mcp")):
        proc = _codegen_without(hidden, "console", "--port", "0", "--device-cmd", "true", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"codegen: error: {package} is not installed (the web console): pip install 'mcpgen[console]'"
        ], proc.stderr


@pytest.mark.slow
def test_codegen_run_qemu_without_pyserial_is_one_line(tmp_path: Path) -> None:
    spec = REPO / "toolspec" / "desk_lamp.yaml"
    proc = _codegen_without(
        "serial", "-q", "run", str(spec), "--target", "qemu", "-o", str(tmp_path / "q"), cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "please report" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "codegen: error: pyserial is not installed: pip install 'mcpgen[serial]'"
    ), proc.stderr
