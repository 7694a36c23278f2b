"""The tools/list cursor indexes the next page (issue 14): opaque to clients, refused with
-32602 when this device did not give it out for its tool set (stale, forged, out of range).

The check is recomputed here (``cursor_for``, the core's formula) only to forge cursors
that pass every test but one; the first test pins that formula to the device's own output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_sim_driver import StdioSim

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import CURSOR_LEN


def cursor_for(fingerprint: str, tool_count: int, index: int) -> str:
    """index (4 hex digits) + FNV-1a of the fingerprint started from index and count (8)."""
    h = ((2166136261 ^ index) + (tool_count << 16)) & 0xFFFFFFFF
    for b in fingerprint.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"{index & 0xFFFF:04x}{h:08x}"


def list_page(sim: StdioSim, cursor: object) -> dict:
    return sim.request("tools/list", {"cursor": cursor, "withUserTools": True})


def all_pages(sim: StdioSim) -> list[dict]:
    pages, cursor = [], ""
    for _ in range(100):
        result = list_page(sim, cursor)["result"]
        pages.append(result)
        if "nextCursor" not in result:
            return pages
        cursor = result["nextCursor"]
    raise AssertionError("tools/list never ended")


@pytest.fixture
def small(small_page_exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(small_page_exe, tmp_path)
    yield s
    s.close()


def fingerprint_of(sim: StdioSim) -> str:
    init = sim.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {}})
    return init["result"]["_meta"]["mcpgen/fingerprint"]


def refused(reply: dict) -> str:
    assert "result" not in reply, reply
    assert reply["error"]["code"] == -32602, reply
    assert "unknown cursor" in reply["error"]["message"]
    return reply["error"]["message"]


def test_full_listing_returns_every_tool_once_in_order(small: StdioSim, small_page_spec: Path) -> None:
    spec = load_spec(small_page_spec)
    pages = all_pages(small)
    assert len(pages) >= 3
    names = [t["name"] for p in pages for t in p["tools"]]
    assert names == [t.name for t in spec.tools]
    cursors = [p["nextCursor"] for p in pages[:-1]]
    assert all(re.fullmatch(f"[0-9a-f]{{{CURSOR_LEN}}}", c) for c in cursors), cursors
    assert len(set(cursors)) == len(cursors)
    # The formula below is the device's: cursor i points at the first tool of page i + 1.
    fp, count, start = fingerprint_of(small), len(spec.tools), 0
    for page, cursor in zip(pages, cursors, strict=False):
        start += len(page["tools"])
        assert cursor == cursor_for(fp, count, start)
    # Asking again from a cursor gives the same page (a cursor is a position, not state).
    assert list_page(small, cursors[1])["result"] == pages[2]


def test_an_escaped_cursor_reads_like_the_plain_one(small: StdioSim) -> None:
    cursor = all_pages(small)[0]["nextCursor"]
    escaped = "".join(f"\\u{ord(c):04x}" for c in cursor)
    small.send_line('{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"' + escaped + '"}}')
    assert small.read_json()["result"] == list_page(small, cursor)["result"]


def test_forged_cursors_are_refused(small: StdioSim) -> None:
    good = all_pages(small)[0]["nextCursor"]
    flip = "0" if good[-1] != "0" else "1"
    for forged in (
        good[:-1] + flip,  # check off by one digit
        good[:4] + "00000000",
        good.upper(),  # not the text the device writes
        good + "0",
        good[:-1],
        "self.audio_speaker.set_volume",  # the old name-as-cursor format
        "zzzzzzzzzzzz",
        "\u00e9" * CURSOR_LEN,
        "x" * 3000,
    ):
        message = refused(list_page(small, forged))
        assert len(message) < 200  # never echoes the whole input
    # A refused cursor changes nothing: the listing still works from the start.
    assert list_page(small, "")["result"]["tools"]


def test_stale_cursors_from_another_spec_are_refused(small: StdioSim, sim: StdioSim) -> None:
    # The same index under another spec's fingerprint, and a real cursor of the small-page
    # device given to the default device (same tools, other page size, other fingerprint).
    small_cursor = all_pages(small)[0]["nextCursor"]
    index = int(small_cursor[:4], 16)
    count = len(all_pages(sim)[0]["tools"])
    assert index < count  # in range on the default device too: only the check refuses it
    refused(list_page(sim, small_cursor))
    other = cursor_for("0" * 64, count, index)
    refused(list_page(sim, other))
    assert list_page(sim, cursor_for(fingerprint_of(sim), count, index))["result"]["tools"]


def test_out_of_range_cursors_are_refused(small: StdioSim, small_page_spec: Path) -> None:
    count = len(load_spec(small_page_spec).tools)
    fp = fingerprint_of(small)
    for index in (count, count + 1, 0xFFFF):  # with a correct check for that index
        refused(list_page(small, cursor_for(fp, count, index)))
    last = list_page(small, cursor_for(fp, count, count - 1))["result"]
    assert [t["name"] for t in last["tools"]] == [load_spec(small_page_spec).tools[-1].name]
    assert "nextCursor" not in last


def test_cursor_type_errors(sim: StdioSim) -> None:
    reply = sim.request("tools/list", {"cursor": 5})
    assert reply["error"]["code"] == -32602
    assert json.dumps(reply["error"]["message"]).count("cursor must be a string") == 1


def test_a_cursor_at_a_user_only_tool_skips_it_unlisted(small: StdioSim, small_page_spec: Path) -> None:
    tools = load_spec(small_page_spec).tools
    index = next(i for i, t in enumerate(tools) if t.user_only)
    cursor = cursor_for(fingerprint_of(small), len(tools), index)
    hidden = small.request("tools/list", {"cursor": cursor})["result"]["tools"]
    assert hidden[0]["name"] == next(t.name for t in tools[index:] if not t.user_only)
    shown = list_page(small, cursor)["result"]["tools"]
    assert shown[0]["name"] == tools[index].name
