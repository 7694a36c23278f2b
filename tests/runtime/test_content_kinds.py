"""The result decoder's rich kinds (issue 41 item 3), in whichever build runs (compiled or
pure Python): audio, an embedded resource, several items as a tuple, and what ``KIND_AUTO``
makes of each item; a malformed result is a ProtocolError, never a crash."""

from __future__ import annotations

import base64

import pytest

from mcpgen.runtime import Audio, EmbeddedResource, Image
from mcpgen.runtime.core import codec
from mcpgen.runtime.core.codec import KIND_AUDIO, KIND_AUTO, KIND_CONTENT, KIND_RESOURCE, decode_result
from mcpgen.runtime.errors import ProtocolError, ToolError

WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
B64 = base64.b64encode(WAV).decode()
AUDIO = {"type": "audio", "data": B64, "mimeType": "audio/wav"}
TEXT_RES = {
    "type": "resource",
    "resource": {"uri": "lamp://status", "mimeType": "application/json", "text": "{}"},
}
BLOB_RES = {
    "type": "resource",
    "resource": {"uri": "lamp://icon.png", "mimeType": "image/png", "blob": "iVBO"},
}
IMAGE = {"type": "image", "data": "iVBO", "mimeType": "image/png"}


def result(*items: object) -> dict:
    return {"content": list(items), "isError": False}


def test_the_kinds_are_named_like_the_spec() -> None:
    assert codec.KINDS["audio"] == KIND_AUDIO
    assert codec.KINDS["resource"] == KIND_RESOURCE
    assert codec.KINDS["content"] == KIND_CONTENT


def test_audio() -> None:
    clip = decode_result(result(AUDIO), KIND_AUDIO)
    assert isinstance(clip, Audio)
    assert (clip.mime_type, clip.data_base64, clip.data) == ("audio/wav", B64, WAV)
    assert clip == Audio("audio/wav", B64) and hash(clip) == hash(Audio("audio/wav", B64))
    assert clip != Audio("audio/ogg", B64) and clip != Image("audio/wav", B64)
    assert repr(clip) == f"Audio('audio/wav', {len(B64)} base64 chars)"
    # Without a MIME type the clip is still decoded, as bytes of an unknown type.
    bare = decode_result(result({"type": "audio", "data": B64}), KIND_AUDIO)
    assert bare.mime_type == "application/octet-stream"


@pytest.mark.parametrize("cls", [Image, Audio])
def test_image_and_audio_share_one_body(cls: type) -> None:
    """One base class holds the MIME type, the base64 text and its bytes decoded on first
    use (issue 42 item 4); each subclass keeps its own name, equality and hash."""
    (base,) = Image.__bases__
    assert Audio.__bases__ == (base,) and base.__name__ == "_Base64Media"
    item = cls("audio/wav", B64)
    assert item.data is item.data == WAV  # decoded once, then kept
    assert item == cls("audio/wav", B64) and hash(item) == hash(cls("audio/wav", B64))
    assert item != (Audio if cls is Image else Image)("audio/wav", B64)
    assert repr(item) == f"{cls.__name__}('audio/wav', {len(B64)} base64 chars)"


def test_embedded_resource_text_and_blob() -> None:
    text = decode_result(result(TEXT_RES), KIND_RESOURCE)
    assert isinstance(text, EmbeddedResource)
    assert (text.uri, text.mime_type, text.text, text.blob_base64, text.data) == (
        "lamp://status",
        "application/json",
        "{}",
        None,
        b"{}",
    )
    blob = decode_result(result(BLOB_RES), KIND_RESOURCE)
    assert (blob.text, blob.blob_base64, blob.data) == (None, "iVBO", base64.b64decode("iVBO"))
    assert blob == EmbeddedResource("lamp://icon.png", "image/png", None, "iVBO")
    assert "lamp://icon.png" in repr(blob)


def test_several_items_are_a_tuple_in_order() -> None:
    link = {"type": "resource_link", "uri": "lamp://status", "name": "status"}
    value = decode_result(result({"type": "text", "text": "hi"}, IMAGE, AUDIO, TEXT_RES, link), KIND_CONTENT)
    assert isinstance(value, tuple) and len(value) == 5
    text, image, clip, res, other = value
    assert text == "hi" and isinstance(image, Image) and isinstance(clip, Audio)
    assert isinstance(res, EmbeddedResource) and other == link  # an item it does not model: as sent
    assert decode_result(result(), KIND_CONTENT) == ()


def test_auto_decodes_each_item_by_its_type() -> None:
    assert isinstance(decode_result(result(AUDIO), KIND_AUTO), Audio)
    assert isinstance(decode_result(result(TEXT_RES), KIND_AUTO), EmbeddedResource)
    several = decode_result(result({"type": "text", "text": "42"}, AUDIO), KIND_AUTO)
    assert several[0] == 42 and isinstance(several[1], Audio)


@pytest.mark.parametrize(
    ("kind", "content", "message"),
    [
        (KIND_AUDIO, [{"type": "text", "text": "x"}], "expected audio content"),
        (KIND_AUDIO, [{"type": "audio", "data": 5}], "expected audio content"),
        (KIND_AUDIO, "nope", "expected audio content"),
        (KIND_RESOURCE, [{"type": "resource", "resource": {"uri": "a://b"}}], "expected an embedded"),
        (KIND_RESOURCE, [{"type": "resource", "resource": "a://b"}], "expected an embedded resource"),
        (KIND_RESOURCE, [{"type": "resource", "resource": {"uri": 1, "text": "t"}}], "expected an embedded"),
        (KIND_CONTENT, None, "expected a list of content items"),
        (KIND_CONTENT, [{"type": "audio", "data": None}], "expected audio content"),
    ],
)
def test_malformed_results_are_protocol_errors(kind: int, content: object, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        decode_result({"content": content}, kind)


def test_a_tool_error_is_raised_whatever_the_kind() -> None:
    for kind in (KIND_AUDIO, KIND_RESOURCE, KIND_CONTENT):
        with pytest.raises(ToolError, match="broken"):
            decode_result({"content": [{"type": "text", "text": "broken"}], "isError": True}, kind)
