"""The one place that emits everything: the model -> every generated file of a part.

A part is what one emitter makes: ``cpp`` (the device tables), ``python`` (the typed
bindings), ``docs`` (``tools.json`` and ``TOOLS.md``), ``xiaozhi`` (the stock-firmware
glue, with the tables it needs). A target generates the parts it needs through
``targets.base.BuildContext.generate``; ``codegen generate`` writes :data:`GENERATE`.
Pure functions of the model: nothing here touches the disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from mcpgen.codegen.emit import cpp, docs, python, xiaozhi
from mcpgen.codegen.spec.history import Release
from mcpgen.codegen.spec.model import Spec

PARTS: dict[str, Callable[[Spec], dict[str, str]]] = {
    "cpp": cpp.emit,
    "python": python.emit,
    "docs": docs.emit,
    "xiaozhi": xiaozhi.emit,
}

#: What ``codegen generate`` writes, in this order.
GENERATE: tuple[str, ...] = ("cpp", "python", "docs")


def emit(spec: Spec, part: str, releases: Sequence[Release] = ()) -> dict[str, str]:
    """Relative path -> content of every file of ``part``; ValueError when the part's
    emitter cannot express the spec (the message says what and why). ``releases``: the
    spec's release history (``BuildContext.releases``), for the bindings."""
    try:
        emitter = PARTS[part]
    except KeyError:
        raise KeyError(f"no emitted part {part!r}; expected one of {', '.join(PARTS)}") from None
    if part == "python":
        return python.emit(spec, releases)
    return emitter(spec)


def emit_all(spec: Spec, parts: Iterable[str] = GENERATE, releases: Sequence[Release] = ()) -> dict[str, str]:
    """Every file of every part in ``parts``, in one mapping (the parts' paths never collide)."""
    files: dict[str, str] = {}
    for part in parts:
        files.update(emit(spec, part, releases))
    return files
