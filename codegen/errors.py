"""The one exception every build step raises; the CLI prints its message without a traceback."""

from __future__ import annotations


class BuildError(RuntimeError):
    """A generation or compiler/linker failure; the message holds the compiler output."""
