"""The spec's ``prompts:`` (issue 41 item 4): the model, its JSON for the bridge, and one
located error per rule (file, line, field, what was expected, a hint)."""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import pytest

from mcpgen.codegen.spec.loader import load_spec, load_spec_text
from mcpgen.codegen.spec.prompt_json import prompts_json
from mcpgen.codegen.spec.spec_errors import SpecErrors

HEAD = """\
device: {name: lamp, version: "1.0.0"}
resources:
  status: {description: State., mime_type: application/json, uri: "lamp://status", content: text}
tools:
  - name: self.light.set_rgb
    description: Set the colour.
    params:
      r: {type: integer, min: 0, max: 255}
    returns: boolean
prompts:
"""
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


def spec(prompts: str) -> str:
    return HEAD + textwrap.indent(textwrap.dedent(prompts).strip("\n"), "  ") + "\n"


def errors(prompts: str) -> list[tuple[int, str, str, str]]:
    with pytest.raises(SpecErrors) as caught:
        load_spec_text(spec(prompts), "lamp.yaml")
    return [(e.line, e.path, e.message, e.hint) for e in caught.value.errors]


def test_a_prompt_becomes_the_model_and_the_bridge_json() -> None:
    s = load_spec_text(
        spec(f"""
        evening:
          title: Evening light
          description: Set the lamp up for the evening.
          arguments:
            level: {{type: integer, min: 0, max: 100, default: 30, description: Brightness}}
            mood: {{type: string, enum: [warm, candle]}}
          messages:
            - role: user
              text: "Make it {{{{mood}}}} at {{{{level}}}} % with {{{{tool:self.light.set_rgb}}}}; see {{{{resource:lamp://status}}}}."
            - role: assistant
              image: {{data: {PNG}, mime_type: image/png}}
            - role: user
              resource: {{uri: "lamp://notes/{{{{mood}}}}", mime_type: text/plain, text: Notes.}}
    """)
    )
    (p,) = s.prompts
    assert (p.name, p.title) == ("evening", "Evening light")
    assert [a.name for a in p.arguments] == ["level", "mood"]
    assert [a.required for a in p.arguments] == [False, True]
    assert [m.role for m in p.messages] == ["user", "assistant", "user"]
    (data,) = prompts_json(s)
    assert data["arguments"][0] == {
        "name": "level",
        "required": False,
        "schema": {
            "type": "integer",
            "description": "Brightness",
            "minimum": 0,
            "maximum": 100,
            "default": 30,
        },
    }
    assert data["messages"][1]["content"] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    assert data["messages"][2]["content"]["resource"]["uri"] == "lamp://notes/{{mood}}"


def test_prompts_stay_out_of_the_fingerprint() -> None:
    """The device never serves them: editing a prompt needs no new firmware."""
    one = load_spec_text(spec("p: {description: d, messages: [{role: user, text: one}]}"))
    two = load_spec_text(spec("p: {description: d, messages: [{role: user, text: two}]}"))
    assert one.prompts != two.prompts
    assert one.fingerprint == two.fingerprint


def test_an_image_file_is_read_beside_the_spec(tmp_path: Path) -> None:
    (tmp_path / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    path = tmp_path / "lamp.yaml"
    path.write_text(
        spec("p: {description: d, messages: [{role: user, image: {file: icon.png, mime_type: image/png}}]}")
    )
    (p,) = load_spec(path).prompts
    assert p.messages[0].content.data == PNG


@pytest.mark.parametrize(
    ("prompts", "line", "path", "message", "hint"),
    [
        pytest.param(
            "p: {description: d, messages: [{role: user, text: 'use {{tool:self.light.set_rbg}}'}]}",
            11,
            "prompts.p.messages[0].text",
            "`{{tool:self.light.set_rbg}}` names no tool of this spec",
            "did you mean `self.light.set_rgb`?",
            id="unknown-tool",
        ),
        pytest.param(
            "p: {description: d, messages: [{role: user, text: 'see {{resource:lamp://stats}}'}]}",
            11,
            "prompts.p.messages[0].text",
            "`{{resource:lamp://stats}}` names no resource of this spec",
            "did you mean `lamp://status`?",
            id="unknown-resource",
        ),
        pytest.param(
            """
            p:
              description: d
              arguments: {level: {type: integer}}
              messages: [{role: user, text: 'at {{levle}}'}]
            """,
            14,
            "prompts.p.messages[0].text",
            "`{{levle}}` is not an argument of this prompt",
            "did you mean `level`?",
            id="unknown-argument",
        ),
        pytest.param(
            """
            p:
              description: d
              arguments: {level: {type: integer}}
              messages: [{role: user, text: plain}]
            """,
            13,
            "prompts.p.arguments.level",
            "argument `level` is not used by any message",
            "write {{level}} in a message's text, or remove the argument",
            id="unused-argument",
        ),
        pytest.param(
            "p: {description: d, messages: [{role: robot, text: hi}]}",
            11,
            "prompts.p.messages[0].role",
            "expected a role (one of user, assistant), got string 'robot'",
            "",
            id="bad-role",
        ),
        pytest.param(
            "p: {description: d, messages: [{role: user, text: hi, image: {data: AA==, mime_type: image/png}}]}",  # noqa: E501
            11,
            "prompts.p.messages[0]",
            "a message has one content: `text`, `image` or `resource`, this one has 2",
            "split it into one message per content",
            id="two-contents",
        ),
        pytest.param(
            "p: {description: d, messages: [{role: user, image: {data: '!!', mime_type: image/png}}]}",
            11,
            "prompts.p.messages[0].image.data",
            "`data` is not base64",
            "encode the image with `base64 -w0 FILE`, or name the file with `file:`",
            id="bad-base64",
        ),
        pytest.param(
            "p: {description: d, messages: [{role: user, image: {file: nowhere.png, mime_type: image/png}}]}",
            11,
            "prompts.p.messages[0].image.file",
            "cannot read `nowhere.png`: No such file or directory",
            "the path is relative to the spec's folder",
            id="missing-image-file",
        ),
        pytest.param(
            "p: {description: d, messages: [{role: user, image: {data: AA==, mime_type: text/plain}}]}",
            11,
            "prompts.p.messages[0].image.mime_type",
            "`text/plain` is not an image MIME type",
            "write it like image/png",
            id="image-mime",
        ),
        pytest.param(
            "p: {description: d, params: {x: {type: string}}, messages: [{role: user, text: hi}]}",
            11,
            "prompts.p.params",
            "unknown key `params`",
            "a prompt's inputs are `arguments`",
            id="params-key",
        ),
        pytest.param(
            "p: {description: d, messages: []}",
            11,
            "prompts.p.messages",
            "expected at least one message",
            "add `- {role: user, text: ...}`",
            id="no-messages",
        ),
        pytest.param(
            "p: {messages: [{role: user, text: hi}]}",
            11,
            "prompts.p",
            "missing required key `description`",
            "add `description: ...`: a client shows it when the user picks a prompt",
            id="no-description",
        ),
    ],
)
def test_each_rule_reports_where_and_how_to_fix(
    prompts: str, line: int, path: str, message: str, hint: str
) -> None:
    assert errors(prompts) == [(line, path, message, hint)]
