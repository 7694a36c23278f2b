"""``codegen completion bash|zsh|fish``: the scripts are generated, bash loads its script,
and a Tab answered through it completes commands and ``--target`` values from the parser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_testlib import REPO, codegen

pytest.importorskip("argcomplete")
BASH = shutil.which("bash")


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_loads_the_script() -> None:
    proc = codegen("completion", "bash")
    assert proc.returncode == 0, proc.stderr
    show = 'eval "$1"; complete -p codegen; complete -p mcpgen'
    loaded = subprocess.run([BASH, "-c", show, "_", proc.stdout], capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.splitlines() == [
        "complete -o bashdefault -o default -o nospace -F _python_argcomplete codegen",
        "complete -o bashdefault -o default -o nospace -F _python_argcomplete mcpgen",
    ]


@pytest.mark.parametrize(
    ("shell", "marker"), [("zsh", "#compdef codegen mcpgen"), ("fish", "complete --command codegen")]
)
def test_zsh_and_fish_scripts(shell: str, marker: str) -> None:
    proc = codegen("completion", shell)
    assert proc.returncode == 0, proc.stderr
    assert marker in proc.stdout and "mcpgen" in proc.stdout


def test_unknown_shell_is_refused() -> None:
    proc = codegen("completion", "tcsh")
    assert proc.returncode == 2 and "invalid choice: 'tcsh'" in proc.stderr


def _tab(line: str, tmp_path: Path) -> list[str]:
    """What bash offers for a Tab at the end of ``line`` through the loaded script."""
    assert BASH is not None
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    wrapper = bindir / "codegen"  # the installed entry point may not be on PATH: the same main()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcpgen "$@"\n')
    wrapper.chmod(0o755)
    script = codegen("completion", "bash").stdout
    words = line.split(" ")
    drive = (
        f'eval "$1"; COMP_LINE="{line}"; COMP_POINT={len(line)}; COMP_WORDS=({" ".join(words)} "" ); '
        f"COMP_CWORD={len(words) - (0 if line.endswith(' ') else 1)}; COMP_TYPE=9; "
        '_python_argcomplete codegen; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    if not line.endswith(" "):
        drive = drive.replace(' "" )', " )")
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(
        [BASH, "-c", drive, "_", script], capture_output=True, text=True, timeout=120, env=env, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    return sorted(w.strip() for w in proc.stdout.splitlines() if w.strip())


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_a_tab_completes_commands_and_targets(tmp_path: Path) -> None:
    assert _tab("codegen b", tmp_path) == ["bridge", "build"]
    shells = _tab("codegen completion ", tmp_path)
    assert {"bash", "fish", "zsh"} <= set(shells) and "build" not in shells  # (and the options)
    assert _tab("codegen run spec.yaml --target esp32", tmp_path) == ["esp32", "esp32c3", "esp32s3"]
