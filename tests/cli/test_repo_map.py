"""The map is true: every source file that the docs, the READMEs and the code's comments
name by its repository path exists (renames used to leave such references behind:
firmware READMEs and C++ comments named ``codegen/build_*.py`` long after they moved)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("codegen", "runtime", "firmware_template", "toolspec", "scripts", "benchmarks", "src", "docs")
READ = (".md", ".py", ".h", ".cpp", ".cc")
# A repository path of a source file, not inside a longer path or name.
REFERENCE = re.compile(
    r"(?<![\w/.-])((?:codegen|runtime|firmware_template|toolspec|scripts|benchmarks|src/mcpgen)"
    r"/[\w/.-]*\w\.(?:py|pyx|pxd|h|cpp|cc|sh))\b"
)


def _files() -> list[Path]:
    out = sorted(REPO.glob("*.md"))  # README.md, CONTRIBUTING.md
    for folder in FOLDERS:
        out += [p for p in (REPO / folder).rglob("*") if p.suffix in READ and p.is_file()]
    return out


def test_every_source_path_named_exists() -> None:
    missing = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in REFERENCE.finditer(text):
            ref = m.group(1)
            # Relative to the repository, the file's folder, or the firmware tree (core/, ports/).
            if not any((base / ref).exists() for base in (REPO, path.parent, REPO / "firmware_template")):
                line = text.count("\n", 0, m.start()) + 1
                missing.append(f"{path.relative_to(REPO)}:{line}: {ref}")
    assert not missing, "these files name paths that do not exist (fix the reference):\n" + "\n".join(missing)
