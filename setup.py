"""The parts of the build that ``pyproject.toml`` cannot declare.

* Where each installed package comes from: the repository keeps the user's top-level
  folders (``codegen/``, ``runtime/``, ``firmware_template/``, ``toolspec/``); the wheel
  installs them all under the one ``mcpgen`` import namespace.
* The Cython extensions of the runtime hot path. ``MCPGEN_PURE_PYTHON=1`` skips them: the
  same modules then run as plain Python.
* The release distributions (``scripts/dist.py``) are built with this same file from a copy
  of the folders each one carries: a package whose folder is absent is left out, so the
  ``mcpgen-runtime`` copy builds the runtime (compiled) and the ``mcpgen`` copy the rest.
"""

from __future__ import annotations

import os
import runpy
import sys

from setuptools import Extension, find_packages, setup

# Installed package -> folder in the repository.
PACKAGE_DIRS: dict[str, str] = {
    "mcpgen": "src/mcpgen",
    "mcpgen.codegen": "codegen",
    "mcpgen.runtime": "runtime",
    # Data shipped as packages so that a plain wheel install can build firmware.
    "mcpgen.firmware_template": "firmware_template",
    "mcpgen.toolspec": "toolspec",
}

# The generator's subpackages (spec/, emit/, targets/, run/, ...) and the runtime's floors
# (core/, session/, links/, bridge/, console/, auth/), found rather than listed.
for _package, _folder in (("mcpgen.codegen", "codegen"), ("mcpgen.runtime", "runtime")):
    for _sub in find_packages(_folder):
        PACKAGE_DIRS[f"{_package}.{_sub}"] = f"{_folder}/" + _sub.replace(".", "/")

# A release distribution carries only its own folders (scripts/dist.py); the developer
# install from the repository has them all.
PACKAGE_DIRS = {name: folder for name, folder in PACKAGE_DIRS.items() if os.path.isdir(folder)}

PACKAGE_DATA: dict[str, list[str]] = {
    "mcpgen": ["py.typed"],
    "mcpgen.codegen": ["py.typed"],
    "mcpgen.codegen.emit": ["templates/**/*"],
    "mcpgen.runtime": ["py.typed"],
    "mcpgen.runtime.console": ["static/*"],  # the page: plain HTML, CSS and JS, no build step
    "mcpgen.firmware_template": ["**/*"],
    "mcpgen.toolspec": ["*.json", "*.yaml", "*.cpp", "*.md"],
}

# Runtime modules compiled by Cython (pure-Python mode .py files with a .pxd beside each):
# the runtime's own list (runtime/_purepy.py), read by path since mcpgen is not importable
# yet, mapped to each module's source file.
# The generator's release distribution has no runtime/ folder and compiles nothing.
_HERE = os.path.dirname(os.path.abspath(__file__))
_PUREPY = os.path.join(_HERE, "runtime", "_purepy.py")
COMPILED_MODULES: dict[str, str] = {
    name: "runtime/" + "/".join(name.split(".")[2:]) + ".py"
    for name in (runpy.run_path(_PUREPY)["COMPILED_MODULES"] if os.path.exists(_PUREPY) else ())
}


def _pxd_tree() -> str:
    """A folder where each module's .pxd sits at its installed path (``mcpgen/runtime/x.pxd``).

    Cython finds the .pxd that declares a pure-Python-mode module by the module's full
    name; the repository keeps ``runtime/`` where the wheel has ``mcpgen/runtime/``, so
    without this tree the .pxd files are silently ignored and the modules compile as
    untyped Python.
    """
    root = os.path.join("build", "cython-pxd")
    for name, source in COMPILED_MODULES.items():
        package = name.rpartition(".")[0]
        pkg_dir = os.path.join(root, *package.split("."))
        os.makedirs(pkg_dir, exist_ok=True)
        parts = package.split(".")
        for i in range(1, len(parts) + 1):  # every level is a package for Cython
            init = os.path.join(root, *parts[:i], "__init__.pxd")
            if not os.path.exists(init):
                open(init, "w").close()
        pxd = os.path.splitext(source)[0] + ".pxd"
        with (
            open(pxd, encoding="utf-8") as src,
            open(os.path.join(pkg_dir, os.path.basename(pxd)), "w", encoding="utf-8") as dst,
        ):
            dst.write(src.read())
    return root


# Each compiled module's .pxd ships beside it (other projects may cimport them).
for _name in COMPILED_MODULES:
    PACKAGE_DATA.setdefault(_name.rpartition(".")[0], []).append("*.pxd")


def _extensions() -> list[Extension]:
    if os.environ.get("MCPGEN_PURE_PYTHON") == "1" or "mcpgen.runtime" not in PACKAGE_DIRS:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError as exc:
        raise SystemExit(
            "mcpgen: Cython>=3 is needed to compile the runtime hot path. Install with pip, which reads "
            "pyproject.toml and provides it (pip install .), or set MCPGEN_PURE_PYTHON=1 for plain Python."
        ) from exc
    # Debug info is 80 % of the modules' size; MCPGEN_DEBUG_BUILD=1 keeps it (native profilers).
    strip = sys.platform.startswith("linux") and os.environ.get("MCPGEN_DEBUG_BUILD") != "1"
    link_args = ["-Wl,--strip-debug"] if strip else []
    return cythonize(
        [Extension(name, [source], extra_link_args=link_args) for name, source in COMPILED_MODULES.items()],
        include_path=[_pxd_tree()],
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            # The .pxd beside each module holds the C types; annotations are for mypy.
            "annotation_typing": False,
        },
        quiet=True,
    )


setup(
    packages=list(PACKAGE_DIRS),
    package_dir=PACKAGE_DIRS,
    package_data=PACKAGE_DATA,
    ext_modules=_extensions(),
)
