"""Rich tool results on the host simulator (issue 41 item 3): `returns: audio` (raw bytes
base64-encoded by the core as it writes the reply), `returns: resource` (one of the spec's
resources read into the result) and `returns: [kinds...]` (several items, checked against
the spec's list). Every failure is a JSON-RPC error carrying the request's id."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_sim_driver import StdioSim

from mcpgen.codegen.targets.host import build_host

SPEC = """\
device: {name: content-check, version: 1.0.0}
resources:
  note:
    description: A note.
    mime_type: text/plain
    uri: note://today
    content: text
  blob:
    description: Bytes 0, 1, 2, ... of a length.
    mime_type: application/octet-stream
    uri_template: blob://{n}
    params:
      n: {type: integer, min: 0, max: 100}
    content: binary
  missing:
    description: Never there.
    mime_type: text/plain
    uri: note://missing
    content: text
tools:
  - name: clip
    description: A clip of n bytes 0, 1, 2, ...
    params:
      n: {type: integer, min: 0, max: 20000}
    returns: audio
  - name: pair
    description: A text and an audio clip, or (by mode) items that break the spec's list.
    params:
      mode: {type: string, enum: [ok, swapped, short, many, bytes_image, none]}
    returns: [text, audio]
  - name: picture
    description: A text and an image given as raw bytes.
    returns: [text, image]
  - name: embed
    description: Embeds the resource at uri.
    params:
      uri: {type: string}
    returns: resource
  - name: wrong
    description: Declares a string, returns audio.
    returns: string
"""

HANDLERS = r"""
#include <string.h>

#include "mcp_tools.h"

namespace {
uint8_t g_bytes[20000];
const uint8_t* counting(size_t n) {
  for (size_t i = 0; i < n; ++i) g_bytes[i] = static_cast<uint8_t>(i & 0xFF);
  return g_bytes;
}
}  // namespace

namespace tools {
mcpgen::Result clip(const ClipArgs& args, mcpgen::Context& ctx) {
  size_t n = static_cast<size_t>(args.n);
  return mcpgen::Result::Audio(ctx, "audio/L16", counting(n), n);
}
mcpgen::Result pair(const PairArgs& args, mcpgen::Context& ctx) {
  if (strcmp(args.mode, "none") == 0) return mcpgen::Result::Items(ctx);  // never called ctx.items()
  mcpgen::ContentItems& items = ctx.items();
  const uint8_t* b = counting(5);
  if (strcmp(args.mode, "ok") == 0) items.text("hi").audio("audio/wav", b, 5);
  if (strcmp(args.mode, "swapped") == 0) items.audio("audio/wav", b, 5).text("hi");
  if (strcmp(args.mode, "short") == 0) items.text("hi");
  if (strcmp(args.mode, "many") == 0) items.text("1").text("2").text("3").text("4").text("5");
  if (strcmp(args.mode, "bytes_image") == 0) items.text("hi").image("image/png", b, 5);
  return mcpgen::Result::Items(ctx);
}
mcpgen::Result picture(const PictureArgs&, mcpgen::Context& ctx) {
  ctx.items().text("a picture").image("image/png", counting(4), 4);
  return mcpgen::Result::Items(ctx);
}
mcpgen::Result embed(const EmbedArgs& args, mcpgen::Context& ctx) {
  return mcpgen::Result::Resource(ctx, args.uri);
}
mcpgen::Result wrong(const WrongArgs&, mcpgen::Context& ctx) {
  return mcpgen::Result::Audio(ctx, "audio/wav", counting(3), 3);
}
}  // namespace tools

namespace resources {
mcpgen::ReadStatus read_note(mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.text("buy \"milk\"");
  return mcpgen::ReadStatus::kOk;
}
mcpgen::ReadStatus read_blob(const ResourceArgs_blob& args, mcpgen::ResourceWriter& out, mcpgen::Context&) {
  out.bytes(counting(static_cast<size_t>(args.n)), static_cast<size_t>(args.n));
  return mcpgen::ReadStatus::kOk;
}
mcpgen::ReadStatus read_missing(mcpgen::ResourceWriter&, mcpgen::Context&) {
  return mcpgen::ReadStatus::kNotFound;
}
}  // namespace resources
"""


@pytest.fixture(scope="module")
def content_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("content_check")
    (d / "content_check.yaml").write_text(SPEC, encoding="utf-8")
    (d / "content_check_handlers.cpp").write_text(HANDLERS, encoding="utf-8")
    return build_host(d / "content_check.yaml", tmp_path_factory.mktemp("build_content"), log=lambda _: None)


@pytest.fixture
def dev(content_exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(content_exe, tmp_path)
    yield s
    s.close()


def counting(n: int) -> bytes:
    return bytes(i & 0xFF for i in range(n))


def result(sim: StdioSim, tool: str, args: dict) -> dict:
    reply = sim.request("tools/call", {"name": tool, "arguments": args})
    assert "error" not in reply, reply
    assert reply["result"]["isError"] is False
    return reply["result"]


def error(sim: StdioSim, tool: str, args: dict) -> dict:
    reply = sim.request("tools/call", {"name": tool, "arguments": args})
    assert "result" not in reply and reply["id"] is not None, reply
    return reply["error"]


# Every padding of the last base64 group, a run boundary of the encoder (48 bytes = 64
# characters), and a clip of several kilobytes.
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 47, 48, 49, 5000])
def test_audio_is_the_bytes_base64_encoded(dev: StdioSim, n: int) -> None:
    [item] = result(dev, "clip", {"n": n})["content"]
    assert item == {"type": "audio", "data": base64.b64encode(counting(n)).decode(), "mimeType": "audio/L16"}


def test_a_clip_larger_than_the_reply_buffer_is_an_error_with_the_id(dev: StdioSim) -> None:
    err = error(dev, "clip", {"n": 20000})
    assert err["code"] == -32603 and "response buffer too small" in err["message"]
    # The next call is served as usual.
    assert result(dev, "clip", {"n": 3})["content"][0]["data"] == "AAEC"


def test_items_in_the_declared_order(dev: StdioSim) -> None:
    assert result(dev, "pair", {"mode": "ok"})["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "audio", "data": base64.b64encode(counting(5)).decode(), "mimeType": "audio/wav"},
    ]
    assert result(dev, "picture", {})["content"] == [
        {"type": "text", "text": "a picture"},
        {"type": "image", "data": base64.b64encode(counting(4)).decode(), "mimeType": "image/png"},
    ]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("swapped", "handler of pair returned the items [audio, text], the spec declares [text, audio]"),
        ("short", "handler of pair returned the items [text], the spec declares [text, audio]"),
        ("bytes_image", "handler of pair returned the items [text, image], the spec declares [text, audio]"),
        ("many", "handler of pair added more content items than MCPGEN_CONTENT_ITEMS (4)"),
        # after an "ok" call: the items of an earlier call are never returned again
        ("none", "handler of pair returned the items [], the spec declares [text, audio]"),
    ],
)
def test_items_that_break_the_spec_list_are_an_internal_error(dev: StdioSim, mode: str, message: str) -> None:
    assert result(dev, "pair", {"mode": "ok"})["content"][0] == {"type": "text", "text": "hi"}
    err = error(dev, "pair", {"mode": mode})
    assert err == {"code": -32603, "message": "Internal error: " + message}
    assert result(dev, "pair", {"mode": "ok"})["content"][0] == {"type": "text", "text": "hi"}


def test_embedded_text_resource(dev: StdioSim) -> None:
    [item] = result(dev, "embed", {"uri": "note://today"})["content"]
    assert item == {
        "type": "resource",
        "resource": {"uri": "note://today", "mimeType": "text/plain", "text": 'buy "milk"'},
    }


def test_embedded_template_instance_is_binary_as_read(dev: StdioSim) -> None:
    [item] = result(dev, "embed", {"uri": "blob://7"})["content"]
    [read] = dev.request("resources/read", {"uri": "blob://7"})["result"]["contents"]
    assert item == {"type": "resource", "resource": read}
    assert base64.b64decode(read["blob"]) == counting(7)


NOT_IN_SPEC = 'Internal error: the embedded resource "note://nope" is no resource of the spec'


@pytest.mark.parametrize(
    ("uri", "code", "message"),
    [
        ("note://nope", -32603, NOT_IN_SPEC),
        ("note://missing", -32002, "Resource not found: missing has nothing at this URI"),
        ("blob://500", -32602, None),
        ("x" * 300, -32603, None),
    ],
)
def test_a_resource_that_cannot_be_embedded_is_an_error(
    dev: StdioSim, uri: str, code: int, message: str
) -> None:
    err = error(dev, "embed", {"uri": uri})
    assert err["code"] == code, err
    if message is not None:
        assert err["message"] == message
    assert result(dev, "embed", {"uri": "note://today"})["content"][0]["type"] == "resource"


def test_a_kind_the_spec_does_not_declare_is_refused(dev: StdioSim) -> None:
    err = error(dev, "wrong", {})
    message = "Internal error: handler of wrong returned audio, the spec declares string"
    assert err == {"code": -32603, "message": message}


def test_lamp_chime_is_a_wav_clip(lamp: StdioSim) -> None:
    for notes, samples in ((1, 320), (3, 960)):
        [item] = lamp.call("self.lamp.chime", {"notes": notes})["content"]
        wav = base64.b64decode(item["data"], validate=True)
        assert item["type"] == "audio" and item["mimeType"] == "audio/wav"
        assert wav[:4] == b"RIFF" and wav[8:16] == b"WAVEfmt " and len(wav) == 44 + samples
        assert int.from_bytes(wav[40:44], "little") == samples


def test_lamp_snapshot_is_text_image_and_the_status_resource(lamp: StdioSim) -> None:
    lamp.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3})
    text, image, resource = lamp.call("self.light.snapshot", {})["content"]
    assert text == {"type": "text", "text": "The lamp is off, colour (1, 2, 3), effect none."}
    [icon] = lamp.request("resources/read", {"uri": "lamp://icon.png"})["result"]["contents"]
    assert image == {"type": "image", "data": icon["blob"], "mimeType": "image/png"}
    [status] = lamp.request("resources/read", {"uri": "lamp://status"})["result"]["contents"]
    assert resource == {"type": "resource", "resource": status}
    assert json.loads(status["text"])["rgb"] == [1, 2, 3]
