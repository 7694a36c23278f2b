"""Helpers of the CLI tests: run ``python -m mcpgen`` as a user would, copy example specs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "toolspec"

NEW_TOOL = """
  - name: self.fan.set_speed
    description: Set the fan speed.
    params:
      rpm: {type: integer, min: 0, max: 3000}
    returns: boolean
"""


def codegen(
    *args: str,
    cwd: Optional[Path] = None,
    input: Optional[str] = None,
    timeout: float = 300,
    env: Optional[dict[str, str]] = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m mcpgen ARGS`` (the ``codegen`` command) in ``cwd``; output captured."""
    return subprocess.run(
        [sys.executable, "-m", "mcpgen", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
        env=env,
    )


def copy_spec(tmp_path: Path, name: str = "desk_lamp", extra_yaml: str = "") -> Path:
    """Copies ``toolspec/NAME.yaml`` and its handlers into ``tmp_path``, appending ``extra_yaml``."""
    spec = tmp_path / f"{name}.yaml"
    spec.write_text((SPECS / f"{name}.yaml").read_text(encoding="utf-8") + extra_yaml, encoding="utf-8")
    shutil.copy(SPECS / f"{name}_handlers.cpp", tmp_path / f"{name}_handlers.cpp")
    return spec


def line_of(path: Path, needle: str) -> int:
    """1-based number of the first line of ``path`` containing ``needle``."""
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")
