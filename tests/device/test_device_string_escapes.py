"""The writer's string escaping (json_writer.cpp) at every position of short and long
strings: plain text is copied whole words at a time (8 bytes on a 64-bit host, then two
overlapping 4-byte looks for a 4..7-byte tail, else byte by byte), so a character that
needs an escape must be found wherever it sits. The unknown-tool error quotes the name
back through the writer, which makes it the probe."""

from __future__ import annotations

import json

import pytest
from device_sim_driver import StdioSim

# One character that needs a look of its own, in each class the writer handles.
SPECIAL = ['"', "\\", "\n", "\u0001", "\u007f", "\u00e9", "\U0001f600"]


def unknown_tool_message(sim: StdioSim, name: str) -> str:
    reply = sim.request("tools/call", {"name": name, "arguments": {}})
    assert reply["error"]["code"] == -32601, reply
    return str(reply["error"]["message"])


@pytest.mark.parametrize("special", SPECIAL, ids=[f"U+{ord(c):04X}" for c in SPECIAL])
def test_a_special_character_is_escaped_at_every_position(sim: StdioSim, special: str) -> None:
    # Lengths 1..20 cover the byte loop, the 4-byte tail looks and whole words with a tail.
    for length in range(1, 21):
        for at in range(length):
            name = "a" * at + special + "b" * (length - at - 1)
            assert unknown_tool_message(sim, name) == "Unknown tool: " + name, (length, at)


def test_plain_names_of_every_short_length_come_back_whole(sim: StdioSim) -> None:
    for length in range(0, 24):
        name = "".join(chr(0x21 + (i * 7) % 90) for i in range(length)).replace('"', "#").replace("\\", "/")
        assert unknown_tool_message(sim, name) == "Unknown tool: " + name


def test_the_reply_text_is_the_escaped_json_the_python_side_expects(sim: StdioSim) -> None:
    name = 'q"x\\y\tz'
    sim.send_line(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": name}}))
    line = sim.read_line()
    assert '"Unknown tool: q\\"x\\\\y\\tz"' in line  # the short escapes, not \u00XX
