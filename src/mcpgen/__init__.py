"""mcpgen: one YAML spec, both ends of MCP on ESP32 devices.

``mcpgen.codegen`` is the generator and its ``codegen`` command; ``mcpgen.runtime`` is
the backend runtime (it never imports the generator). The firmware sources and the spec
format ship inside the package as data: see :mod:`mcpgen.codegen.resources`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__: str = version("mcpgen")  # the one version number lives in pyproject.toml
except PackageNotFoundError:  # pragma: no cover - imported from a tree that was never installed
    __version__ = "0+unknown"
