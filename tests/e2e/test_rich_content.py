"""Rich tool results end to end (issue 41 item 3): the desk lamp simulator's audio clip
(`self.lamp.chime`) and its result of three items (`self.light.snapshot`: text, image,
embedded resource) through the typed bindings, the runtime's dynamic mode, and the
official MCP SDK client behind the bridge."""

from __future__ import annotations

import base64
import json

from e2e_testlib import Built
from mcp import Client
from mcp_types import AudioContent, EmbeddedResource, ImageContent, TextContent, TextResourceContents
from test_bridge_simulator import bridge_params

from mcpgen.runtime import Audio, Image, connect_process
from mcpgen.runtime import EmbeddedResource as Embedded


def wav_samples(data: bytes) -> int:
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    return int.from_bytes(data[40:44], "little")


async def test_typed_bindings_return_audio_and_a_tuple_of_items(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    lamp = built_lamp.bindings(device, policy="strict")
    try:
        clip = await lamp.lamp.chime(notes=3)
        assert isinstance(clip, Audio) and clip.mime_type == "audio/wav"
        assert wav_samples(clip.data) == 960
        await lamp.light.set_rgb(r=4, g=5, b=6)
        text, icon, status = await lamp.light.snapshot()
        assert text == "The lamp is off, colour (4, 5, 6), effect none."
        assert isinstance(icon, Image) and icon.mime_type == "image/png"
        assert icon.data == await lamp.resources.icon.read()
        assert isinstance(status, Embedded)
        assert (status.uri, status.mime_type) == ("lamp://status", "application/json")
        assert status.blob_base64 is None and json.loads(status.text)["rgb"] == [4, 5, 6]
        assert status.data == status.text.encode()
    finally:
        await device.close()


async def test_dynamic_mode_decodes_each_item_by_its_type(built_lamp: Built) -> None:
    device = await connect_process([str(built_lamp.exe), "--stdio"])
    try:
        clip = await device.call("self.lamp.chime", {"notes": 1})
        assert isinstance(clip, Audio) and wav_samples(clip.data) == 320
        text, icon, status = await device.call("self.light.snapshot", {})
        assert text.startswith("The lamp is off") and isinstance(icon, Image)
        assert isinstance(status, Embedded) and status.uri == "lamp://status"
        raw = await device.call_raw("self.light.snapshot", {})
        assert [item["type"] for item in raw["content"]] == ["text", "image", "resource"]
    finally:
        await device.close()


async def test_sdk_client_gets_the_items_unchanged_through_the_bridge(built_lamp: Built) -> None:
    async with Client(bridge_params(built_lamp), mode="legacy", read_timeout_seconds=30) as client:
        chime = await client.call_tool("self__lamp__chime", {"notes": 2})
        assert not chime.is_error
        [audio] = chime.content
        assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
        assert wav_samples(base64.b64decode(audio.data)) == 640

        snapshot = await client.call_tool("self__light__snapshot", {})
        text, image, embedded = snapshot.content
        assert isinstance(text, TextContent) and text.text.startswith("The lamp is")
        assert isinstance(image, ImageContent) and base64.b64decode(image.data).startswith(b"\x89PNG")
        assert isinstance(embedded, EmbeddedResource)
        contents = embedded.resource
        assert isinstance(contents, TextResourceContents)
        assert str(contents.uri) == "lamp://status" and contents.mime_type == "application/json"
        assert json.loads(contents.text)["effect"] == "none"


def test_codegen_run_prints_each_kind_by_name() -> None:
    """What `codegen run` (host, QEMU, the console) prints for the rich results."""
    from mcpgen.codegen.run.run_qemu import show_value

    items = (
        "hi",
        Image("image/png", "iVBORw=="),
        Audio("audio/wav", "UklGRg=="),
        Embedded("lamp://status", "application/json", text="{}"),
    )
    assert show_value(list(items)) == (
        '["hi", "<image image/png, 4 bytes>", "<audio audio/wav, 4 bytes>", '
        '"<resource lamp://status application/json, 2 bytes>"]'
    )
