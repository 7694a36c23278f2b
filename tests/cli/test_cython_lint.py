"""The compiled runtime modules pass cython-lint ([tool.cython-lint] in pyproject.toml), as
``scripts/dev.sh test`` checks them: every ``.pxd`` under runtime/ and the ``.py`` beside it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_compiled_modules_pass_cython_lint() -> None:
    pxds = sorted(REPO.glob("runtime/**/*.pxd"))
    assert len(pxds) >= 6, pxds
    files = [str(p) for pxd in pxds for p in (pxd, pxd.with_suffix(".py"))]
    # the console script installed beside this interpreter (the package has no __main__)
    tool = Path(sys.executable).with_name("cython-lint")
    command = str(tool) if tool.exists() else shutil.which("cython-lint")
    assert command, "cython-lint is not installed: pip install -e '.[test]'"
    # cython-lint runs `pycodestyle` from PATH: the one installed beside it (a pyenv or
    # unactivated interpreter's scripts folder is not on PATH)
    path = os.pathsep.join([str(Path(command).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path}
    proc = subprocess.run([command, *files], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
