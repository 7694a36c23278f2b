"""Hostile input the core must refuse the same way as the Python end (issues 14 and 18):
duplicate keys, errors that would echo huge input, requests larger than the request
buffer (answered with their own id) and replies larger than the response buffer
(answered with a short -32603, never dropped)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_sim_driver import StdioSim
from device_testlib import DEFAULT_SPEC, copy_spec

from mcpgen.codegen.targets.host import build_host


def error_of(reply: dict) -> tuple[int, str]:
    assert "error" in reply and "result" not in reply, reply
    return reply["error"]["code"], reply["error"]["message"]


def call_line(params_json: str, id: int = 1) -> str:  # noqa: A002 - JSON-RPC field name
    return f'{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params_json}}}'


# ---------------------------------------------------------------- duplicate keys


def test_duplicate_tool_name_is_refused_not_run(sim: StdioSim) -> None:
    # The first-wins core once ran self.reboot here while Python (last wins) saw counter.add.
    sim.send_line(call_line('{"name":"self.reboot","name":"self.counter.add"}', id=7))
    reply = sim.read_json()
    assert reply["id"] == 7
    code, message = error_of(reply)
    assert code == -32602
    assert message == 'Invalid params: duplicate key "name"'
    # Neither tool ran: the counter starts from zero.
    sim.send_line(call_line('{"name":"self.counter.add","arguments":{"amount":2}}', id=8))
    assert sim.read_json()["result"]["content"][0]["text"] == "2"


@pytest.mark.parametrize(
    "line,code,fragment,reply_id",
    [
        ('{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}', -32600, '"method"', 1),
        ('{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}', -32600, '"jsonrpc"', 1),
        ('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', -32600, '"id"', None),
        ('{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"x":2}', -32600, '"x"', 1),
        ('{"jsonrpc":"2.0","id":1,"method":"ping","\\u006dethod":"tools/list"}', -32600, '"method"', 1),
        ('{"jsonrpc":"2.0","id":1,"method":"ping","a\\u00e9":1,"a\u00e9":2}', -32600, '"a\u00e9"', 1),
        (call_line('{"name":"self.reboot","arguments":{},"arguments":{}}'), -32602, '"arguments"', 1),
        (call_line('{"name":"self.reboot","extra":1,"extra":2}'), -32602, '"extra"', 1),
        (
            call_line('{"name":"self.counter.add","arguments":{"amount":1,"amount":5}}'),
            -32602,
            "duplicate argument `amount`",
            1,
        ),
        (
            call_line('{"name":"self.counter.add","arguments":{"amount":1,"\\u0061mount":5}}'),
            -32602,
            "duplicate argument `amount`",
            1,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"","cursor":"x"}}',
            -32602,
            '"cursor"',
            1,
        ),
    ],
)
def test_duplicate_keys_are_refused(sim: StdioSim, line: str, code: int, fragment: str, reply_id) -> None:
    sim.send_line(line)
    reply = sim.read_json()
    got, message = error_of(reply)
    assert got == code, reply
    assert "duplicate" in message and fragment in message, reply
    assert reply["id"] == reply_id
    assert sim.request("ping")["result"] == {}  # still serving


def test_distinct_keys_sharing_a_filter_bit_are_not_duplicates(sim: StdioSim) -> None:
    # 200 distinct unknown keys: many share one of the 64 filter bits, none is a duplicate.
    extra = ",".join(f'"k{i}":{i}' for i in range(200))
    sim.send_line(f'{{"jsonrpc":"2.0","id":3,"method":"ping",{extra}}}')
    assert sim.read_json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_duplicate_keys_in_the_envelope(sim: StdioSim) -> None:
    # A repeated "type": a hello or an mcp message? The core once read the first (and took
    # its session_id) before refusing; now nothing of it is used: id null, no session.
    sim.send_line(
        '{"session_id":"s0","type":"mcp","type":"hello","payload":{"jsonrpc":"2.0","id":4,"method":"ping"}}'
    )
    reply = sim.read_json()
    assert "session_id" not in reply and reply["id"] is None
    assert error_of(reply) == (-32600, 'Invalid Request: duplicate key "type"')
    sim.send_line('{"session_id":"s1","type":"mcp","payload":{"jsonrpc":"2.0","id":3,"method":"ping"}}')
    pong = {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert sim.read_json() == {"session_id": "s1", "type": "mcp", "payload": pong}
    # A repeated session_id is refused without switching to either session.
    sim.send_line(
        '{"session_id":"s2","session_id":"s3","type":"mcp","payload":{"jsonrpc":"2.0","id":4,"method":"ping"}}'
    )
    reply = sim.read_json()
    assert reply["session_id"] == "s1" and reply["payload"]["id"] == 4
    assert error_of(reply["payload"]) == (-32600, 'Invalid Request: duplicate key "session_id"')
    sim.send_line(
        '{"session_id":"s1","type":"mcp","payload":{"jsonrpc":"2.0","id":5,"method":"ping","params":{},'
        '"params":{}}}'
    )
    reply = sim.read_json()
    assert error_of(reply["payload"]) == (-32600, 'Invalid Request: duplicate key "params"')
    # Nested objects the core does not read (values of other keys) may repeat keys freely.
    sim.send_line(
        '{"session_id":"s1","type":"mcp","payload":{"jsonrpc":"2.0","id":6,"method":"ping",'
        '"_meta":{"a":1,"a":2}}}'
    )
    assert sim.read_json()["payload"]["result"] == {}


def test_duplicate_keys_in_the_capabilities_the_core_reads(sim: StdioSim) -> None:
    """capabilities.vision.url/token are read by the core with a first-wins lookup, by a
    Python peer last-wins: a repeated key at those levels is refused, nothing is taken."""
    for caps in (
        '{"vision":{"url":"http://a/","url":"http://b/"}}',
        '{"vision":{"url":"http://a/"},"vision":{"url":"http://b/"}}',
        '{"vision":{"url":"http://a/","token":"t","\\u0074oken":"u"}}',
    ):
        sim.send_line(
            '{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2024-11-05",'
            f'"capabilities":{caps}}}}}'
        )
        reply = sim.read_json()
        code, message = error_of(reply)
        assert code == -32602 and "duplicate key" in message, reply
        assert reply["id"] == 9
    sim.send_line(
        '{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2024-11-05",'
        '"capabilities":{"vision":{"url":"http://a/","token":"t"}}}}'
    )
    assert "result" in sim.read_json()


def test_an_id_with_a_lone_surrogate_is_not_echoed(sim: StdioSim) -> None:
    """JSON's grammar allows "\\ud800" but it is not Unicode: echoed raw, strict parsers
    (orjson, serde_json) refuse the whole reply. Refused with id null instead."""
    for raw_id in ('"\\ud800"', '"a\\udc00"', '"\\ud83dx"'):
        sim.send_line(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}')
        line = sim.read_line()
        assert "\\ud8" not in line and "\\udc" not in line, line
        reply = json.loads(line)
        assert reply["id"] is None
        assert error_of(reply) == (
            -32600,
            "Invalid Request: id must be valid Unicode (it has a lone surrogate escape)",
        )
    sim.send_line('{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"ping"}')  # a pair: fine
    assert sim.read_json() == {"jsonrpc": "2.0", "id": "\U0001f600", "result": {}}


# ---------------------------------------------------------------- bounded error text


@pytest.mark.parametrize(
    "line",
    [
        call_line(json.dumps({"name": "self." + "n" * 3000})),
        '{"jsonrpc":"2.0","id":1,"method":"' + "m" * 3000 + '"}',
        call_line(json.dumps({"name": "self.screen.set_theme", "arguments": {"theme": "t" * 3000}})),
        call_line(json.dumps({"name": "self.counter.add", "arguments": {"a" * 3000: 1}})),
        call_line('{"name":"self.counter.add","arguments":{"amount":' + "1" * 300 + "}}"),
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"' + "c" * 3000 + '"}}',
        '{"jsonrpc":"2.0","id":1,"method":"ping","' + "d" * 1500 + '":1,"' + "d" * 1500 + '":2}',
    ],
)
def test_errors_quote_only_a_short_prefix_of_the_input(sim: StdioSim, line: str) -> None:
    assert len(line) < 4095
    sim.send_line(line)
    raw = sim.read_line()
    reply = json.loads(raw)
    if "error" in reply:
        message = reply["error"]["message"]
    else:
        assert reply["result"]["isError"] is True, reply
        message = reply["result"]["content"][0]["text"]
    assert len(message) <= 200, message
    assert message.endswith(("...", '..."', "...`")), message


# ---------------------------------------------------------------- requests larger than the buffer


def test_oversized_request_keeps_its_string_id_and_envelope(sim: StdioSim) -> None:
    payload = {
        "jsonrpc": "2.0",
        "id": "req-9",
        "method": "tools/call",
        "params": {"name": "self.display.show_text", "arguments": {"text": "x" * 9000}},
    }
    sim.send_line(json.dumps({"session_id": "sess-big", "type": "mcp", "payload": payload}))
    reply = sim.read_json()
    assert reply["session_id"] == "sess-big" and reply["type"] == "mcp"
    assert reply["payload"]["id"] == "req-9"
    code, message = error_of(reply["payload"])
    assert code == -32600 and "larger than the request buffer" in message
    assert sim.request("ping")["result"] == {}


def test_oversized_request_with_its_id_past_the_cut_gets_null(sim: StdioSim) -> None:
    big = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "self.display.show_text", "arguments": {"text": "x" * 9000}},
            "id": 12,
        }
    )
    sim.send_line(big)
    reply = sim.read_json()
    assert error_of(reply)[0] == -32600 and reply["id"] is None


def test_oversized_request_id_cut_in_the_middle_is_not_guessed(sim: StdioSim) -> None:
    # The id's digits run up to the end of the buffer: "1234..." might go on, so null.
    head = '{"jsonrpc":"2.0","method":"ping","id":'
    line = head + "1" * (4095 - len(head)) + "5}"
    sim.send_line(line)
    reply = sim.read_json()
    assert error_of(reply)[0] == -32600 and reply["id"] is None


# ---------------------------------------------------------------- replies larger than the buffer


@pytest.fixture(scope="module")
def micro_out_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default device with a 200-byte response buffer: the long -32603 text does not fit."""
    spec = copy_spec(DEFAULT_SPEC, tmp_path_factory.mktemp("micro_spec"))
    return build_host(
        spec,
        tmp_path_factory.mktemp("build_micro"),
        log=lambda _: None,
        extra_flags=("-DMCPGEN_RESPONSE_BUFFER_SIZE=200",),
    )


@pytest.fixture
def micro(micro_out_exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(micro_out_exe, tmp_path)
    yield s
    s.close()


def test_reply_larger_than_a_small_buffer_gets_a_short_error_with_its_id(micro: StdioSim) -> None:
    micro.send_line('{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}')
    reply = micro.read_json()
    assert reply["id"] == "list-1"
    code, message = error_of(reply)
    assert code == -32603 and message.startswith("Internal error: response buffer too small")
    # With a long session id even the detailed -32603 does not fit: the short one does
    # (this reply used to be dropped, leaving the caller to time out).
    session = "s-" + "7" * 40
    micro.send_line(
        json.dumps(
            {
                "session_id": session,
                "type": "mcp",
                "payload": {
                    "jsonrpc": "2.0",
                    "id": 31,
                    "method": "tools/call",
                    "params": {"name": "self.get_device_status"},
                },
            }
        )
    )
    reply = micro.read_json()
    assert reply["session_id"] == session and reply["payload"]["id"] == 31
    assert error_of(reply["payload"]) == (-32603, "Internal error: response buffer too small")
    assert micro.request("ping")["result"] == {}


# ---------------------------------------------------------------- lookups by name


def test_escaped_tool_names_resolve_like_plain_ones(sim: StdioSim) -> None:
    # The binary search compares raw bytes only for names without escapes; escaped ones
    # are decoded first and must find the same tool. (Cursors: test_device_cursor.py.)
    sim.send_line(call_line('{"name":"self.counter\\u002eadd","arguments":{"amount":4}}', id=2))
    assert sim.read_json()["result"]["content"][0]["text"] == "4"
    sim.send_line(call_line('{"name":"self.counter.ad\\u0000"}', id=4))
    assert error_of(sim.read_json())[0] == -32601
