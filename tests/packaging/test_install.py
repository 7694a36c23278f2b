"""Installs mcpgen the way users do and uses it from an empty directory, outside the checkout.

An sdist is built with ``python -m build`` (build isolation: this process's Cython and
setuptools are not used), a wheel from that sdist with ``pip wheel``, and the wheel goes
into fresh virtual environments made with ``python3 -m venv`` (no ``wheel``, no Cython).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 900) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"$ {' '.join(cmd)}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def _clean_env(venv_dir: Path) -> dict[str, str]:
    """The environment of a user who activated ``venv_dir``: no PYTHONPATH, no test variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCPGEN_", "PYTHON", "PYTEST"))}
    # The system's tools (compilers, QEMU) but none of this machine's other Python installs.
    env["PATH"] = os.pathsep.join([str(venv_dir / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    env["VIRTUAL_ENV"] = str(venv_dir)
    return env


def _new_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist), str(REPO)], cwd=dist)
    (sdist,) = dist.glob("mcpgen-*.tar.gz")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(sdist)], cwd=dist)
    (whl,) = dist.glob("mcpgen-*.whl")
    return whl


def test_wheel_carries_firmware_spec_format_and_compiled_runtime(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "mcpgen/__main__.py",
        "mcpgen/py.typed",
        "mcpgen/codegen/py.typed",
        "mcpgen/codegen/emit/templates/python/pyproject.toml.j2",
        "mcpgen/codegen/spec/rules/schema.py",
        "mcpgen/protocol.py",
        "mcpgen/runtime/auth/__main__.py",  # python -m mcpgen.runtime.auth
        "mcpgen/runtime/py.typed",
        "mcpgen/runtime/codec.pxd",
        "mcpgen/firmware_template/core/mcpgen/mcp_core.h",
        "mcpgen/firmware_template/ports/host/main.cpp",
        "mcpgen/firmware_template/ports/qemu_mps2/mps2_an385.ld",
        "mcpgen/firmware_template/ports/bare_metal/uart_main.cpp",
        "mcpgen/firmware_template/ports/qemu_riscv_virt/startup.S",
        "mcpgen/firmware_template/platformio/platformio.ini.in",
        "mcpgen/toolspec/toolspec.schema.json",
        "mcpgen/toolspec/default_device.yaml",
        "mcpgen/toolspec/default_device_handlers.cpp",
    ):
        assert needed in names, f"{needed} missing from {wheel.name}"
    assert any(n.startswith("mcpgen/runtime/codec.") and n.endswith(".so") for n in names)
    assert not any(n.split("/")[0] in ("codegen", "runtime", "toolspec", "firmware_template") for n in names)


def test_runtime_imports_without_the_generator(wheel: Path, tmp_path: Path) -> None:
    env_dir = _new_venv(tmp_path / "venv")
    py = str(env_dir / "bin" / "python")
    env = _clean_env(env_dir)
    _run(
        # the runtime's own dependencies (pyproject.toml), none of the generator's
        [py, "-m", "pip", "install", "-q", "orjson>=3.8", "msgspec>=0.18", "picows>=2.3,<3"],
        cwd=tmp_path,
        env=env,
    )
    _run([py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], cwd=tmp_path, env=env)
    out = _run(
        [py, "-c", "import sys, mcpgen.runtime as r; print(r.COMPILED, sorted(m for m in sys.modules "
         "if m.split('.')[0] in ('yaml', 'jinja2', 'Cython') or m.startswith('mcpgen.codegen')))"],
        cwd=tmp_path,
        env=env,
    )
    assert out.strip() == "True []"


def test_wheel_install_runs_demo_and_builds_from_an_empty_directory(wheel: Path, tmp_path: Path) -> None:
    env_dir = _new_venv(tmp_path / "venv")
    env = _clean_env(env_dir)
    py = str(env_dir / "bin" / "python")
    codegen = str(env_dir / "bin" / "codegen")
    _run([py, "-m", "pip", "install", "-q", str(wheel)], cwd=tmp_path, env=env)
    work = tmp_path / "empty"
    work.mkdir()

    for name in ("runtime", "codegen"):
        proc = subprocess.run([py, "-c", f"import {name}"], cwd=work, env=env, capture_output=True, text=True)
        assert proc.returncode != 0 and "No module named" in proc.stderr
    assert "True" in _run([py, "-c", "import mcpgen.runtime as r; print(r.COMPILED)"], cwd=work, env=env)
    assert "usage: codegen" in _run([py, "-m", "mcpgen", "--help"], cwd=work, env=env)
    assert "usage:" in _run([str(env_dir / "bin" / "mcpgen"), "--help"], cwd=work, env=env)

    demo = _run([codegen, "demo"], cwd=work, env=env)
    assert "self.audio_speaker.set_volume" in demo and "Traceback" not in demo

    where = "from mcpgen.codegen import resources; print(resources.example_spec('desk_lamp'))"
    spec = Path(_run([py, "-c", where], cwd=work, env=env).strip())
    assert spec.is_file() and str(REPO) not in str(spec)
    _run([codegen, "build", str(spec), "--target", "host", "-o", "lamp"], cwd=work, env=env)
    assert (work / "lamp" / "firmware" / "build" / "desk_lamp-sim").is_file()
    _run([codegen, "build", str(spec), "--target", "xiaozhi", "-o", "lamp_xz"], cwd=work, env=env)
    assert any((work / "lamp_xz").rglob("mcp_core.h"))
    _run([codegen, "build", str(spec), "--target", "qemu", "-o", "lamp_qemu"], cwd=work, env=env)
    assert any((work / "lamp_qemu").rglob("*.elf"))
    # Without the esp32 extra the project is still generated, and one line says what to install.
    proc = subprocess.run([codegen, "build", str(spec), "--target", "esp32", "-o", "lamp_esp"],
                          cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert "PlatformIO is not installed: pip install" in proc.stdout + proc.stderr
    assert any((work / "lamp_esp").rglob("platformio.ini"))

    _run([codegen, "new", "my-fan", "--directory", "specs"], cwd=work, env=env)
    first = (work / "specs" / "my_fan.yaml").read_text().splitlines()[0]
    schema = first.split("$schema=", 1)[1]
    assert schema.startswith("file://") and Path(schema[len("file://"):]).is_file(), first

    # The generated bindings package installs with build isolation and compiles.
    _run([py, "-m", "pip", "install", "-q", str(work / "lamp" / "python")], cwd=work, env=env)
    out = _run([py, "-c", "import desk_lamp_tools._bindings as b; print(b.__file__)"], cwd=tmp_path, env=env)
    assert out.strip().endswith(".so"), out


def test_bindings_fall_back_to_pure_python_without_a_compiler(wheel: Path, tmp_path: Path) -> None:
    env_dir = _new_venv(tmp_path / "venv")
    env = _clean_env(env_dir)
    _run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], cwd=tmp_path, env=env)
    env["CC"] = "/nonexistent/cc"
    spec = REPO / "toolspec" / "desk_lamp.yaml"
    out = _run([str(env_dir / "bin" / "codegen"), "build", str(spec), "--target", "host", "-o", "b"],
               cwd=tmp_path, env=env)
    line = next(x for x in out.splitlines() if "not compiled" in x)
    assert "no C compiler (/nonexistent/cc): apt install gcc" in line
    assert "Traceback" not in out
    # pip installing the generated package falls back the same way, saying so in one line.
    py = str(env_dir / "bin" / "python")
    out = _run([py, "-m", "pip", "install", "-v", str(tmp_path / "b" / "python")], cwd=tmp_path, env=env)
    assert "desk_lamp_tools: no C compiler found" in out
    probe = "import desk_lamp_tools._bindings as b; print(b.__file__)"
    out = _run([py, "-c", probe], cwd=tmp_path / "b", env=env)
    assert out.strip().endswith("_bindings.py"), out
