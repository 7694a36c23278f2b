"""Resources on the host simulator (issue 30): initialize announces them, resources/list and
resources/templates/list page in the tools/list budget with opaque cursors, resources/read
serves text and base64 bytes (fixed URIs and templates), and every failure is an error
carrying the request's id: unknown URI (-32002), bad template values (-32602), content
over max_size or over the reply buffer (-32603)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_sim_driver import StdioSim

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.resource_json import list_entry
from mcpgen.codegen.targets.host import build_host

ICON_LEN = 88  # bytes of the lamp's PNG icon (desk_lamp_handlers.cpp)


def read(sim: StdioSim, uri: object) -> dict:
    return sim.request("resources/read", {"uri": uri})


def test_initialize_announces_resources(lamp: StdioSim) -> None:
    caps = lamp.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})["result"][
        "capabilities"
    ]
    assert caps == {"tools": {}, "resources": {"subscribe": True}}  # status has subscribe: true


def test_lists_hold_the_spec_entries(lamp: StdioSim, lamp_spec_resources: list[dict]) -> None:
    fixed = lamp.request("resources/list")["result"]
    assert fixed == {"resources": [e for e in lamp_spec_resources if "uri" in e]}
    templates = lamp.request("resources/templates/list")["result"]
    assert templates == {"resourceTemplates": [e for e in lamp_spec_resources if "uriTemplate" in e]}
    assert [e["uri"] for e in fixed["resources"]] == ["lamp://status", "lamp://icon.png"]


def test_read_text_resource_follows_the_tools(lamp: StdioSim) -> None:
    [content] = read(lamp, "lamp://status")["result"]["contents"]
    assert content["uri"] == "lamp://status" and content["mimeType"] == "application/json"
    assert json.loads(content["text"])["on"] is False
    lamp.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3})
    lamp.call("self.timer.set", {"minutes": 30})
    lamp.call("self.light.set_effect", {"effect": "candle"})
    state = json.loads(read(lamp, "lamp://status")["result"]["contents"][0]["text"])
    assert state == {"on": False, "rgb": [1, 2, 3], "timer_minutes": 30, "effect": "candle"}


def test_read_binary_resource_is_base64(lamp: StdioSim) -> None:
    [content] = read(lamp, "lamp://icon.png")["result"]["contents"]
    assert "text" not in content and content["mimeType"] == "image/png"
    png = base64.b64decode(content["blob"], validate=True)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) == ICON_LEN


@pytest.mark.parametrize("length", [0, 1, 2, 3, 4, 5, 6, 7, 8, 20, 255, 1000, 7000])
def test_template_binary_of_every_padding(lamp: StdioSim, length: int) -> None:
    [content] = read(lamp, f"lamp://pattern/{length}")["result"]["contents"]
    assert content["uri"] == f"lamp://pattern/{length}"
    assert base64.b64decode(content["blob"], validate=True) == bytes(i & 0xFF for i in range(length))


def test_template_text_with_a_percent_encoded_value(lamp: StdioSim) -> None:
    [content] = read(lamp, "lamp://effects/rainbow")["result"]["contents"]
    assert content == {
        "uri": "lamp://effects/rainbow",
        "mimeType": "text/plain",
        "text": "rainbow: colours cycling around the wheel",
    }
    # %63 is "c": variables are percent-decoded before they are checked.
    [content] = read(lamp, "lamp://effects/%63andle")["result"]["contents"]
    assert content["text"] == "candle: warm flicker" and content["uri"] == "lamp://effects/%63andle"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("lamp://pattern/abc", 'length must be an integer, got "abc"'),
        ("lamp://pattern/-1", "length must be in range [0, 65536], got -1"),
        ("lamp://pattern/99999999999999999999", "length must be an integer"),
        ("lamp://pattern/%zz", "length has a bad percent-encoding"),
        ("lamp://effects/disco", 'name must be one of none, breathe, rainbow, candle, got "disco"'),
    ],
)
def test_bad_template_values_are_invalid_params(lamp: StdioSim, uri: str, message: str) -> None:
    reply = read(lamp, uri)
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["message"].startswith("Invalid params: " + message), reply
    assert reply["id"] is not None


def test_a_uri_with_json_escapes_is_matched_decoded_and_echoed(lamp: StdioSim) -> None:
    # The reply echoes an unescaped URI token as it came and re-escapes a decoded one.
    escaped = "lamp:\\/\\/effects\\/\\u0063andle"  # the JSON text of lamp://effects/candle
    lamp.send_line('{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"' + escaped + '"}}')
    [content] = lamp.read_json()["result"]["contents"]
    assert content == {
        "uri": "lamp://effects/candle",
        "mimeType": "text/plain",
        "text": "candle: warm flicker",
    }


@pytest.mark.parametrize("uri", ["lamp://effects/candle%00", "lamp://effects/%00", "lamp://effects/%FF"])
def test_an_enum_variable_that_is_not_text_is_refused_as_such(lamp: StdioSim, uri: str) -> None:
    # Checked in the spec's order: UTF-8 without NUL first, then the enum.
    reply = read(lamp, uri)
    message = "Invalid params: name must be UTF-8 text without NUL"
    assert reply["error"] == {"code": -32602, "message": message}


def test_a_repeated_uri_is_refused(lamp: StdioSim) -> None:
    params = '{"uri":"lamp://status","uri":"lamp://icon.png"}'
    lamp.send_line('{"jsonrpc":"2.0","id":8,"method":"resources/read","params":' + params + "}")
    reply = lamp.read_json()
    assert reply["id"] == 8 and reply["error"]["code"] == -32602
    assert reply["error"]["message"] == 'Invalid params: duplicate key "uri"'


@pytest.mark.parametrize("uri", ["lamp://nothing", "lamp://status/", "lamp://statu", "lamp://effects", ""])
def test_unknown_uri(lamp: StdioSim, uri: str) -> None:
    reply = read(lamp, uri)
    assert reply["error"]["code"] == -32002, reply
    assert reply["error"]["message"] == f"Resource not found: {json.dumps(uri)}"


def test_uri_must_be_a_string(lamp: StdioSim) -> None:
    for params in ({"uri": 3}, {}):
        reply = lamp.request("resources/read", params)
        assert reply["error"] == {"code": -32602, "message": "Invalid params: uri must be a string"}


def test_content_over_the_reply_buffer_is_a_short_error_with_the_id(lamp: StdioSim) -> None:
    reply = lamp.request("resources/read", {"uri": "lamp://pattern/65536"}, id="big-1")
    assert reply["id"] == "big-1"
    assert reply["error"]["code"] == -32603
    assert "response buffer too small" in reply["error"]["message"]
    assert len(json.dumps(reply)) < 300
    assert lamp.call("self.timer.set", {"minutes": 5})["isError"] is False  # still serving


PAGES_SPEC = (
    """
device: {name: res-pages, version: "1", page_size: 200}
tools:
  - name: t
    description: d
resources:
"""
    + "".join(
        f"  r{i}:\n    description: Resource number {i}.\n    mime_type: text/plain\n    uri: res://r{i}\n"
        "    content: text\n"
        for i in range(7)
    )
    + """  big:
    description: More than its bound.
    mime_type: application/octet-stream
    uri: res://big
    content: binary
    max_size: 4
  twice:
    description: Two values.
    mime_type: text/plain
    uri_template: res://t/{a}-{b}
    params:
      a: {type: integer}
      b: {type: boolean}
    content: text
  lengthy:
    description: L
    mime_type: t/p
    uri_template: r:{v_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}
    params:
      v_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: {type: string, max_length: 8}
    content: text
"""
)

PAGES_HANDLERS = """
#include "mcp_tools.h"
namespace tools {
mcpgen::Result t(const TArgs&, mcpgen::Context&) { return mcpgen::Result::None(); }
}
namespace resources {
#define R(i) mcpgen::ReadStatus read_r##i(mcpgen::ResourceWriter& out, mcpgen::Context&) { out.text(#i); \\
  return mcpgen::ReadStatus::kOk; }
R(0) R(1) R(2) R(3) R(4) R(5) R(6)
mcpgen::ReadStatus read_big(mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.bytes("12345", 5);
  return mcpgen::ReadStatus::kOk;
}
mcpgen::ReadStatus read_lengthy(const ResourceArgs_lengthy& args, mcpgen::ResourceWriter& out,
                               mcpgen::Context&) {
  out.text(args.v_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx);
  return mcpgen::ReadStatus::kOk;
}
mcpgen::ReadStatus read_twice(const ResourceArgs_twice& args, mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.text(args.b ? "yes " : "no ");
  char n[21];
  mcpgen::format_int64(args.a, n);
  out.text(n);
  return mcpgen::ReadStatus::kOk;
}
}
"""


@pytest.fixture(scope="module")
def pages_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("res_pages")
    (d / "res_pages.yaml").write_text(PAGES_SPEC, encoding="utf-8")
    (d / "res_pages_handlers.cpp").write_text(
        '#include "mcpgen/text_format.h"\n' + PAGES_HANDLERS, encoding="utf-8"
    )
    return build_host(d / "res_pages.yaml", tmp_path_factory.mktemp("build_res_pages"), log=lambda _: None)


@pytest.fixture
def pages(pages_exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(pages_exe, tmp_path)
    yield s
    s.close()


def test_list_pages_within_page_size(pages: StdioSim) -> None:
    seen: list[str] = []
    cursor = None
    for _ in range(20):
        params = {"cursor": cursor} if cursor else {}
        result = pages.request("resources/list", params)["result"]
        assert len(json.dumps(result, separators=(",", ":"))) <= 200
        seen += [e["uri"] for e in result["resources"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        assert len(cursor) == 12
    assert seen == [f"res://r{i}" for i in range(7)] + ["res://big"]
    reply = pages.request("resources/list", {"cursor": "000100000000"})
    assert reply["error"]["code"] == -32602 and "unknown cursor" in reply["error"]["message"]
    # A resources/list cursor means nothing to resources/templates/list.
    first = pages.request("resources/list")["result"]["nextCursor"]
    reply = pages.request("resources/templates/list", {"cursor": first})
    assert reply["error"]["code"] == -32602


def test_template_with_two_variables(pages: StdioSim) -> None:
    assert (
        pages.request("resources/read", {"uri": "res://t/12-true"})["result"]["contents"][0]["text"]
        == "yes 12"
    )
    assert (
        pages.request("resources/read", {"uri": "res://t/3-false"})["result"]["contents"][0]["text"] == "no 3"
    )
    reply = pages.request("resources/read", {"uri": "res://t/1-maybe"})
    assert reply["error"]["message"] == 'Invalid params: b must be true or false, got "maybe"'


def test_content_over_max_size(pages: StdioSim) -> None:
    reply = pages.request("resources/read", {"uri": "res://big"})
    assert reply["error"] == {
        "code": -32603,
        "message": "Internal error: resource big is larger than its max_size (4 bytes)",
    }


@pytest.fixture(scope="module")
def lamp_spec_resources() -> list[dict]:
    from device_testlib import LAMP_SPEC

    return [list_entry(r) for r in load_spec(LAMP_SPEC).resources]


def test_starter_handlers_of_a_spec_with_resources_build_and_answer_not_found(tmp_path: Path) -> None:
    """codegen writes a starter handlers file with a stub per resource; it compiles, and
    each stub reports "not found" until it is written."""
    from device_testlib import LAMP_SPEC

    spec = tmp_path / "spec" / LAMP_SPEC.name
    spec.parent.mkdir()
    spec.write_text(LAMP_SPEC.read_text(encoding="utf-8"), encoding="utf-8")
    exe = build_host(spec, tmp_path / "build", log=lambda _: None)
    assert "mcpgen::ReadStatus read_pattern(" in (spec.parent / "desk_lamp_handlers.cpp").read_text()
    sim = StdioSim(exe, tmp_path)
    try:
        reply = sim.request("resources/read", {"uri": "lamp://pattern/3"})
        assert reply["error"] == {
            "code": -32002,
            "message": "Resource not found: pattern has nothing at this URI",
        }
    finally:
        sim.close()


def test_subscribe_sends_updated_until_unsubscribed(lamp: StdioSim) -> None:
    assert lamp.request("resources/subscribe", {"uri": "lamp://status"})["result"] == {}
    lamp.send_line(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 900,
                "method": "tools/call",
                "params": {"name": "self.light.set_rgb", "arguments": {"r": 1, "g": 1, "b": 1}},
            }
        )
    )
    note = lamp.read_json()
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "lamp://status"},
    }
    assert lamp.read_json()["id"] == 900
    assert lamp.request("resources/unsubscribe", {"uri": "lamp://status"})["result"] == {}
    lamp.call("self.light.set_rgb", {"r": 2, "g": 2, "b": 2})  # the reply comes first: no notification
    assert lamp.no_line()


def test_subscribe_refusals(lamp: StdioSim) -> None:
    reply = lamp.request("resources/subscribe", {"uri": "lamp://icon.png"})
    assert reply["error"] == {
        "code": -32602,
        "message": "Invalid params: resource icon does not support subscribe",
    }
    reply = lamp.request("resources/subscribe", {"uri": "lamp://none"})
    assert reply["error"]["code"] == -32002


def test_no_subscribe_capability_without_subscribable_resources(pages: StdioSim) -> None:
    caps = pages.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})["result"][
        "capabilities"
    ]
    assert caps == {"tools": {}, "resources": {}}


def test_other_resources_methods_are_not_found(lamp: StdioSim) -> None:
    reply = lamp.request("resources/nothing", {})
    assert reply["error"] == {"code": -32601, "message": "Method not found: resources/nothing"}


@pytest.mark.parametrize("method", ["resources/reax", "resources/Read", "resources/xead"])
def test_a_method_of_read_s_length_is_not_taken_for_it(lamp: StdioSim, method: str) -> None:
    # The core tells an unescaped resources/read by its length and its last four bytes.
    reply = lamp.request(method, {"uri": "lamp://effects/candle"})
    assert reply["error"] == {"code": -32601, "message": f"Method not found: {method}"}


def test_an_escaped_resources_read_is_still_a_read(lamp: StdioSim) -> None:
    # Decided by the decoded text (the raw bytes "resources/ route it; \u0072 is r).
    line = '{"jsonrpc":"2.0","id":9,"method":"resources/\\u0072ead","params":{"uri":"lamp://effects/candle"}}'
    lamp.send_line(line)
    reply = lamp.read_json()
    assert reply["id"] == 9
    assert reply["result"]["contents"][0]["text"] == "candle: warm flicker"


def test_a_spec_without_resources_answers_resources_methods_not_found(sim: StdioSim) -> None:
    caps = sim.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})["result"][
        "capabilities"
    ]
    assert caps == {"tools": {}}
    reply = sim.request("resources/list", {})
    assert reply["error"] == {"code": -32601, "message": "Method not found: resources/list"}


def test_a_long_variable_name_is_matched(pages: StdioSim) -> None:
    # Variable names have no length limit: the core compares them in place (a fixed-size
    # copy of the name once cut a long one and answered -32603).
    assert pages.request("resources/read", {"uri": "r:abc"})["result"]["contents"][0]["text"] == "abc"
    reply = pages.request("resources/read", {"uri": "r:123456789"})
    assert reply["error"]["code"] == -32602 and "at most 8 characters" in reply["error"]["message"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("self.light.set_power", {"on": True}),
        ("self.timer.set", {"minutes": 5}),
        ("self.light.set_effect", {"effect": "breathe"}),
        ("self.button.press", {}),
        ("self.light.set_rgb", {"r": 3, "g": 2, "b": 1}),
    ],
)
def test_every_tool_that_changes_the_status_announces_it(lamp: StdioSim, tool: str, arguments: dict) -> None:
    """A subscriber of lamp://status hears of every change, not only set_rgb's."""
    assert lamp.request("resources/subscribe", {"uri": "lamp://status"})["result"] == {}
    lamp.send_line(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 901,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
    )
    notes = []
    while True:
        line = lamp.read_json()
        if line.get("id") == 901:
            break
        notes.append(line)
    assert {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "lamp://status"},
    } in notes, notes
