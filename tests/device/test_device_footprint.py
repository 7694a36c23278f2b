"""Measured stack of one message through Server::handle (host, stack painting), and the
static footprint of the core. Run with -s to see the figures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from device_testlib import DEFAULT_SPEC

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.host import CORE_DIR, CXXFLAGS
from mcpgen.codegen.targets.writer import write_tree

MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"capabilities": {"vision": {"url": "http://v"}}},
    },
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"withUserTools": True}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 50}},
    },
    {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {
            "name": "self.display.show_text",
            "arguments": {"text": "h\u00e9llo \U0001f600" * 6, "seconds": 2.5},
        },
    },
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "self.get_device_status"}},
    {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {"name": "self.screen.set_theme", "arguments": {"theme": "purple"}},
    },
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "self.sensor.read_temperature", "arguments": {"unit": "fahrenheit"}},
    },
]


def test_peak_stack_of_handle(tmp_path: Path) -> None:
    spec = load_spec(DEFAULT_SPEC)
    write_tree(tmp_path, emit_cpp.emit(spec))
    gen = tmp_path / "firmware" / "generated"
    exe = tmp_path / "stack_probe"
    sources = [
        *sorted((CORE_DIR / "mcpgen").glob("*.cpp")),
        gen / "mcp_tools.cpp",
        DEFAULT_SPEC.parent / "default_device_handlers.cpp",
        Path(__file__).parent / "stack_probe.cpp",
    ]
    subprocess.run(
        [
            "g++",
            *CXXFLAGS,
            f"-I{CORE_DIR}",
            f"-I{gen}",
            *map(str, sources),
            "-o",
            str(exe),
            "-pthread",
            "-Wl,-z,now",
        ],
        check=True,
    )
    lines = "".join(json.dumps(m) + "\n" for m in MESSAGES)
    lines += '{"jsonrpc":"2.0","id":8,"method":' + "\n"  # parse error
    out = subprocess.run([str(exe)], input=lines, capture_output=True, text=True, check=True).stdout
    rows = [line.split(" ", 1) for line in out.splitlines()]
    assert len(rows) == len(MESSAGES) + 1
    for peak, reply in rows:
        assert reply.startswith('{"jsonrpc":"2.0","id":'), reply
        print(f"stack {int(peak):6d} B  {reply}")
    peaks = [int(p) for p, _ in rows]
    # No DOM, no recursion: one message stays within a few KB even with glibc's snprintf.
    assert 0 < max(peaks) < 8192, peaks
