"""Every build target by its ``--target`` name; ``codegen build`` and ``codegen run`` read it.

Adding a target: write a module with a :class:`~mcpgen.codegen.targets.base.Target`
subclass and a ``TARGETS`` tuple, and list the module here. The order is the order of
``codegen build --help``.
"""

from __future__ import annotations

from mcpgen.codegen.targets import esp32, host, python, qemu, xiaozhi
from mcpgen.codegen.targets.base import Target

_MODULES = (host, qemu, esp32, xiaozhi, python)

TARGETS: dict[str, Target] = {t.name: t for module in _MODULES for t in module.TARGETS}


def names() -> tuple[str, ...]:
    """Every target name (``run.console.runnable_targets()``: those ``codegen run`` can boot)."""
    return tuple(TARGETS)


def get_target(name: str) -> Target:
    """The target called ``name``; ValueError listing the names when there is none."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; expected one of {', '.join(TARGETS)}") from None


__all__ = ["TARGETS", "get_target", "names"]
