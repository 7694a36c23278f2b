"""The distribution's metadata matches its code: every third-party import is declared.

Each module group may import the base dependencies plus its own extra (the bridge its
``bridge`` extra, and so on); an import inside ``try: ... except ImportError`` is optional
and needs only to be declared somewhere.
"""

from __future__ import annotations

import ast
import sys
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

from packaging.requirements import Requirement

import mcpgen

PACKAGE = Path(mcpgen.__file__).parent

# Module path prefix (inside the package) -> the extra its code may rely on.
GROUP_EXTRAS: dict[str, str] = {
    "runtime/bridge/": "bridge",
    "runtime/console/": "console",
    "runtime/links/mqtt/gateway.py": "mqtt",
    "runtime/links/mqtt/fleet.py": "mqtt",
    "runtime/links/mqtt/broker.py": "mqtt",
    "runtime/links/transports.py": "serial",
}


def _declared() -> dict[str | None, set[str]]:
    """Extra (None: base) -> normalized distribution names it requires."""
    out: dict[str | None, set[str]] = {}
    for text in distribution("mcpgen").requires or []:
        req = Requirement(text)
        extra = None
        if req.marker is not None and "extra" in str(req.marker):
            extra = str(req.marker).split("extra ==", 1)[1].strip().strip("\"'")
        out.setdefault(extra, set()).add(req.name.lower().replace("_", "-"))
    return out


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(required, optional) top-level module names imported by ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    optional_nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
            for h in node.handlers
        ):
            optional_nodes.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    required: set[str] = set()
    optional: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in ("mcpgen", "__future__"):
                continue
            (optional if id(node) in optional_nodes else required).add(top)
    return required, optional


def test_every_third_party_import_is_declared_in_its_extra() -> None:
    declared = _declared()
    everything = set().union(*declared.values())
    dists = {k: {d.lower().replace("_", "-") for d in v} for k, v in packages_distributions().items()}
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        extra = next((e for prefix, e in GROUP_EXTRAS.items() if rel.startswith(prefix)), None)
        allowed = declared.get(None, set()) | declared.get(extra, set())
        required, optional = _imports(path)
        for module in sorted(required | optional):
            names = dists.get(module, {module.lower()})
            pool = allowed if module in required else everything
            if not names & pool:
                where = f"the [{extra}] extra" if extra else "the base dependencies"
                problems.append(f"{rel} imports {module} ({'/'.join(sorted(names))}), not in {where}")
    assert not problems, "\n".join(problems)


def test_runtime_core_needs_only_the_runtime_dependencies() -> None:
    """``import mcpgen.runtime`` must work with its own dependencies alone (no generator)."""
    # `cython` is the pure-Python-mode shadow module: a compiled module resolves it at
    # compile time, so only an uncompiled run (MCPGEN_PURE_PYTHON=1) needs Cython installed.
    core = {"orjson", "msgspec", "picows", "aiofastnet", "re2", "cython"}
    for path in sorted((PACKAGE / "runtime").glob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in GROUP_EXTRAS:
            continue
        required, _ = _imports(path)
        assert required <= core, f"{rel} needs {sorted(required - core)} at import time"
