"""The interactive console's Tab completion (commands, tool names, parameters) and its
"did you mean" for an unknown tool or command."""

from __future__ import annotations

import asyncio
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cli_testlib import codegen, copy_spec

from mcpgen.codegen.run.completer import ConsoleCompleter
from mcpgen.codegen.run.console import Console, LineReader


@dataclass
class Tool:
    name: str
    input_schema: dict[str, Any]
    description: str = ""
    user_only: bool = False


@dataclass
class Device:
    """The part of the runtime's Device the console reads for these commands."""

    tools: list[Tool] = field(
        default_factory=lambda: [
            Tool("self.light.set_rgb", {"properties": {"r": {}, "g": {}, "b": {}}}),
            Tool("self.light.set_power", {"properties": {"on": {}}}),
            Tool("self.light.get_state", {"properties": {}}),
        ]
    )


COMPLETER = ConsoleCompleter.for_tools(Device().tools)


def test_first_word_commands_and_tools() -> None:
    assert COMPLETER.candidates("") == [
        "call",
        "help",
        "log",
        "ping",
        "quit",
        "schema",
        "self.light.get_state",
        "self.light.set_power",
        "self.light.set_rgb",
        "tools",
    ]
    assert COMPLETER.candidates("s") == [
        "schema",
        "self.light.get_state",
        "self.light.set_power",
        "self.light.set_rgb",
    ]
    assert COMPLETER.candidates("self.light.set_") == ["self.light.set_power", "self.light.set_rgb"]


def test_tool_names_after_call_and_schema() -> None:
    assert COMPLETER.candidates("call self.light.g") == ["self.light.get_state"]
    assert COMPLETER.candidates("schema ") == [
        "self.light.get_state",
        "self.light.set_power",
        "self.light.set_rgb",
    ]


def test_parameters_not_yet_given() -> None:
    assert COMPLETER.candidates("self.light.set_rgb ") == ["b=", "g=", "r="]
    assert COMPLETER.candidates("call self.light.set_rgb r=1 ") == ["b=", "g="]
    assert COMPLETER.candidates("self.light.set_rgb r=1 g") == ["g="]
    assert COMPLETER.candidates("self.nope ") == []
    assert COMPLETER.candidates('self.light.set_rgb "r=') == []  # inside an open quote


def _run(lines: list[str]) -> list[str]:
    out: list[str] = []
    console = Console(Device(), out.append)

    async def go() -> None:
        for line in lines:
            await console.handle(line)

    asyncio.run(go())
    return out


def test_did_you_mean_for_an_unknown_tool_and_command() -> None:
    out = _run(
        [
            "call self.light.set_rbg r=1",
            "schema self.ligth.get_state",
            "self.light.set_powr on=true",
            "tols",
            "frobnicate",
        ]
    )
    assert out == [
        "no tool 'self.light.set_rbg'; did you mean `self.light.set_rgb`? (`tools` lists them)",
        "no tool 'self.ligth.get_state'; did you mean `self.light.get_state`? (`tools` lists them)",
        "unknown command 'self.light.set_powr'; did you mean `self.light.set_power`? "
        "(`help` lists the commands)",
        "unknown command 'tols'; did you mean `tools`? (`help` lists the commands)",
        "unknown command 'frobnicate' (`help` lists the commands)",
    ]


def test_the_line_reader_installs_the_completer_on_a_terminal() -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

        def readline(self) -> str:
            return ""

    reader = LineReader(Tty())
    if reader.readline is None:  # no readline on this platform: nothing to install
        return
    reader.use_completer(COMPLETER)
    assert reader.readline.get_completer() == COMPLETER.complete
    assert reader.readline.get_completer_delims() == " \t\n"


def test_tab_completes_on_a_terminal(tmp_path: Path) -> None:
    """A real readline session on a pseudo-terminal: Tab turns a prefix into the tool's
    name (then the call runs), and after the name offers its parameters."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    pytest.importorskip("termios")
    pytest.importorskip("readline")
    from test_run_interactive import _env, _pty_session

    spec = copy_spec(tmp_path)
    out = str(tmp_path / "o")
    assert codegen("build", str(spec), "-o", out, "--no-compile-bindings", "-q").returncode == 0
    screen, rc = _pty_session(
        [sys.executable, "-m", "mcpgen", "run", str(spec), "--target", "host", "-i", "-q", "-o", out],
        tmp_path,
        _env(tmp_path),
        [
            b"self.light.get_st\t\r",
            b"call self.light.set_po\ton=true\r",
            b"self.light.set_rgb r\t1 g=2 b=3\r",
            b"\x04",
        ],
    )
    assert rc == 0, screen
    history = (tmp_path / "history").read_text().splitlines()
    assert history[-3:] == [
        "self.light.get_state ",
        "call self.light.set_power on=true",
        "self.light.set_rgb r=1 g=2 b=3",
    ]
    assert '-> {"on"' in screen and "-> true" in screen
