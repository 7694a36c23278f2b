"""Writes generated trees, touching only files whose content changed."""

from __future__ import annotations

from pathlib import Path


def write_tree(outdir: Path, files: dict[str, str]) -> list[Path]:
    """Writes ``files`` (relative path -> text) under ``outdir``; returns the paths written."""
    written: list[Path] = []
    for rel in sorted(files):
        path = outdir / rel
        data = files[rel].encode("utf-8")
        if path.exists() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        written.append(path)
    return written


def write_once(path: Path, text: str) -> bool:
    """Writes a user-owned starter file only if it does not exist yet."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True
