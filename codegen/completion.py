"""Shell completion of ``codegen`` (and ``mcpgen``) for bash, zsh and fish, by argcomplete.

Why argcomplete (not shtab, not hand-written scripts): it is the well-kept completer for
argparse that covers all three shells, and it completes from the parser itself at each
Tab, so commands, options, ``--target`` choices and file names can never drift from the
CLI. ``codegen completion SHELL`` prints the script to load; ``main`` hands a completion
request (argcomplete's ``_ARGCOMPLETE`` environment) to :func:`complete` before parsing.
"""

from __future__ import annotations

import argparse
import os

SHELLS = ("bash", "zsh", "fish")
PROGRAMS = ("codegen", "mcpgen")

INSTALL = {
    "bash": 'eval "$(codegen completion bash)"   # in ~/.bashrc',
    "zsh": 'eval "$(codegen completion zsh)"    # in ~/.zshrc',
    "fish": "codegen completion fish > ~/.config/fish/completions/codegen.fish",
}


class CompletionUnavailable(RuntimeError):
    """argcomplete is not installed."""


def script(shell: str) -> str:
    """The completion script of ``shell`` for both program names."""
    if shell not in SHELLS:
        raise ValueError(f"unknown shell {shell!r}; expected one of {', '.join(SHELLS)}")
    try:
        import argcomplete
    except ImportError as exc:
        raise CompletionUnavailable("argcomplete is not installed: pip install argcomplete") from exc
    return str(argcomplete.shellcode(list(PROGRAMS), shell=shell))


def complete(parser: argparse.ArgumentParser) -> None:
    """Answers a completion request and exits, when the shell sent one; else returns at once."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    try:
        import argcomplete
    except ImportError:
        return
    _load_options_of_named_commands(parser)
    argcomplete.autocomplete(parser)


def _load_options_of_named_commands(parser: argparse.ArgumentParser) -> None:
    """A command whose options are read on first use (``codegen bridge``, ``console``,
    ``ota``: see ``load_options`` in :mod:`mcpgen.codegen.cli`) gets them before argcomplete
    reads the parser, when the line being completed names it; the others stay unread."""
    words = os.environ.get("COMP_LINE", "").split()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word in words:
                load = getattr(action.choices.get(word), "load_options", None)
                if callable(load):
                    load()
