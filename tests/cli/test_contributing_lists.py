"""CONTRIBUTING's file lists stay whole: "Adding a spec keyword" names every file that holds
an existing keyword (``max_length``), and both lists name only paths that exist.

A list written once by hand rots as soon as the code moves (the first one named about half of
the files a constraint really lives in); this grep is what keeps it true.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEYWORD = "max_length"
# Where the grep does not look: the lists themselves, history, build output and caches.
SKIP_FILES = {"CONTRIBUTING.md", "CHANGELOG.md"}
SKIP_DIRS = {"build", "dist", "out", "__pycache__", "node_modules"}
TEXT = {
    ".py",
    ".pyx",
    ".pxd",
    ".h",
    ".hpp",
    ".cpp",
    ".cc",
    ".c",
    ".S",
    ".ld",
    ".md",
    ".j2",
    ".yaml",
    ".yml",
    ".json",
    ".toml",
    ".txt",
    ".cfg",
    ".ini",
    ".sh",
    ".projbuild",
}
# A repository path written in the lists: `folder/.../file.ext`, `folder/.../` or a dotfile.
ROOTS = {
    "codegen",
    "runtime",
    "firmware_template",
    "toolspec",
    "tests",
    "docs",
    "benchmarks",
    "scripts",
    "src",
    ".importlinter",
    "pyproject.toml",
    "CHANGELOG.md",
    "README.md",
}
NAMED = re.compile(r"`((?:[\w.-]+/)+(?:[\w.<>-]+)?|\.importlinter|[\w-]+\.md)`")


def _section(title: str) -> str:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _searched(path: Path) -> bool:
    """True for a source file the grep reads: outside ``tests/`` (where a keyword is mostly only
    written in a spec), except the fakes and helpers that check arguments as the device does."""
    rel = path.relative_to(REPO)
    parts = rel.parts
    if any(p.startswith(".") or p in SKIP_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
        return False
    if rel.as_posix() in SKIP_FILES or path.suffix not in TEXT:
        return False
    if path.suffix == ".c" and parts[0] != "firmware_template":
        return False  # Cython's output beside its module, not a source
    if parts[0] == "tests":
        return "fakes" in parts or parts[:2] == ("tests", "support")
    return True


def _holding(word: str) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in SKIP_DIRS or d.endswith(".egg-info"))]
        for name in files:
            path = Path(folder) / name
            if _searched(path) and word in path.read_text(encoding="utf-8", errors="replace"):
                out.append(path.relative_to(REPO).as_posix())
    return sorted(out)


def test_keyword_list_names_every_file_holding_max_length() -> None:
    section = _section("Adding a spec keyword")
    holding = _holding(KEYWORD)
    assert "codegen/spec/model.py" in holding, "the grep found nothing: is KEYWORD still a spec keyword?"
    missing = [path for path in holding if f"`{path}`" not in section]
    assert not missing, (
        f"CONTRIBUTING.md, 'Adding a spec keyword': these files hold `{KEYWORD}` but the list does not name "
        "them:\n  " + "\n  ".join(missing) + "\n  fix: add each, in backquotes, under the part it belongs to "
        "(spec, emitters, device core, runtime, docs, benchmarks)"
    )


def test_named_test_files_still_test_the_keyword() -> None:
    section = _section("Adding a spec keyword")
    named = [m for m in NAMED.findall(section) if m.startswith("tests/") and m.endswith(".py")]
    assert named, "the list names no test file"
    stale = [p for p in named if not (REPO / p).is_file() or KEYWORD not in (REPO / p).read_text("utf-8")]
    assert not stale, f"CONTRIBUTING.md names tests without `{KEYWORD}`: {stale}; fix: name those testing it"


def test_listed_paths_exist() -> None:
    missing = []
    for title in ("Adding a spec keyword", "Adding a transport"):
        for ref in NAMED.findall(_section(title)):
            if ref.split("/", 1)[0] not in ROOTS:
                continue  # relative to a folder the text names (`mcpgen/...` in the core)
            path = ref.split("<", 1)[0]  # `.../transport_<name>.cpp`: its folder must exist
            if "<" in ref:
                path = path.rsplit("/", 1)[0]
            if not (REPO / path).exists():
                missing.append(f"{title}: {ref}")
    assert not missing, "CONTRIBUTING.md names paths that do not exist (fix each):\n" + "\n".join(missing)


def test_transport_list_names_the_contract_it_asks_for() -> None:
    section = _section("Adding a transport")
    contracts = (REPO / ".importlinter").read_text(encoding="utf-8")
    for contract in ("transports-apart", "runtime-layers"):
        assert f"`{contract}`" in section
        assert f"[importlinter:contract:{contract}]" in contracts, f".importlinter has no contract {contract}"
    # Every transport folder is in the independence contract the list asks a new one to join.
    folders = sorted(p.name for p in (REPO / "runtime" / "links").iterdir() if (p / "__init__.py").is_file())
    for name in folders:
        assert f"mcpgen.runtime.links.{name}\n" in contracts, f"runtime/links/{name}/ not in transports-apart"
