"""Builds the typed Python bindings of a spec: generate, then compile them with Cython.

``make_bindings(ctx)`` (``build_bindings(spec_path, outdir)`` from a path) writes
``outdir/python/`` (the ``<slug>_tools`` package and its ``setup.py``) and compiles
``_bindings.py`` in place by running the generated ``setup.py build_ext --inplace`` in a
subprocess (so it works from the CLI and from a running event loop alike). Put the
returned directory on ``sys.path``, or ``pip install`` it.

With ``compile_bindings=False`` in the build options (``compile=False`` of
``build_bindings``), or ``MCPGEN_PURE_PYTHON=1`` in the environment, nothing is compiled
and stale extension modules from an earlier build are removed, so the ``.py`` is what
imports.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.names import device_slug
from mcpgen.codegen.targets.base import BuildContext, BuildOptions, Built, Target


def _extension_files(pkg_dir: Path) -> list[Path]:
    found = [*pkg_dir.glob("_bindings.*"), *pkg_dir.glob("_release_*.*")]  # older releases: one module each
    return sorted(p for p in found if p.suffix in (".so", ".pyd"))


def missing_compile_tools() -> str:
    """Why the bindings cannot be compiled here, as one line naming what to install; "" if they can."""
    try:
        import Cython  # noqa: F401
    except ImportError:
        return "Cython is not installed: pip install 'cython>=3'"
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc}): apt install gcc"
    include = sysconfig.get_paths().get("include", "")
    if not Path(include, "Python.h").is_file():
        return f"no Python headers in {include}: apt install python3-dev"
    return ""


def build_bindings(
    spec_path: Path,
    outdir: Path,
    *,
    log: Callable[[str], None] = print,
    compile: bool = True,
) -> Path:
    """Loads ``spec_path`` and makes its bindings (:func:`make_bindings`); returns
    ``outdir/python``. The front door for scripts and tests; ``codegen`` calls the target."""
    options = BuildOptions(log=log, compile_bindings=compile)
    return make_bindings(BuildContext.load(spec_path, outdir, options))


def make_bindings(ctx: BuildContext) -> Path:
    """Emits (and unless ``ctx.options.compile_bindings`` is False, compiles) the bindings;
    returns ``outdir/python``."""
    spec, outdir, log = ctx.spec, ctx.outdir, ctx.log
    files, written = ctx.generate("python")
    pydir = outdir / "python"
    package = f"{device_slug(spec.device.name)}_tools"
    pkg_dir = pydir / package
    log(f"bindings {package}: {len(files)} files in {pydir} ({len(written)} changed)")

    if os.environ.get("MCPGEN_PURE_PYTHON") == "1":
        pure_because = "not compiled (MCPGEN_PURE_PYTHON=1)"
    elif not ctx.options.compile_bindings:
        pure_because = "not compiled (compile=False)"
    else:
        missing = missing_compile_tools()
        pure_because = f"not compiled, running as pure Python ({missing})" if missing else ""
    if pure_because:
        for stale in _extension_files(pkg_dir):
            stale.unlink()
        log(f"bindings {package}: {pure_because}")
        return pydir

    source = pkg_dir / "_bindings.py"
    built = _extension_files(pkg_dir)
    inputs = [source, pkg_dir / "_bindings.pxd", *pkg_dir.glob("_release_*.p*")]
    if built and all(b.stat().st_mtime >= max(i.stat().st_mtime for i in inputs) for b in built):
        log(f"bindings {package}: compiled module up to date")
        return pydir
    cmd = [sys.executable, "setup.py", "build_ext", "--inplace"]
    log(f"bindings {package}: compiling with Cython ({' '.join(cmd[1:])})")
    proc = subprocess.run(cmd, cwd=pydir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(
            f"compiling the {package} bindings failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    built = _extension_files(pkg_dir)
    if not built:
        raise BuildError(f"compiling the {package} bindings produced no extension module:\n{proc.stdout}")
    for b in built:
        os.utime(b)
    log(f"bindings {package}: compiled {built[-1].name}")
    return pydir


class PythonTarget(Target):
    """``--target python``: only the typed Python bindings (no firmware)."""

    name = "python"
    summary = "only the typed Python bindings (compiled with Cython unless --no-compile-bindings)"

    def build(self, ctx: BuildContext) -> list[Built]:
        return [bindings_built(make_bindings(ctx))]


def bindings_built(pydir: Path) -> Built:
    """The result line of a bindings build, with how to use the package."""
    return Built("bindings", pydir, f"pip install {pydir}, or put it on PYTHONPATH")


TARGETS: tuple[Target, ...] = (PythonTarget(),)

__all__ = ["TARGETS", "PythonTarget", "build_bindings", "import_bindings", "make_bindings"]


def import_bindings(pydir: Path, package: str) -> ModuleType:
    """Imports the bindings package ``package`` from ``pydir``, whatever was imported before.

    Two builds of the same spec (say compiled and pure, or two output directories) share a
    package name; this drops any earlier copy from ``sys.modules`` so the one in ``pydir``
    is what the caller gets, and leaves ``sys.path`` as it was.
    """
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    sys.path.insert(0, str(pydir))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(pydir))
