"""The one exception firmware builds raise: ``codegen.build_host.BuildError`` when the host
build driver defines it (the CLI catches that class), else a stand-in with the same role."""

from __future__ import annotations

try:
    from mcpgen.codegen.build_host import BuildError
except ImportError:  # build_host not integrated yet

    class BuildError(Exception):  # type: ignore[no-redef]
        """A build step failed; the message carries the tool's output."""


__all__ = ["BuildError"]
