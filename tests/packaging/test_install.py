"""The release distributions, installed the way users do, used outside the checkout.

``scripts/dist.py`` builds them once per test session (sdists, then each wheel from its
sdist with build isolation; auditwheel; twine check). The wheels go into fresh virtual
environments made with ``venv`` (no ``wheel``, no Cython); pip fetches their dependencies
from the package index. A backend's environment gets ``mcpgen-runtime`` alone (plus the
bindings generated for its device); a firmware author's gets ``mcpgen``, which brings the
runtime of the same version.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import mcpgen

REPO = Path(__file__).resolve().parents[2]
GENERATOR_ONLY = {"pyyaml", "jinja2", "cython"}

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


class Env:
    """A fresh virtual environment and the environment variables of a shell that activated it."""

    def __init__(self, path: Path) -> None:
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        self.path = path
        self.python = str(path / "bin" / "python")
        self.env = _clean_env(path)

    def pip_install(self, *what: str, cwd: Path) -> None:
        _run(
            [self.python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *what],
            cwd=cwd,
            env=self.env,
        )

    def installed(self, cwd: Path) -> set[str]:
        out = _run(
            [self.python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
            cwd=cwd,
            env=self.env,
        )
        return {canonicalize_name(p["name"]) for p in json.loads(out.splitlines()[0])}

    def run(self, *cmd: str, cwd: Path) -> str:
        return _run(list(cmd), cwd=cwd, env=self.env)

    def tool(self, name: str) -> str:
        return str(self.path / "bin" / name)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, str(REPO / "scripts" / "dist.py"), "-o", str(out)], cwd=REPO)
    return out


def _runtime_wheel(dist: Path) -> Path:
    (whl,) = dist.glob("mcpgen_runtime-*manylinux*.whl")
    return whl


def _generator_wheel(dist: Path) -> Path:
    (whl,) = dist.glob("mcpgen-*-py3-none-any.whl")
    return whl


def _metadata(wheel: Path) -> tuple[dict[str, str], list[Requirement]]:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        msg = Parser().parsestr(z.read(name).decode())
    return dict(msg.items()), [Requirement(r) for r in msg.get_all("Requires-Dist") or []]


def _extra(reqs: list[Requirement], extra: str) -> list[Requirement]:
    """The requirements that ``pip install 'NAME[extra]'`` adds."""
    return [
        r
        for r in reqs
        if r.marker is not None and "extra" in str(r.marker) and r.marker.evaluate({"extra": extra})
    ]


def test_release_files_pass_twine_check_and_split_the_package(dist: Path) -> None:
    version = mcpgen.__version__
    assert sorted(p.name for p in dist.glob("*.tar.gz")) == [
        f"mcpgen-{version}.tar.gz",
        f"mcpgen_runtime-{version}.tar.gz",
    ]
    assert not list(dist.glob("*linux_x86_64.whl")), "auditwheel left the linux_* wheel"
    runtime, generator = _runtime_wheel(dist), _generator_wheel(dist)
    out = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())], cwd=dist)
    assert out.count("PASSED") == 4, out

    names = set(zipfile.ZipFile(runtime).namelist())
    for needed in (
        "mcpgen/__init__.py",
        "mcpgen/_version.py",
        "mcpgen/protocol.py",
        "mcpgen/extras.py",
        "mcpgen/py.typed",
        "mcpgen/runtime/py.typed",
        "mcpgen/runtime/core/rpcsession.pxd",
        "mcpgen/runtime/links/websocket/wslink.pxd",
        "mcpgen/runtime/_moved.py",
        "mcpgen/runtime/bridge/core.py",
        "mcpgen/runtime/auth/__main__.py",
        # the web console's page is served from the package
        "mcpgen/runtime/console/static/index.html",
        "mcpgen/runtime/console/static/console.js",
    ):
        assert needed in names, f"{needed} missing from {runtime.name}"
    assert {n.split("/")[-1].split(".")[0] for n in names if n.endswith(".so")} == {
        "wire",
        "rpcsession",
        "deadlines",
        "validate",
        "wslink",
        "mqttwire",
    }
    assert not any(
        n.startswith(("mcpgen/codegen", "mcpgen/toolspec", "mcpgen/firmware_template"))
        or n == "mcpgen/__main__.py"
        for n in names
    )

    names = set(zipfile.ZipFile(generator).namelist())
    for needed in (
        "mcpgen/__main__.py",
        "mcpgen/codegen/py.typed",
        "mcpgen/codegen/example_specs.py",
        "mcpgen/codegen/emit/templates/python/pyproject.toml.j2",
        "mcpgen/firmware_template/core/mcpgen/mcp_core.h",
        "mcpgen/firmware_template/ports/qemu_mps2/mps2_an385.ld",
        "mcpgen/firmware_template/platformio/platformio.ini.in",
        "mcpgen/toolspec/toolspec.schema.json",
        "mcpgen/toolspec/desk_lamp.yaml",
        "mcpgen/toolspec/desk_lamp_handlers.cpp",
    ):
        assert needed in names, f"{needed} missing from {generator.name}"
    # Files of the shared `mcpgen` folder come from mcpgen-runtime only: no clash on install.
    assert not any(n.startswith("mcpgen/runtime") or n.endswith(".so") for n in names)
    assert "mcpgen/__init__.py" not in names and "mcpgen/protocol.py" not in names

    meta, reqs = _metadata(runtime)
    assert meta["Name"] == "mcpgen-runtime" and meta["Version"] == version
    base = {canonicalize_name(r.name) for r in reqs if r.marker is None or "extra" not in str(r.marker)}
    assert base == {"orjson", "msgspec", "picows", "aiofastnet", "google-re2", "uvloop"}
    console = {canonicalize_name(r.name) for r in _extra(reqs, "console")}
    assert {"prometheus-client", "mcp", "uvicorn"} <= console, console
    meta, reqs = _metadata(generator)
    assert meta["Name"] == "mcpgen" and meta["Version"] == version
    assert f"mcpgen-runtime=={version}" in [str(r) for r in reqs]
    assert any(
        r.name == "mcpgen-runtime" and r.extras == {"console"} and str(r.specifier) == f"=={version}"
        for r in _extra(reqs, "console")
    ), reqs  # `pip install 'mcpgen[console]'` works
    assert "Operating System :: MacOS" not in (meta.get("Classifier") or "")


@pytest.fixture(scope="module")
def lamp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """desk_lamp built for the host by this checkout: the simulator and the bindings package."""
    out = tmp_path_factory.mktemp("lamp")
    spec = REPO / "toolspec" / "desk_lamp.yaml"
    _run(
        [
            sys.executable,
            "-m",
            "mcpgen",
            "-q",
            "build",
            str(spec),
            "--target",
            "host",
            "-o",
            str(out),
            "--no-compile-bindings",
        ],
        cwd=out,
    )
    return out


def test_runtime_alone_then_generated_bindings_call_a_simulator(
    dist: Path, lamp: Path, tmp_path: Path
) -> None:
    backend = Env(tmp_path / "venv")
    # README's command for a backend (the built files, not the index, have mcpgen-runtime).
    backend.pip_install("--find-links", str(dist), "mcpgen-runtime", cwd=tmp_path)
    tags = "from importlib.metadata import distribution as d; print(d('mcpgen-runtime').read_text('WHEEL'))"
    assert "-manylinux" in backend.run(backend.python, "-c", tags, cwd=tmp_path)  # the wheel, not the sdist
    installed = backend.installed(tmp_path)
    assert not installed & (GENERATOR_ONLY | {"mcpgen"}), installed
    probe = (
        "import sys, mcpgen.runtime as r; print(r.COMPILED, sorted(m for m in sys.modules if "
        "m.split('.')[0] in ('yaml', 'jinja2', 'Cython', 'cython') or m.startswith('mcpgen.codegen')))"
    )
    assert backend.run(backend.python, "-c", probe, cwd=tmp_path).strip() == "True []"
    # Without the serial extra, one line names it.
    proc = subprocess.run(
        [
            backend.python,
            "-c",
            "import asyncio; from mcpgen.runtime import connect_serial; "
            "asyncio.run(connect_serial('socket://127.0.0.1:9'))",
        ],
        cwd=tmp_path,
        env=backend.env,
        capture_output=True,
        text=True,
    )
    assert proc.stderr.strip().splitlines() == [
        "error: pyserial is not installed (connect_serial): pip install 'mcpgen-runtime[serial]'"
    ]  # no traceback
    # MCPGEN_PURE_PYTHON=1 without the [pure] extra (no Cython): the same, one line
    pure = subprocess.run(
        [backend.python, "-c", "import mcpgen.runtime"],
        cwd=tmp_path,
        env={**backend.env, "MCPGEN_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
    )
    assert pure.stderr.strip().splitlines() == [
        "error: Cython is not installed (MCPGEN_PURE_PYTHON=1 runs the runtime from source): "
        "pip install 'mcpgen-runtime[pure]'"
    ], pure.stderr

    # The generated package depends on mcpgen-runtime only, and compiles in pip's isolated build.
    backend.pip_install(str(lamp / "python"), cwd=tmp_path)
    assert not backend.installed(tmp_path) & (GENERATOR_ONLY | {"mcpgen"})
    script = f"""
import asyncio
import desk_lamp_tools._bindings as b
from desk_lamp_tools import DeskLamp
from mcpgen.runtime import connect_process

async def main() -> None:
    device = await connect_process([{str(lamp / "firmware" / "build" / "desk_lamp-sim")!r}, "--stdio"])
    lamp = DeskLamp(device)
    print(b.__file__.endswith(".so"), await lamp.light.set_rgb(r=1, g=2, b=3), await lamp.light.get_state())
    await device.close()

asyncio.run(main())
"""
    out = backend.run(backend.python, "-c", script, cwd=tmp_path).strip()
    assert out.startswith("True True {") and "'rgb': [1, 2, 3]" in out, out


def test_generator_on_top_runs_demo_examples_and_builds_from_an_empty_directory(
    dist: Path, tmp_path: Path
) -> None:
    author = Env(tmp_path / "venv")
    # README's command for a firmware author: mcpgen brings mcpgen-runtime==VERSION from dist/.
    author.pip_install("--find-links", str(dist), "mcpgen", cwd=tmp_path)
    work = tmp_path / "empty"
    work.mkdir()
    codegen = author.tool("codegen")
    for name in ("runtime", "codegen"):
        proc = subprocess.run(
            [author.python, "-c", f"import {name}"], cwd=work, env=author.env, capture_output=True, text=True
        )
        assert proc.returncode != 0 and "No module named" in proc.stderr
    compiled = "import mcpgen.runtime as r; print(r.COMPILED)"
    assert author.run(author.python, "-c", compiled, cwd=work).strip() == "True"
    assert "usage: codegen" in author.run(author.python, "-m", "mcpgen", "--help", cwd=work)
    assert "usage:" in author.run(author.tool("mcpgen"), "--help", cwd=work)

    demo = author.run(codegen, "demo", cwd=work)
    assert "self.audio_speaker.set_volume" in demo and "Traceback" not in demo

    # The examples come out of the package, and build where they land.
    author.run(codegen, "examples", "desk_lamp", "-o", "ex", cwd=work)
    assert sorted(p.name for p in (work / "ex").iterdir()) == [
        "desk_lamp.yaml",
        "desk_lamp_handlers.cpp",
        "toolspec.schema.json",
    ]
    spec = work / "ex" / "desk_lamp.yaml"
    assert spec.read_text().startswith("# yaml-language-server: $schema=./toolspec.schema.json\n")
    author.run(codegen, "build", str(spec), "--target", "host", "-o", "lamp", cwd=work)
    assert (work / "lamp" / "firmware" / "build" / "desk_lamp-sim").is_file()
    author.run(codegen, "build", str(spec), "--target", "xiaozhi", "-o", "lamp_xz", cwd=work)
    assert any((work / "lamp_xz").rglob("mcp_core.h"))
    author.run(codegen, "build", str(spec), "--target", "qemu", "-o", "lamp_qemu", cwd=work)
    assert any((work / "lamp_qemu").rglob("*.elf"))
    # Extras not installed: one line each naming what to install.
    proc = subprocess.run(
        [codegen, "run", str(spec), "--target", "qemu", "-o", "lamp_qemu"],
        cwd=work,
        env=author.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "codegen: error: pyserial is not installed: pip install 'mcpgen[serial]'"
    ), proc.stderr
    proc = subprocess.run(
        [codegen, "build", str(spec), "--target", "esp32", "-o", "lamp_esp"],
        cwd=work,
        env=author.env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert "PlatformIO is not installed: pip install 'mcpgen[esp32]'" in proc.stdout + proc.stderr
    assert any((work / "lamp_esp").rglob("platformio.ini"))

    # `codegen new`: the $schema line names the copy beside the spec, not site-packages.
    author.run(codegen, "new", "my-fan", "--directory", "specs", cwd=work)
    first = (work / "specs" / "my_fan.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=./toolspec.schema.json", first
    assert json.loads((work / "specs" / "toolspec.schema.json").read_text())["title"]

    # The bindings' package installs with build isolation and compiles.
    author.pip_install(str(work / "lamp" / "python"), cwd=work)
    probe = "import desk_lamp_tools._bindings as b; print(b.__file__)"
    out = author.run(author.python, "-c", probe, cwd=tmp_path)
    assert out.strip().endswith(".so"), out

    # Without a C compiler, both the build and pip fall back to pure Python, saying so.
    author.env["CC"] = "/nonexistent/cc"
    out = author.run(codegen, "build", str(spec), "--target", "host", "-o", "b", cwd=work)
    line = next(x for x in out.splitlines() if "not compiled" in x)
    assert "no C compiler (/nonexistent/cc): apt install gcc" in line
    assert "Traceback" not in out
    out = _run(
        [
            author.python,
            "-m",
            "pip",
            "install",
            "-v",
            "--force-reinstall",
            "--no-deps",
            str(work / "b" / "python"),
        ],
        cwd=work,
        env=author.env,
    )
    assert "desk_lamp_tools: no C compiler found" in out
    assert author.run(author.python, "-c", probe, cwd=work / "b").strip().endswith("_bindings.py")
