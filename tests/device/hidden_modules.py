"""Run a program as a pip user who skipped an extra: the extra's modules are hidden by a
meta-path finder in a ``sitecustomize`` on ``PYTHONPATH``, so every Python the program
starts (``codegen`` included) misses the same modules."""

from __future__ import annotations

import os
from pathlib import Path

SITECUSTOMIZE = """\
import importlib.abc
import os
import sys

_HIDDEN = frozenset(filter(None, os.environ.get("MCPGEN_TEST_HIDE", "").split(",")))


class _Hidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Hidden())
"""


def modules_of(extra: str) -> list[str]:
    """The import names a pip user without ``extra`` lacks (mcpgen.extras.OPTIONAL_MODULES);
    ``[console]`` brings the bridge's packages too, so without it those are missing as well."""
    from mcpgen.extras import OPTIONAL_MODULES

    wanted = {extra, "bridge"} if extra == "console" else {extra}
    names = sorted(m for m, (e, _pkg) in OPTIONAL_MODULES.items() if e in wanted)
    assert names, f"no module of extra [{extra}] in mcpgen.extras.OPTIONAL_MODULES"
    return names


def without_extra(env: dict[str, str], site: Path, extra: str) -> dict[str, str]:
    """``env`` for a program that must run without ``extra`` (``site``: a directory to hold
    the ``sitecustomize.py``)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    out = dict(env, MCPGEN_TEST_HIDE=",".join(modules_of(extra)))
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return out


def one_line(extra: str) -> str:
    """A regular expression of the one line every missing-extra path ends in
    (mcpgen.extras.missing_extra_line), as ``codegen`` prints it or any other program."""
    import re

    return (
        rf"^(codegen: )?error: [\w.-]+ is not installed( \(.*\))?: "
        rf"pip install '(mcpgen|mcpgen-runtime)\[{re.escape(extra)}\]'$"
    )
