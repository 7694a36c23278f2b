"""Conformance of the generated device (core + tables + demo handlers) over --stdio."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from device_sim_driver import StdioSim
from device_testlib import DEFAULT_SPEC

from mcpgen.codegen.spec.examples import example_arguments
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import list_entry, list_entry_json

SPEC = load_spec(DEFAULT_SPEC)


def rpc(method: str, params=None, id=1, **extra) -> str:  # noqa: A002 - JSON-RPC field name
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    msg.update(extra)
    return json.dumps(msg)


def error_of(reply: dict) -> tuple[int, str]:
    assert "error" in reply and "result" not in reply, reply
    return reply["error"]["code"], reply["error"]["message"]


def tool_error(result: dict) -> str:
    assert result["isError"] is True, result
    assert result["content"][0]["type"] == "text"
    return result["content"][0]["text"]


# ---------------------------------------------------------------- lifecycle


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_echoes_supported_protocol_version(sim: StdioSim, version: str) -> None:
    reply = sim.request("initialize", {"protocolVersion": version, "capabilities": {}})
    assert reply["result"]["protocolVersion"] == version


@pytest.mark.parametrize("params", [{"protocolVersion": "2099-01-01"}, {}, None])
def test_initialize_falls_back_to_device_version(sim: StdioSim, params) -> None:
    reply = sim.request("initialize", params)
    result = reply["result"]
    assert result["protocolVersion"] == SPEC.device.protocol_version == "2024-11-05"
    assert result["capabilities"] == {"tools": {}}
    assert result["serverInfo"] == {"name": "xiaozhi-sim", "version": "1.0.0"}
    assert result["_meta"] == {"mcpgen/fingerprint": SPEC.fingerprint}


def test_initialize_records_vision(sim: StdioSim) -> None:
    caps = {"vision": {"url": "http://vision.example/explain", "token": "tok-123"}}
    reply = sim.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": caps})
    assert reply["result"]["_meta"]["mcpgen/fingerprint"] == SPEC.fingerprint
    assert sim.request("ping")["result"] == {}
    assert "vision configured: url=http://vision.example/explain token=7 chars" in sim.stderr()


@pytest.mark.parametrize(
    "caps",
    [{"vision": {"url": 5}}, {"vision": "x"}, {"vision": {"url": "http://v/" + "u" * 400, "token": "t"}}],
)
def test_initialize_with_odd_vision_is_harmless(sim: StdioSim, caps) -> None:
    assert "result" in sim.request("initialize", {"capabilities": caps})
    assert sim.request("ping")["result"] == {}
    assert "vision configured" not in sim.stderr()


def test_ping(sim: StdioSim) -> None:
    assert sim.request("ping") == {"jsonrpc": "2.0", "id": sim._next_id, "result": {}}


def test_notifications_get_no_reply(sim: StdioSim) -> None:
    sim.send_line('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    sim.send_line('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}')
    sim.send_line('{"jsonrpc":"2.0","method":"no/such/notification"}')
    sim.send_line(rpc("ping", id=41))
    assert sim.read_json() == {"jsonrpc": "2.0", "id": 41, "result": {}}


def test_request_without_id_runs_but_is_not_answered(sim: StdioSim) -> None:
    call = {"name": "self.counter.add", "arguments": {"amount": 5}}
    sim.send_line(json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": call}))
    assert sim.call_text("self.counter.add", {"amount": 0}) == "5"


def test_responses_sent_to_the_device_are_ignored(sim: StdioSim) -> None:
    sim.send_line('{"jsonrpc":"2.0","id":77,"result":{}}')
    sim.send_line('{"jsonrpc":"2.0","id":78,"error":{"code":-1,"message":"x"}}')
    assert sim.request("ping", id=79)["result"] == {}


# ---------------------------------------------------------------- tools/list


def test_tools_list_exact_entries_and_user_only_filter(sim: StdioSim) -> None:
    sim.send_line(rpc("tools/list", {"cursor": ""}, id=5))
    line = sim.read_line()
    reply = json.loads(line)
    tools = reply["result"]["tools"]
    assert "nextCursor" not in reply["result"]
    expected = [t for t in SPEC.tools if not t.user_only]
    assert [t["name"] for t in tools] == [t.name for t in expected]
    assert tools == [list_entry(t) for t in expected]
    for t in expected:  # the device sends exactly the bytes codegen computed
        assert list_entry_json(t) in line
    assert "self.reboot" not in line

    reply = sim.request("tools/list", {"withUserTools": True})
    assert [t["name"] for t in reply["result"]["tools"]] == [t.name for t in SPEC.tools]
    reboot = reply["result"]["tools"][4]
    assert reboot["annotations"]["audience"] == ["user"]
    assert sim.request("tools/list")["result"]["tools"] == tools
    assert sim.request("tools/list", {"withUserTools": False})["result"]["tools"] == tools


def test_published_schema_refuses_what_the_device_refuses(sim: StdioSim) -> None:
    """Every tool's inputSchema says additionalProperties: false, and the device does
    refuse a key its tool does not declare (beside valid arguments, so only the extra key
    can be the reason)."""
    tools = sim.request("tools/list", {"withUserTools": True})["result"]["tools"]
    assert tools
    for entry in tools:
        assert entry["inputSchema"]["additionalProperties"] is False, entry["name"]
        tool = SPEC.tool(entry["name"])
        if tool.user_only:
            continue  # a reboot would end the simulator
        arguments = {**example_arguments(tool), "zz_not_declared": 1}
        assert tool_error(sim.call(tool.name, arguments)) == "unknown argument `zz_not_declared`"


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"cursor": "self.no_such_tool"}, "unknown cursor"),
        ({"cursor": 5}, "cursor must be a string"),
        ({"withUserTools": "yes"}, "withUserTools must be a boolean"),
    ],
)
def test_tools_list_bad_params(sim: StdioSim, params, fragment: str) -> None:
    code, message = error_of(sim.request("tools/list", params))
    assert code == -32602
    assert fragment in message


def _pages(sim: StdioSim, with_user: bool) -> list[tuple[dict, bytes]]:
    pages = []
    cursor = ""
    prefix_len = None
    for n in range(50):
        params = {"cursor": cursor}
        if with_user:
            params["withUserTools"] = True
        sim.send_line(rpc("tools/list", params, id=100 + n))
        line = sim.read_line()
        prefix = f'{{"jsonrpc":"2.0","id":{100 + n},"result":'
        assert line.startswith(prefix) and line.endswith("}")
        prefix_len = len(prefix)
        raw_result = line[prefix_len:-1].encode("utf-8")
        result = json.loads(line)["result"]
        assert json.loads(raw_result) == result
        pages.append((result, raw_result))
        if "nextCursor" not in result:
            return pages
        cursor = result["nextCursor"]
    raise AssertionError("tools/list never ended")


@pytest.mark.parametrize("with_user", [False, True])
def test_pagination_respects_page_size(
    small_page_exe: Path, small_page_spec: Path, tmp_path: Path, with_user: bool
) -> None:
    spec = load_spec(small_page_spec)
    page_size = spec.device.page_size
    assert page_size < 1000
    s = StdioSim(small_page_exe, tmp_path)
    try:
        pages = _pages(s, with_user)
    finally:
        s.close()
    assert len(pages) >= 3
    names = []
    for i, (result, raw) in enumerate(pages):
        assert len(raw) <= page_size, (i, len(raw), page_size)
        assert result["tools"], "empty page"
        if i + 1 < len(pages):
            assert re.fullmatch("[0-9a-f]{12}", result["nextCursor"])  # opaque: index + check
        names.extend(t["name"] for t in result["tools"])
    expected = [t.name for t in spec.tools if with_user or not t.user_only]
    assert names == expected  # every tool exactly once, in spec order
    assert ("self.reboot" in names) == with_user
    # Greedy packing: a page plus the next tool would not have fit.
    for (_, raw), (nxt, _) in zip(pages, pages[1:], strict=False):
        nxt_entry = json.dumps(nxt["tools"][0], separators=(",", ":"), ensure_ascii=False).encode()
        assert len(raw) + len(nxt_entry) + 1 > page_size


# ---------------------------------------------------------------- tools/call results


def test_result_kinds(sim: StdioSim) -> None:
    assert sim.call("self.audio_speaker.set_volume", {"volume": 33}) == {
        "content": [{"type": "text", "text": "true"}],
        "isError": False,
    }
    assert sim.call_text("self.counter.add", {"amount": 7}) == "7"
    assert sim.call_text("self.sensor.read_temperature") == "21.5"
    assert sim.call_text("self.sensor.read_temperature", {"unit": "fahrenheit"}) == "70.7"
    assert sim.call_text("self.display.show_text", {"text": "hi", "seconds": 2.5, "scroll": True}) == (
        'showing "hi" for 2.5 s (scrolling)'
    )
    status = sim.call("self.get_device_status")
    assert status["isError"] is False
    assert json.loads(status["content"][0]["text"]) == status["structuredContent"]
    assert status["structuredContent"]["audio_speaker"] == {"volume": 33}
    image = sim.call("self.camera.snapshot", {})
    assert image["isError"] is False
    (content,) = image["content"]
    assert content["type"] == "image" and content["mimeType"] == "image/png"
    assert base64.b64decode(content["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert sim.call("self.reboot") == {"content": [], "isError": False}


def test_handler_state_is_observable(sim: StdioSim) -> None:
    assert sim.call_text("self.counter.add", {"amount": 10}) == "10"
    assert sim.call_text("self.counter.add", {"amount": -3}) == "7"
    assert sim.call_text("self.counter.add") == "8"  # default amount 1
    sim.call("self.audio_speaker.set_volume", {"volume": 12})
    sim.call("self.screen.set_brightness", {"brightness": 99})
    status = sim.call("self.get_device_status")["structuredContent"]
    assert status["audio_speaker"]["volume"] == 12
    assert status["screen"]["brightness"] == 99
    assert sim.call_text("self.network.set_hostname", {"hostname": "kitchen-1"}) == "kitchen-1"


def test_tool_error_results(sim: StdioSim) -> None:
    result = sim.call("self.display.show_text", {"text": "fail"})
    assert "display error" in tool_error(result)
    result = sim.call("self.network.set_hostname", {"hostname": "Bad_Host"})
    assert "may only contain" in tool_error(result)


def test_theme_change_emits_state_changed_notification(sim: StdioSim) -> None:
    sim.send_line(rpc("tools/call", {"name": "self.screen.set_theme", "arguments": {"theme": "dark"}}, id=9))
    assert sim.read_json()["result"]["content"][0]["text"] == "true"
    note = sim.read_json()
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/state_changed",
        "params": {"component": "screen", "oldState": {"theme": "light"}, "newState": {"theme": "dark"}},
    }
    # Same theme again: no change, no notification.
    sim.send_line(rpc("tools/call", {"name": "self.screen.set_theme", "arguments": {"theme": "dark"}}, id=10))
    assert sim.read_json()["id"] == 10
    sim.send_line(rpc("ping", id=11))
    assert sim.read_json()["id"] == 11
    status = sim.call("self.get_device_status")["structuredContent"]
    assert status["screen"]["theme"] == "dark"


# ---------------------------------------------------------------- argument rules

ARG_CASES = [
    # (tool, arguments, expected message)
    ("self.audio_speaker.set_volume", {"volume": 150}, "invalid argument `volume`: must be <= 100, got 150"),
    ("self.audio_speaker.set_volume", {"volume": -1}, "invalid argument `volume`: must be >= 0, got -1"),
    (
        "self.audio_speaker.set_volume",
        {"volume": "50"},
        "invalid argument `volume`: must be an integer, got string",
    ),
    (
        "self.audio_speaker.set_volume",
        {"volume": 50.5},
        "invalid argument `volume`: must be an integer, got 50.5",
    ),
    (
        "self.audio_speaker.set_volume",
        {"volume": True},
        "invalid argument `volume`: must be an integer, got boolean",
    ),
    (
        "self.audio_speaker.set_volume",
        {"volume": None},
        "invalid argument `volume`: must be an integer, got null",
    ),
    (
        "self.audio_speaker.set_volume",
        {"volume": 10**30},
        "invalid argument `volume`: must be <= 100, got 10000",
    ),
    ("self.audio_speaker.set_volume", {}, "missing required argument `volume`"),
    ("self.audio_speaker.set_volume", {"volume": 5, "volumes": 5}, "unknown argument `volumes`"),
    (
        "self.display.show_text",
        {"text": "x", "seconds": 0.1},
        "invalid argument `seconds`: must be >= 0.5, got 0.1",
    ),
    (
        "self.display.show_text",
        {"text": "x", "seconds": 31},
        "invalid argument `seconds`: must be <= 30.0, got 31",
    ),
    (
        "self.display.show_text",
        {"text": "x", "seconds": "3"},
        "invalid argument `seconds`: must be a number, got string",
    ),
    (
        "self.display.show_text",
        {"text": "x", "scroll": "yes"},
        "invalid argument `scroll`: must be a boolean, got string",
    ),
    (
        "self.display.show_text",
        {"text": "a" * 65},
        "invalid argument `text`: must be at most 64 characters, got 65",
    ),
    ("self.display.show_text", {"text": ["a"]}, "invalid argument `text`: must be a string, got array"),
    ("self.display.show_text", {"seconds": 3}, "missing required argument `text`"),
    (
        "self.display.show_text",
        {"text": "a\u0000b"},
        "invalid argument `text`: must not contain NUL characters",
    ),
    (
        "self.screen.set_theme",
        {"theme": "blue"},
        'invalid argument `theme`: must be one of light, dark; got "blue"',
    ),
    (
        "self.screen.set_theme",
        {"theme": "Dark"},
        'invalid argument `theme`: must be one of light, dark; got "Dark"',
    ),
    (
        "self.sensor.read_temperature",
        {"unit": "kelvin"},
        'invalid argument `unit`: must be one of celsius, fahrenheit; got "kelvin"',
    ),
    ("self.counter.add", {"amount": 1001}, "invalid argument `amount`: must be <= 1000, got 1001"),
    ("self.counter.add", {"amount": -1001}, "invalid argument `amount`: must be >= -1000, got -1001"),
    ("self.camera.snapshot", {"zoom": 2}, "unknown argument `zoom`"),
    ("self.camera.snapshot", {'we"ird\n': 2}, 'unknown argument `we"ird\n`'),
]


@pytest.mark.parametrize("tool,arguments,message", ARG_CASES)
def test_argument_rule_violations_are_tool_errors(
    sim: StdioSim, tool: str, arguments: dict, message: str
) -> None:
    text = tool_error(sim.call(tool, arguments))
    assert text.startswith(message), text


@pytest.mark.parametrize(
    "tool,arguments,expected",
    [
        ("self.audio_speaker.set_volume", {"volume": 100}, "true"),
        ("self.audio_speaker.set_volume", {"volume": 0}, "true"),
        ("self.audio_speaker.set_volume", {"volume": 50.0}, "true"),  # integral number
        ("self.audio_speaker.set_volume", {"volume": 1e1}, "true"),
        ("self.counter.add", {"amount": -1000}, "-1000"),
        ("self.display.show_text", {"text": "x", "seconds": 30}, 'showing "x" for 30.0 s'),
        ("self.display.show_text", {"text": "x", "seconds": 0.5}, 'showing "x" for 0.5 s'),
        ("self.display.show_text", {"text": "é" * 64}, 'showing "' + "é" * 64 + '" for 3.0 s'),
        ("self.display.show_text", {"text": "😀" * 64}, 'showing "' + "😀" * 64 + '" for 3.0 s'),
        (
            "self.display.show_text",
            {"text": 'tab\tquote"back\\slash'},
            'showing "tab\tquote"back\\slash" for 3.0 s',
        ),
        ("self.sensor.read_temperature", {}, "21.5"),
        ("self.sensor.read_temperature", None, "21.5"),
    ],
)
def test_valid_arguments_and_defaults(sim: StdioSim, tool: str, arguments, expected: str) -> None:
    assert sim.call_text(tool, arguments) == expected


def test_multibyte_max_length_counts_code_points(sim: StdioSim) -> None:
    text = tool_error(sim.call("self.display.show_text", {"text": "😀" * 65}))
    assert text == "invalid argument `text`: must be at most 64 characters, got 65"


def test_surrogate_pairs_and_lone_surrogates_decode(sim: StdioSim) -> None:
    sim.send_line(
        rpc("tools/call", {"name": "self.display.show_text"}, id=3)[:-2]
        + ',"arguments":{"text":"\\ud83d\\ude00\\ud800x\\u00e9"}}}'
    )
    reply = sim.read_json()
    assert reply["result"]["content"][0]["text"] == 'showing "😀\ufffdxé" for 3.0 s'


# ---------------------------------------------------------------- JSON-RPC errors


@pytest.mark.parametrize(
    "line,code,fragment",
    [
        ("garbage", -32700, "Parse error"),
        ('{"jsonrpc":"2.0","id":1,"method":', -32700, "Parse error"),
        ('{"jsonrpc":"2.0","id":1,"method":"ping"} extra', -32700, "trailing"),
        ('{"jsonrpc":"2.0","id":01,"method":"ping"}', -32700, "Parse error"),
        ('{"a":"\x01"}', -32700, "control character"),
        ("[" * 100 + "]" * 100, -32700, "nesting too deep"),
        ("[1,2]", -32600, "expected a JSON object"),
        ("5", -32600, "expected a JSON object"),
        ('"ping"', -32600, "expected a JSON object"),
        ('{"id":1,"method":"ping"}', -32600, '"jsonrpc" must be "2.0"'),
        ('{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600, '"jsonrpc" must be "2.0"'),
        ('{"jsonrpc":2.0,"id":1,"method":"ping"}', -32600, '"jsonrpc" must be "2.0"'),
        ('{"jsonrpc":"2.0","id":1}', -32600, "missing method"),
        ('{"jsonrpc":"2.0","id":1,"method":5}', -32600, "method must be a string"),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, "id must be a string or a number"),
        ('{"jsonrpc":"2.0","id":1,"method":"ping","params":7}', -32600, "params must be an object"),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}', -32602, "params must be an object"),
        ('{"jsonrpc":"2.0","id":1,"method":"resources/list"}', -32601, "Method not found: resources/list"),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call"}', -32602, "tools/call needs params"),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
            -32602,
            "params.name must be a string",
        ),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}', -32602, "params.name"),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"self.reboot","arguments":[1]}}',
            -32602,
            "params.arguments must be an object",
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"self.nope"}}',
            -32601,
            "Unknown tool: self.nope",
        ),
    ],
)
def test_jsonrpc_errors(sim: StdioSim, line: str, code: int, fragment: str) -> None:
    sim.send_line(line)
    reply = sim.read_json()
    got_code, message = error_of(reply)
    assert got_code == code, reply
    assert fragment in message, reply
    assert reply["jsonrpc"] == "2.0"
    if code in (-32700,) or "id must be" in fragment or "expected a JSON object" in fragment:
        assert reply["id"] is None
    else:
        assert reply["id"] == 1
    assert sim.request("ping")["result"] == {}  # still serving


def test_tool_name_with_quotes_and_control_chars_is_escaped(sim: StdioSim) -> None:
    name = 'evil"}\n\t\u0001\\tool é 😀'
    sim.send_line(rpc("tools/call", {"name": name, "arguments": {}}, id=12))
    line = sim.read_line()
    reply = json.loads(line)
    code, message = error_of(reply)
    assert code == -32601
    assert message == "Unknown tool: " + name
    sim.send_line(rpc('meth"od\n', id=13))
    assert error_of(sim.read_json())[1] == 'Method not found: meth"od\n'


@pytest.mark.parametrize(
    "raw_id",
    [
        "9007199254740993",
        "-5",
        "0",
        "1.5",
        "-0.25",
        "1e3",
        "12345678901234567890123",
        '"abc"',
        '""',
        '"a\\"b\\\\c\\u00e9\\n"',
        '"😀"',
    ],
)
def test_ids_are_echoed_exactly(sim: StdioSim, raw_id: str) -> None:
    sim.send_line(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}')
    line = sim.read_line()
    assert line == f'{{"jsonrpc":"2.0","id":{raw_id},"result":{{}}}}'
    assert json.loads(line)["id"] == json.loads(raw_id)


def test_null_id_is_answered_with_null(sim: StdioSim) -> None:
    sim.send_line('{"jsonrpc":"2.0","id":null,"method":"ping"}')
    assert sim.read_json() == {"jsonrpc": "2.0", "id": None, "result": {}}


# ---------------------------------------------------------------- robustness


def test_garbage_truncated_and_binary_input_keep_serving(sim: StdioSim) -> None:
    junk = [
        b"\xff\xfe\x00garbage",
        b'{"jsonrpc":"2.0","id":1,"method":"ping"',
        b"}",
        b"\x00",
        b'{"jsonrpc":"2.0","id":1,"method":"p\xc3"}',
        b"nul",
        b"tru",
        b"-",
        b"1.",
        b'"\\x"',
    ]
    for j in junk:
        sim.send_line(j)
        code, _ = error_of(sim.read_json())
        assert code in (-32700, -32600), j
    sim.send_line(b"")
    sim.send_line(b"   ")
    sim.send_line(rpc("ping", id=99).encode() + b"\r")  # CRLF framing
    assert sim.read_json() == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert sim.alive()


def test_oversized_request_is_answered_and_discarded(sim: StdioSim) -> None:
    big = rpc("tools/call", {"name": "self.display.show_text", "arguments": {"text": "x" * 20000}}, id=5)
    sim.send_line(big)
    reply = sim.read_json()
    code, message = error_of(reply)
    assert code == -32600 and reply["id"] == 5  # read from the part that fit the buffer
    assert "larger than the request buffer (4096 bytes)" in message
    assert sim.request("ping")["result"] == {}
    # Exactly at the limit: 4095 bytes still fit (one byte is kept for the terminator).
    pad = 4095 - len(rpc("ping", id=1234, pad=""))
    line = rpc("ping", id=1234, pad="p" * pad)
    assert len(line) == 4095
    sim.send_line(line)
    assert sim.read_json()["id"] == 1234


def test_messages_split_across_writes(sim: StdioSim) -> None:
    line = rpc("ping", id=55).encode() + b"\n" + rpc("ping", id=56).encode() + b"\n"
    for i in range(len(line)):
        sim.send_raw(line[i : i + 1])
    assert sim.read_json()["id"] == 55
    assert sim.read_json()["id"] == 56


# ---------------------------------------------------------------- xiaozhi envelope


def envelope(payload: dict, session: str = "sess-42") -> str:
    return json.dumps({"session_id": session, "type": "mcp", "payload": payload})


def test_enveloped_requests_are_answered_enveloped(sim: StdioSim) -> None:
    sim.send_line(envelope({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    reply = sim.read_json()
    assert reply["session_id"] == "sess-42" and reply["type"] == "mcp"
    assert reply["payload"]["id"] == 1
    assert reply["payload"]["result"]["serverInfo"]["name"] == "xiaozhi-sim"
    call = {"name": "self.counter.add", "arguments": {"amount": 3}}
    sim.send_line(envelope({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, 's"2'))
    reply = sim.read_json()
    assert reply["session_id"] == 's"2'
    assert reply["payload"]["result"]["content"][0]["text"] == "3"
    # The theme notification goes out enveloped too.
    call = {"name": "self.screen.set_theme", "arguments": {"theme": "dark"}}
    sim.send_line(envelope({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}))
    assert sim.read_json()["payload"]["id"] == 3
    note = sim.read_json()
    assert note["type"] == "mcp" and note["session_id"] == "sess-42"
    assert note["payload"]["method"] == "notifications/state_changed"
    assert "id" not in note["payload"]
    # Bare requests are still answered bare.
    assert sim.request("ping")["result"] == {}


def test_envelope_errors_and_other_message_types(sim: StdioSim) -> None:
    sim.send_line('{"session_id":"s","type":"mcp"}')
    reply = sim.read_json()
    assert reply["session_id"] == "s"
    assert error_of(reply["payload"])[0] == -32600
    sim.send_line(envelope({"jsonrpc": "2.0", "id": 8, "method": "nope"}))
    assert error_of(sim.read_json()["payload"]) == (-32601, "Method not found: nope")
    sim.send_line(envelope({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    sim.send_line('{"session_id":"s","type":"listen","state":"start"}')
    sim.send_line('{"type":"hello","transport":"websocket","session_id":"from-hello"}')
    sim.send_line(rpc("ping", id=61))
    assert sim.read_json() == {"jsonrpc": "2.0", "id": 61, "result": {}}


# ---------------------------------------------------------------- small buffers


def test_reply_larger_than_response_buffer_is_internal_error(tiny_buffers_exe: Path, tmp_path: Path) -> None:
    s = StdioSim(tiny_buffers_exe, tmp_path)
    try:
        reply = s.request("tools/list")
        code, message = error_of(reply)
        assert code == -32603
        assert "response buffer too small" in message
        assert s.request("ping")["result"] == {}
        assert s.call_text("self.counter.add", {"amount": 2}) == "2"
        s.send_line(rpc("ping", id=7, pad="x" * 300))
        code, message = error_of(s.read_json())
        assert code == -32600 and "(256 bytes)" in message
        assert s.request("ping")["result"] == {}
    finally:
        s.close()


# ---------------------------------------------------------------- second device


def test_desk_lamp_device(lamp: StdioSim) -> None:
    init = lamp.request("initialize", {"protocolVersion": "2025-03-26"})["result"]
    assert init["serverInfo"] == {"name": "desk-lamp", "version": "0.3.1"}
    assert init["protocolVersion"] == "2025-03-26"
    assert lamp.call_text("self.light.set_rgb", {"r": 1, "g": 2, "b": 3}) == "true"
    assert tool_error(lamp.call("self.light.set_rgb", {"r": 256, "g": 0, "b": 0})).startswith(
        "invalid argument `r`: must be <= 255, got 256"
    )
    lamp.send_line(rpc("tools/call", {"name": "self.light.set_power", "arguments": {"on": True}}, id=4))
    # The spec event goes out at once, from inside the handler; ctx.notify's after the reply.
    assert lamp.read_json() == {
        "jsonrpc": "2.0",
        "method": "notifications/events/power_changed",
        "params": {"on": True, "source": "assistant"},
    }
    assert lamp.read_json()["id"] == 4
    assert lamp.read_json() == {
        "jsonrpc": "2.0",
        "method": "notifications/state_changed",
        "params": {"on": True},
    }
    assert lamp.call_text("self.timer.set", {"minutes": 45}) == "45"
    assert lamp.call_text("self.light.set_effect", {"effect": "candle"}) == "effect candle at speed 1.0"
    state = lamp.call("self.light.get_state")
    assert state["structuredContent"] == {"on": True, "rgb": [1, 2, 3], "timer_minutes": 45}
    assert json.loads(state["content"][0]["text"]) == state["structuredContent"]
