"""The generated xiaozhi glue against the stock main/mcp_server.h API: compiled with
-Wall -Wextra -Werror, registered with a harness McpServer, and called the way the stock
McpServer::DoToolCall calls tools. The header is the real one from $MCPGEN_XIAOZHI_SRC
when set, else the stand-in in stock_standin/ (see conftest.py)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from xiaozhi_testlib import (
    CXXFLAGS,
    DEFAULT_SPEC,
    LAMP_SPEC,
    NO_EXCEPTIONS,
    STOCK_UNITS,
    Harness,
    compile_unit,
    compile_units,
    glue_sources,
)

from mcpgen.codegen.emit.xiaozhi import SPEC_TOOL_FINGERPRINT_RE, SPEC_TOOL_NAME
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.xiaozhi import build_xiaozhi

pytestmark = pytest.mark.slow

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def _quiet(_: str) -> None:
    pass


@pytest.mark.parametrize("spec", [DEFAULT_SPEC, LAMP_SPEC], ids=["default_device", "desk_lamp"])
def test_every_unit_compiles_with_werror(spec: Path, header_dir: Path, tmp_path: Path):
    glue = build_xiaozhi(spec, tmp_path / "out", log=_quiet)
    objs = compile_units(glue, header_dir, tmp_path / "obj")
    names = {o.name for o in objs}
    assert {"mcpgen_xiaozhi_tools.o", "mcpgen_xiaozhi_port.o", "mcp_tools.o", "mcp_server.o"} <= names
    assert f"{spec.stem}_handlers.o" in names


@pytest.mark.parametrize("spec", [DEFAULT_SPEC, LAMP_SPEC], ids=["default_device", "desk_lamp"])
def test_glue_builds_with_no_exceptions_and_no_rtti(spec: Path, header_dir: Path, tmp_path: Path):
    glue = build_xiaozhi(spec, tmp_path / "out", log=_quiet)
    units = glue_sources(glue)
    # The port, the core, the tables and the handlers: the project's flags, with the real
    # stock header on the include path.
    for src in units:
        if src.name in STOCK_UNITS:
            continue
        proc = compile_unit(src, glue, header_dir, tmp_path / f"{src.stem}.o", CXXFLAGS + NO_EXCEPTIONS)
        assert proc.returncode == 0, f"{src.name}:\n{proc.stderr}"
    # The registration unit includes main/mcp_server.h, which itself throws: it needs
    # exceptions (as the stock firmware has them) but no RTTI ...
    [tools] = [src for src in units if src.name in STOCK_UNITS]
    proc = compile_unit(tools, glue, header_dir, tmp_path / "tools.o", CXXFLAGS + ("-fno-rtti",))
    assert proc.returncode == 0, proc.stderr
    # ... and without exceptions it fails only in the stock header and in the stock adapter
    # (the one place that throws, as the stock McpServer's error path requires), with a
    # message saying which firmware setting to use.
    proc = compile_unit(tools, glue, header_dir, tmp_path / "tools_noexc.o", CXXFLAGS + NO_EXCEPTIONS)
    assert proc.returncode != 0
    where = {Path(m.group(1)).name for m in re.finditer(r"^([^:\s]+):\d+:\d+: error:", proc.stderr, re.M)}
    assert "mcp_server.h" in where, proc.stderr
    assert where <= {"mcp_server.h", "mcpgen_xiaozhi_stock.h"}, proc.stderr
    assert "CONFIG_COMPILER_CXX_EXCEPTIONS=y" in proc.stderr


def _schema_type(p) -> str:
    return "string" if p.type == "number" else p.type


@pytest.mark.parametrize("spec_path", [DEFAULT_SPEC, LAMP_SPEC], ids=["default_device", "desk_lamp"])
def test_registered_tools_match_the_spec(spec_path: Path, request: pytest.FixtureRequest):
    harness: Harness = request.getfixturevalue(
        "default_harness" if spec_path == DEFAULT_SPEC else "lamp_harness"
    )
    spec = load_spec(spec_path)
    listed = harness.list_tools()
    assert [t["name"] for t in listed] == [t.name for t in spec.tools] + [SPEC_TOOL_NAME]
    for entry, tool in zip(listed, spec.tools, strict=False):
        assert entry["user_only"] == tool.user_only
        assert ("annotations" in entry) == tool.user_only
        assert entry["description"].startswith(tool.description)
        schema = entry["inputSchema"]
        assert set(schema["properties"]) == {p.name for p in tool.params}
        assert schema.get("required", []) == [p.name for p in tool.params if p.required]
        for p in tool.params:
            prop = schema["properties"][p.name]
            assert prop["type"] == _schema_type(p)
            if p.default is not None:
                expected = repr(float(p.default)) if p.type == "number" else p.default
                assert prop["default"] == expected
            if p.type == "integer" and p.minimum is not None and p.maximum is not None:
                assert (prop["minimum"], prop["maximum"]) == (p.minimum, p.maximum)
            if p.enum:  # the stock schema has no enum: the description lists the values
                assert "one of " + ", ".join(p.enum) in entry["description"]
    spec_tool = listed[-1]
    assert spec_tool["user_only"] is True
    m = SPEC_TOOL_FINGERPRINT_RE.search(spec_tool["description"])
    assert m is not None and m.group(1) == spec.fingerprint


def test_typed_handlers_run_with_the_decoded_values(default_harness: Harness):
    set_volume, status, brightness, status2 = default_harness.calls(
        ("self.audio_speaker.set_volume", {"volume": 55}),
        ("self.get_device_status", {}),
        ("self.screen.set_brightness", {"brightness": 0}),
        ("self.get_device_status", {}),
    )
    assert set_volume.text == "true"  # bool -> "true"
    assert brightness.text == "true"
    # object: the handler's JsonWriter output, re-parsed with cJSON and sent as text
    assert json.loads(status.text) == {
        "audio_speaker": {"volume": 55},
        "screen": {"brightness": 80, "theme": "light"},
        "battery": {"level": 87, "charging": False},
    }
    assert json.loads(status2.text)["screen"]["brightness"] == 0


def test_integer_results_and_defaults(default_harness: Harness):
    a, b, c = default_harness.calls(
        ("self.counter.add", {"amount": 5}),
        ("self.counter.add", {"amount": -1000}),
        ("self.counter.add", {}),  # default 1
    )
    assert [a.text, b.text, c.text] == ["5", "-995", "-994"]


def test_number_params_are_strings_parsed_and_range_checked(default_harness: Harness):
    ok, default, scroll, junk, inf, high, as_json_number = default_harness.calls(
        ("self.display.show_text", {"text": "hi", "seconds": "2.5"}),
        ("self.display.show_text", {"text": "hi"}),
        ("self.display.show_text", {"text": "hi", "seconds": "1e1", "scroll": True}),
        ("self.display.show_text", {"text": "hi", "seconds": "2.5s"}),
        ("self.display.show_text", {"text": "hi", "seconds": "inf"}),
        ("self.display.show_text", {"text": "hi", "seconds": "99"}),
        ("self.display.show_text", {"text": "hi", "seconds": 7}),
    )
    assert ok.text == 'showing "hi" for 2.5 s'
    assert default.text == 'showing "hi" for 3.0 s'
    assert scroll.text == 'showing "hi" for 10.0 s (scrolling)'
    assert junk.error == "invalid argument `seconds`: must be a number (sent as a string), got '2.5s'"
    assert inf.error is not None and "must be a number" in inf.error
    assert high.error == "invalid argument `seconds`: must be <= 30.0, got 99.0"
    # The stock server ignores a JSON number for a string property: the default is used.
    assert as_json_number.text == 'showing "hi" for 3.0 s'


def test_number_results_keep_the_core_formatting(default_harness: Harness):
    c, f = default_harness.calls(
        ("self.sensor.read_temperature", {}),
        ("self.sensor.read_temperature", {"unit": "fahrenheit"}),
    )
    assert (c.text, f.text) == ("21.5", "70.7")


def test_string_enum_and_max_length_are_checked_by_the_glue(default_harness: Harness):
    blue, quoted, long_text, exact = default_harness.calls(
        ("self.screen.set_theme", {"theme": "blue"}),
        ("self.screen.set_theme", {"theme": 'bl"u\\e'}),
        ("self.display.show_text", {"text": "x" * 65}),
        ("self.display.show_text", {"text": "\u00e9" * 64}),  # 64 code points, 128 bytes
    )
    assert blue.error == "invalid argument `theme`: must be one of light, dark; got 'blue'"
    # The stock ReplyError does not escape: quotes and backslashes are replaced, the reply parses.
    assert quoted.error is not None and quoted.error.endswith("got 'bl'u/e'")
    assert long_text.error == "invalid argument `text`: must be at most 64 characters, got 65"
    assert exact.text.startswith('showing "\u00e9\u00e9')


def test_tool_errors_throw_and_become_error_replies(default_harness: Harness):
    fail, hostname = default_harness.calls(
        ("self.display.show_text", {"text": "fail"}),
        ("self.network.set_hostname", {"hostname": "Bad Name"}),
    )
    assert fail.message["error"] == {"message": "display error: the panel did not acknowledge the update"}
    assert hostname.error == "hostname may only contain a-z, 0-9 and '-'"


def test_stock_argument_checks_still_apply(default_harness: Harness):
    missing, over = default_harness.calls(
        ("self.audio_speaker.set_volume", {}),
        ("self.audio_speaker.set_volume", {"volume": 101}),
    )
    assert missing.error == "Missing valid argument: volume"
    assert over.error == "Value exceeds maximum allowed: 100"


def test_notifications_go_to_the_sink_after_the_call(default_harness: Harness):
    dark, again = default_harness.calls(
        ("self.screen.set_theme", {"theme": "dark"}),
        ("self.screen.set_theme", {"theme": "dark"}),
    )
    assert dark.text == "true"
    assert dark.notifications == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/state_changed",
            "params": {
                "component": "screen",
                "oldState": {"theme": "light"},
                "newState": {"theme": "dark"},
            },
        }
    ]
    assert again.notifications == []  # unchanged theme: the handler queued nothing


def test_image_result_becomes_stock_image_content(default_harness: Harness):
    reply = default_harness.call("self.camera.snapshot")
    (item,) = reply.content
    # The stock McpTool::Call nests ImageContent::to_json() as a string under "image".
    assert item["type"] == "image"
    image = json.loads(item["image"])
    assert image["mimeType"] == "image/png"
    assert image["data"] == PNG_1X1
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")


def test_none_result_and_user_only_tool(default_harness: Harness):
    reply = default_harness.call("self.reboot")
    assert reply.text == ""


def test_spec_tool_reports_the_fingerprint(default_harness: Harness):
    spec = load_spec(DEFAULT_SPEC)
    reply = default_harness.call(SPEC_TOOL_NAME)
    assert json.loads(reply.text) == {
        "fingerprint": spec.fingerprint,
        "device": spec.device.name,
        "version": spec.device.version,
    }


def test_registering_twice_keeps_one_tool_per_name(default_harness: Harness):
    first, again = default_harness.run([{"op": "list"}, {"op": "register_again"}])
    assert again["count"] == len(first["tools"])


def test_desk_lamp_handlers(lamp_harness: Harness):
    rgb, power, state, timer, effect, slow, unknown = lamp_harness.calls(
        ("self.light.set_rgb", {"r": 10, "g": 20, "b": 255}),
        ("self.light.set_power", {"on": True}),
        ("self.light.get_state", {}),
        ("self.timer.set", {"minutes": 720}),
        ("self.light.set_effect", {"effect": "candle", "speed": "2.5"}),
        ("self.light.set_effect", {"effect": "candle", "speed": "0.05"}),
        ("self.light.set_effect", {"effect": "disco"}),
    )
    assert rgb.text == "true"
    # The spec event the handler emits goes out at once (issue 31, item 11: it was dropped),
    # the ctx.notify notification after the call.
    assert power.notifications == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/events/power_changed",
            "params": {"on": True, "source": "assistant"},
        },
        {"jsonrpc": "2.0", "method": "notifications/state_changed", "params": {"on": True}},
    ]
    assert json.loads(state.text) == {"on": True, "rgb": [10, 20, 255], "timer_minutes": 0}
    assert timer.text == "720"
    assert effect.text == "effect candle at speed 2.5"
    assert slow.error == "invalid argument `speed`: must be >= 0.1, got 0.05"
    assert unknown.error is not None and unknown.error.startswith(
        "invalid argument `effect`: must be one of none,"
    )


def test_handler_returning_the_wrong_kind_is_an_error(edge_harness: Harness):
    wrong, bad_object = edge_harness.calls(("self.edge.wrong_kind", {}), ("self.edge.bad_object", {}))
    assert (
        wrong.error
        == "Internal error: handler of self.edge.wrong_kind returned string, the spec declares integer"
    )
    assert bad_object.error is not None
    assert "did not write a valid JSON object" in bad_object.error


def test_integers_beyond_32_bits(edge_harness: Harness):
    big, small, zero = edge_harness.calls(
        ("self.edge.big", {"n": 5000}),
        ("self.edge.big", {"n": 2}),
        ("self.edge.big", {"n": 0}),
    )
    assert big.text == "5000000000"  # does not fit the stock int: sent as its decimal text
    assert small.text == "2000000"
    assert zero.error == "invalid argument `n`: must be >= 1, got 0"


def test_string_defaults_and_wide_ranges(edge_harness: Harness):
    (listed,) = [t for t in edge_harness.list_tools() if t["name"] == "self.edge.label"]
    props = listed["inputSchema"]["properties"]
    assert props["label"] == {"type": "string", "default": 'say "hi"'}
    # A range beyond 32 bits cannot be a stock range: no minimum/maximum, hint in the description.
    assert props["wide"] == {"type": "integer", "default": 7}
    assert "`wide`: -10000000000 to 10000000000" in listed["description"]
    default, given, too_long = edge_harness.calls(
        ("self.edge.label", {}),
        ("self.edge.label", {"label": "x", "wide": -2147483648}),
        ("self.edge.label", {"label": "y" * 17}),
    )
    assert default.text == 'say "hi"/7'
    assert given.text == "x/-2147483648"
    assert too_long.error is not None and re.search(r"at most 16 characters, got 17", too_long.error)
