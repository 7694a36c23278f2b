"""MCP progress from the device core (Context::progress): notifications/progress for the
tools/call being served, sent before its reply over the link the request came on, only
when the caller sent params._meta.progressToken (echoed byte for byte), framed like the
request (bare or in the xiaozhi envelope). The lamp's slow fade reports ten steps; a probe
spec checks the rules (increasing values, NaN, notify's size budget, odd tokens)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from device_testlib import LAMP_SPEC, host_simulator

from mcpgen.codegen.targets.host import build_host

PROBE_SPEC = """\
device: {name: progress-probe, version: 1.0.0}
tools:
  - name: self.probe
    description: Calls ctx.progress with good and bad values; returns what each call returned.
    progress: true
    params:
      message_len: {type: integer, min: 0, max: 400, default: 0}
    returns: string
  - name: self.quiet
    description: Reports nothing.
    returns: boolean
"""

PROBE_HANDLERS = r"""
#include <stdio.h>
#include <string.h>

#include "mcp_tools.h"

namespace tools {

mcpgen::Result probe(const ProbeArgs& args, mcpgen::Context& ctx) {
  static char big[401];
  memset(big, 'x', static_cast<size_t>(args.message_len));
  big[args.message_len] = '\0';
  int r[6];
  r[0] = ctx.progress_requested();
  r[1] = ctx.progress(1);  // no total, no message
  r[2] = ctx.progress(1, 5);  // not above the last value: refused
  r[3] = ctx.progress(__builtin_nan(""), 5);  // not finite: refused
  r[4] = ctx.progress(2, 5, big);  // refused when the params exceed MCPGEN_NOTIFY_SIZE
  r[5] = ctx.progress(3, -1, "done \"quoted\"\n");
  snprintf(ctx.scratch(), ctx.scratch_size(), "%d%d%d%d%d%d", r[0], r[1], r[2], r[3], r[4], r[5]);
  return mcpgen::Result::Text(ctx.scratch());
}

mcpgen::Result quiet(const QuietArgs&, mcpgen::Context&) { return mcpgen::Result::Bool(true); }

}  // namespace tools
"""


@pytest.fixture(scope="module")
def probe_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("progress_probe")
    spec = work / "probe.yaml"
    spec.write_text(PROBE_SPEC, encoding="utf-8")
    (work / "probe_handlers.cpp").write_text(PROBE_HANDLERS, encoding="utf-8")
    return build_host(spec, work / "build", log=lambda _m: None)


@pytest.fixture(scope="module")
def lamp_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return host_simulator(LAMP_SPEC, tmp_path_factory.mktemp("progress_lamp"))


def run(exe: Path, *lines: str) -> list[str]:
    """Sends the lines over --stdio and returns every line the device wrote, raw."""
    proc = subprocess.run(
        [str(exe), "--stdio"], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def call(
    name: str, arguments: dict, rid: int = 1, meta: str | None = None, envelope: str | None = None
) -> str:
    """A tools/call line; `meta` is the raw JSON text of params._meta (so tokens stay as typed)."""
    params = '{"name":' + json.dumps(name) + ',"arguments":' + json.dumps(arguments)
    if meta is not None:
        params += ',"_meta":' + meta
    msg = '{"jsonrpc":"2.0","id":' + str(rid) + ',"method":"tools/call","params":' + params + "}}"
    if envelope is not None:
        return '{"session_id":' + json.dumps(envelope) + ',"type":"mcp","payload":' + msg + "}"
    return msg


def progress_of(line: str) -> dict:
    msg = json.loads(line)
    payload = msg.get("payload", msg)
    assert payload["method"] == "notifications/progress", line
    assert "id" not in payload
    return payload["params"]


FADE = {"r": 10, "g": 20, "b": 30, "seconds": 0}


@pytest.mark.parametrize(
    "token_text", ['"fade-1"', '"t\\u00e9-\\"q\\""', "42", "-7", "12345678901234567890", "1.5e3"]
)
def test_fade_reports_ten_steps_before_its_reply_with_the_token_as_sent(
    lamp_exe: Path, token_text: str
) -> None:
    lines = run(lamp_exe, call("self.light.fade", FADE, meta='{"progressToken":' + token_text + "}"))
    assert len(lines) == 11
    for step, line in enumerate(lines[:10], start=1):
        # the token's bytes exactly as the request had them (escapes and number text kept)
        assert line.startswith(
            '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":' + token_text + ","
        ), line
        params = progress_of(line)
        assert params["progress"] == step and params["total"] == 10
        assert params["message"].startswith("rgb ")
    assert progress_of(lines[9])["message"] == "rgb 10,20,30"
    assert json.loads(lines[10]) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "true"}], "isError": False},
    }


def test_progress_goes_in_the_envelope_of_its_request(lamp_exe: Path) -> None:
    lines = run(lamp_exe, call("self.light.fade", FADE, rid=3, meta='{"progressToken":"e"}', envelope="s-9"))
    assert len(lines) == 11
    for line in lines[:10]:
        msg = json.loads(line)
        assert (msg["session_id"], msg["type"]) == ("s-9", "mcp")
        assert progress_of(line)["progressToken"] == "e"
    assert json.loads(lines[10])["payload"]["id"] == 3


@pytest.mark.parametrize(
    "meta",
    [
        None,  # no _meta: nothing asked
        "{}",
        '{"other":1}',
        '{"progressToken":null}',
        '{"progressToken":{"a":1}}',
        '{"progressToken":[1]}',
        '{"progressToken":true}',
        '{"progressToken":1,"progressToken":2}',  # which one? neither
        '{"progressToken":"\\ud800"}',  # a lone surrogate: strict parsers would refuse the echo
        '"token"',  # _meta not an object
    ],
)
def test_no_progress_unless_a_usable_token_was_sent(lamp_exe: Path, meta: str | None) -> None:
    lines = run(lamp_exe, call("self.light.fade", FADE, meta=meta))
    assert len(lines) == 1, lines
    assert json.loads(lines[0])["result"]["isError"] is False


def test_the_rules_of_context_progress(probe_exe: Path) -> None:
    lines = run(
        probe_exe,
        call("self.probe", {}, rid=1, meta='{"progressToken":"a"}'),
        call("self.probe", {"message_len": 400}, rid=2, meta='{"progressToken":"b"}'),
        call("self.probe", {}, rid=3),
        call("self.quiet", {}, rid=4, meta='{"progressToken":"c"}'),
        call("self.quiet", {}, rid=5),
    )
    replies = [json.loads(line) for line in lines if '"id":' in line]
    texts = [r["result"]["content"][0]["text"] for r in replies]
    # requested, progress(1), again 1 (refused), NaN (refused), 2 with message, 3
    assert texts[:3] == ["110011", "110001", "000000"]
    assert texts[3:] == ["true", "true"]  # a token to a tool that reports nothing: nothing sent
    notes = [progress_of(line) for line in lines if '"id":' not in line]
    assert notes == [
        {"progressToken": "a", "progress": 1},
        {"progressToken": "a", "progress": 2, "total": 5, "message": ""},
        {"progressToken": "a", "progress": 3, "message": 'done "quoted"\n'},
        {"progressToken": "b", "progress": 1},
        {"progressToken": "b", "progress": 3, "message": 'done "quoted"\n'},
    ]


def test_a_call_after_a_reporting_one_starts_its_values_over(lamp_exe: Path) -> None:
    lines = run(
        lamp_exe,
        call("self.light.fade", FADE, rid=1, meta='{"progressToken":1}'),
        call("self.light.fade", {**FADE, "r": 0}, rid=2, meta='{"progressToken":2}'),
    )
    assert [progress_of(x)["progress"] for x in lines if '"progressToken":2' in x] == list(range(1, 11))
