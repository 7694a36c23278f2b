"""Messages that are not well-formed JSON-RPC 2.0, and inputs too long to quote back
(issue 31 items 5 and 6): every one is answered, on stdio and on HTTP, and the bridge
keeps serving."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx2 as httpx
import pytest
from bridge_testlib import HERE, HttpBridge, subprocess_env
from test_bridge_http import init_msg, open_session, post

from mcpgen.runtime.bridge.protocol import TEXT_LIMIT, invalid_message

INIT = init_msg("2025-06-18")
INIT["id"] = 0
PING = {"jsonrpc": "2.0", "id": 99, "method": "ping"}

# (raw line, the id the -32600 answer must carry)
INVALID: list[tuple[str, Any]] = [
    ("42", None),
    ('"hello"', None),
    ("null", None),
    ('{"jsonrpc":"1.0","id":1,"method":"tools/list"}', 1),
    ('{"id":2,"method":"tools/list"}', 2),
    ('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None),
    ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', None),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None),
    ('{"jsonrpc":"2.0","id":[3],"method":"tools/list"}', None),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
    ('{"jsonrpc":"2.0","id":3,"method":5}', 3),
    ('{"jsonrpc":"2.0","method":5}', None),
    ('{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}', 4),
    ('{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', None),
    ('{"jsonrpc":"2.0","id":5}', 5),
    ('{"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":"m"}}', 6),
    ('{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}', 7),
    ('{"foo":"boo"}', None),
]


def run_stdio(lines: list[str]) -> list[Any]:
    text = "".join(line + "\n" for line in lines)
    proc = subprocess.run(
        [sys.executable, str(HERE / "fake_bridge_main.py")],
        input=text.encode(),
        capture_output=True,
        timeout=60,
        env=subprocess_env(),
    )
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def test_each_invalid_message_is_classified() -> None:
    for line, answer_id in INVALID:
        refusal = invalid_message(json.loads(line))
        assert refusal is not None, line
        assert refusal["error"]["code"] == -32600 and refusal["id"] == answer_id, line
    for ok in (
        PING,
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "a", "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}},
    ):
        assert invalid_message(ok) is None, ok


def test_stdio_answers_every_invalid_message_and_keeps_serving() -> None:
    # Before: the SDK dropped every one of these without an answer (9 of 11 in the report).
    lines = [json.dumps(INIT), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    lines += [line for line, _ in INVALID] + [json.dumps(PING)]
    out = run_stdio(lines)
    assert out[0]["id"] == 0 and "result" in out[0]
    refusals = [m for m in out if m.get("error", {}).get("code") == -32600]
    assert len(refusals) == len(INVALID), out
    # answered in order (each is refused before anything else is read)
    assert [m["id"] for m in refusals] == [answer_id for _, answer_id in INVALID]
    assert all(m["error"]["message"].startswith("Invalid Request") for m in refusals)
    assert out[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert len(out) == len(INVALID) + 2


def test_stdio_batch_members_that_are_invalid_are_answered_in_the_batch() -> None:
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}}
    out = run_stdio(
        [
            json.dumps(init),
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '[1,{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":8.5,"method":"ping"}]',
            "[1,2]",
        ]
    )
    batches = [m for m in out if isinstance(m, list)]
    assert len(batches) == 2
    mixed = next(b for b in batches if len(b) == 3)
    assert sorted(json.dumps(m["id"]) for m in mixed) == ["8", "null", "null"]
    assert next(m for m in mixed if m["id"] == 8)["result"] == {}
    only_bad = next(b for b in batches if len(b) == 2)
    assert all(m["error"]["code"] == -32600 and m["id"] is None for m in only_bad)


async def test_http_answers_every_invalid_message_with_400(http_bridge: HttpBridge) -> None:
    # Before: id null and id 1.5 got 202 (read as notifications), "jsonrpc": "1.0" -32602.
    async with httpx.AsyncClient(timeout=10) as c:
        sid = await open_session(c, http_bridge.url, "2025-06-18")
        for line, answer_id in INVALID:
            r = await c.post(
                http_bridge.url,
                content=line,
                headers={
                    "Accept": "application/json, text/event-stream",
                    "Content-Type": "application/json",
                    "Mcp-Session-Id": sid,
                },
            )
            assert r.status_code == 400, line
            body = r.json()
            assert body["error"]["code"] == -32600 and body["id"] == answer_id, line
        assert (await post(c, http_bridge.url, PING, Mcp_Session_Id=sid)).json()["result"] == {}


# ---------------------------------------------------------------- bounded echoes

BIG = "A" * 3_000_000


def _cases() -> list[dict[str, Any]]:
    def rq(i: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    volume = "self__audio_speaker__set_volume"
    return [
        rq(1, BIG),
        rq(2, "tools/call", {"name": BIG}),
        rq(3, "tools/call", {"name": volume, "arguments": {"volume": BIG}}),
        rq(4, "resources/read", {"uri": BIG}),
        rq(5, "resources/subscribe", {"uri": BIG}),
        {"jsonrpc": BIG, "id": 6, "method": "ping"},
        rq(7, "tools/call", {"name": volume, "arguments": {"volume": [BIG]}}),
    ]


def test_stdio_error_texts_quote_a_bounded_prefix() -> None:
    # Before: each answer quoted the 3 MB input in full (the tool name, the schema
    # checker's message, the URI, the SDK's "Method not found" data).
    cases = _cases()
    lines = [json.dumps(INIT), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    lines += [json.dumps(c) for c in cases]
    lines.append('{"' + BIG + '":1,"' + BIG + '":2}')
    out = run_stdio(lines)
    answers = [m for m in out if m.get("id") != 0]
    assert len(answers) == len(cases) + 1
    for message in answers:
        assert len(json.dumps(message)) < 2 * TEXT_LIMIT, json.dumps(message)[:300]
    by_id = {m["id"]: m for m in answers if m["id"] is not None}
    assert "3000000 characters" in by_id[2]["error"]["message"]
    assert by_id[3]["result"]["isError"] is True
    assert "3000000" in json.dumps(by_id[4]["error"])  # the data names the size
    duplicate = next(m for m in answers if m["id"] is None)
    assert "duplicate key 'AAAA" in duplicate["error"]["message"]


@pytest.mark.parametrize("index", range(len(_cases())))
async def test_http_error_texts_quote_a_bounded_prefix(http_bridge: HttpBridge, index: int) -> None:
    case = _cases()[index]
    async with httpx.AsyncClient(timeout=30) as c:
        sid = await open_session(c, http_bridge.url, "2025-06-18")
        r = await post(c, http_bridge.url, case, Mcp_Session_Id=sid)
        assert len(r.content) < 2 * TEXT_LIMIT, r.content[:300]
        assert "error" in r.json() or r.json()["result"]["isError"] is True
