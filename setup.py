"""Installs the ``codegen`` and ``runtime`` packages and compiles the runtime hot path.

Set ``MCPGEN_PURE_PYTHON=1`` to skip Cython: the same modules then run as plain Python.
"""

from __future__ import annotations

import os

from setuptools import find_packages, setup

# Runtime modules compiled by Cython (pure-Python mode .py files with .pxd beside them).
COMPILED_MODULES: list[str] = ["runtime.codec", "runtime.validate"]


def _extensions() -> list:
    if os.environ.get("MCPGEN_PURE_PYTHON") == "1" or not COMPILED_MODULES:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError as exc:
        raise SystemExit(
            "mcpgen: Cython>=3 is needed to compile the runtime hot path (pip install cython; with pip "
            "use --no-build-isolation), or set MCPGEN_PURE_PYTHON=1 to install it as plain Python"
        ) from exc
    from setuptools import Extension

    return cythonize(
        [Extension(m, [m.replace(".", "/") + ".py"]) for m in COMPILED_MODULES],
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
    name="mcpgen",
    version="0.1.0",
    description="One YAML spec -> MCP tools on ESP32 devices and typed, compiled backend bindings",
    python_requires=">=3.10",
    packages=find_packages(include=["codegen", "codegen.*", "runtime", "runtime.*"]),
    package_data={"codegen": ["templates/**/*", "templates/*"], "runtime": ["*.pxd", "py.typed"]},
    include_package_data=True,
    install_requires=["PyYAML>=6", "Jinja2>=3", "orjson>=3.8", "websockets>=12"],
    extras_require={
        "test": ["pytest", "pytest-asyncio", "mcp", "ruff", "pyserial", "aiomqtt>=2.3"],
        "serial": ["pyserial>=3.5"],
        "mqtt": ["aiomqtt>=2.3"],
        "bridge": ["uvicorn"],
    },
    entry_points={"console_scripts": ["codegen=codegen.cli:main"]},
    ext_modules=_extensions(),
    zip_safe=False,
)
