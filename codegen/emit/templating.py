"""The Jinja2 set-up shared by the emitters (emit_cpp, emit_python, emit_xiaozhi).

Every emitter renders its templates with the same options: a missing variable is an
error, trailing newlines are kept, block tags leave no blank lines or indentation behind,
and nothing is HTML-escaped (the output is source code).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES_ROOT = Path(__file__).resolve().parent / "templates"


def environment(
    template_dir: Path, filters: Mapping[str, Callable[..., Any]] | None = None
) -> jinja2.Environment:
    """A Jinja2 environment loading from ``template_dir``, with ``filters`` added."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    if filters:
        env.filters.update(filters)
    return env
