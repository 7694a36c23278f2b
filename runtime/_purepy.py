"""``MCPGEN_PURE_PYTHON=1`` at import time: load the ``.py`` of compiled modules.

Python prefers an extension module over the ``.py`` beside it, so an in-place build
would otherwise always win. With the variable set, the listed modules are imported from
their source files instead, so one tree can run both builds (tests, benchmarks).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Optional

#: The runtime modules Cython compiles (each a pure-Python-mode ``.py`` with a ``.pxd``
#: beside it), by import name: the one list. setup.py reads it from this file by path (it
#: runs before mcpgen is importable, hence no import here but the standard library);
#: ``mcpgen.runtime`` makes each loadable from source and ``COMPILED`` checks each.
COMPILED_MODULES: tuple[str, ...] = (
    # the hot path by job (mcpgen.runtime.core.codec re-exports them): the wire format, the
    # per-connection RPC state, the event-loop glue; each later one cimports the one before
    "mcpgen.runtime.core.wire",
    "mcpgen.runtime.core.rpcsession",
    "mcpgen.runtime.core.deadlines",
    "mcpgen.runtime.core.validate",
    "mcpgen.runtime.links.websocket.wslink",  # the gateway's per-frame path; its .pxd cimports picows
    "mcpgen.runtime.links.mqtt.mqttwire",  # the MQTT link's QoS 0 PUBLISH framing (mqttfast.py)
)


def pure_python_requested() -> bool:
    return os.environ.get("MCPGEN_PURE_PYTHON") == "1"


class _SourceFirst(importlib.abc.MetaPathFinder):
    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname not in self.names or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for entry in path:
            source = os.path.join(entry, leaf + ".py")
            if os.path.isfile(source):
                loader = importlib.machinery.SourceFileLoader(fullname, source)
                return importlib.util.spec_from_file_location(fullname, source, loader=loader)
        return None


def prefer_source(names: Iterable[str]) -> None:
    """Makes ``names`` (full module names) import from ``.py`` when pure Python is requested."""
    if not pure_python_requested():
        return
    for finder in sys.meta_path:
        if isinstance(finder, _SourceFirst):
            finder.names.update(names)
            return
    sys.meta_path.insert(0, _SourceFirst(names))


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from an extension module, not from source."""
    f = getattr(module, "__file__", None) or ""
    return f.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
