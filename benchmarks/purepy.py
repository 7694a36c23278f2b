"""Loading the pure-Python build of compiled packages next to the compiled one.

The runtime's hot-path modules are Cython pure-Python mode files: ``x.py`` (+ ``x.pxd``)
compiled to ``x.cpython-*.so`` beside the source. Python's path finder prefers the
extension module, so a plain import gives the compiled build. :func:`import_pure`
imports the same packages a second time with a meta-path finder that only ever uses
``SourceFileLoader`` on the ``.py`` files, while ``sys.modules`` temporarily holds no
entry of those packages; afterwards the compiled modules are put back. Each copy's
``from runtime.x import y`` statements ran against its own copy, so the two builds
coexist in one process and can be timed interleaved.

Caveat (checked by :func:`is_compiled`): a function-level import executed later would
resolve to the compiled modules; the runtime's hot path does not do that.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Optional


class _SourceOnlyFinder(importlib.abc.MetaPathFinder):
    def __init__(self, tops: set[str]) -> None:
        self.tops = tops

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]],
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname.partition(".")[0] not in self.tops:
            return None
        leaf = fullname.rpartition(".")[2]
        for entry in path if path is not None else sys.path:
            base = Path(entry or ".")
            init = base / leaf / "__init__.py"
            if init.is_file():
                loader = importlib.machinery.SourceFileLoader(fullname, str(init))
                return importlib.util.spec_from_file_location(
                    fullname, init, loader=loader, submodule_search_locations=[str(init.parent)]
                )
            src = base / (leaf + ".py")
            if src.is_file():
                loader = importlib.machinery.SourceFileLoader(fullname, str(src))
                return importlib.util.spec_from_file_location(fullname, src, loader=loader)
        return None


def _top(name: str) -> str:
    return name.partition(".")[0]


def import_pure(modules: Iterable[str], extra_tops: Iterable[str] = ()) -> dict[str, ModuleType]:
    """Imports ``modules`` (and everything of their top-level packages) from source only.

    ``extra_tops`` are further top-level packages to load from source in the same pass
    (e.g. generated bindings that import ``runtime``). Returns name -> pure module.
    """
    names = list(modules)
    tops = {_top(n) for n in names} | set(extra_tops)
    saved = {k: v for k, v in sys.modules.items() if _top(k) in tops}
    for k in saved:
        del sys.modules[k]
    finder = _SourceOnlyFinder(tops)
    sys.meta_path.insert(0, finder)
    try:
        loaded = {n: importlib.import_module(n) for n in names}
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if _top(k) in tops]:
            del sys.modules[k]
        sys.modules.update(saved)
    return loaded


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` is an extension module (a Cython build)."""
    f = getattr(module, "__file__", "") or ""
    return f.endswith((".so", ".pyd"))
