"""`returns:` of rich content (issue 41 item 3): `audio`, `resource` (an embedded resource
of the spec's own) and a list of content items, each checked with located errors; the
model, fingerprint, canonical form and `codegen diff` rules that carry them."""

from __future__ import annotations

import textwrap

import pytest

from mcpgen.codegen.spec.canonical import spec_from_canonical
from mcpgen.codegen.spec.evolution import diff_specs
from mcpgen.codegen.spec.loader import load_spec_text

RESOURCES = """
resources:
  status:
    description: s
    mime_type: application/json
    uri: dev://status
    content: text
"""


def spec(returns: str, resources: str = RESOURCES) -> str:
    return textwrap.dedent(
        f"""\
        device: {{name: t, version: "1"}}
        tools:
          - name: self.a
            description: d
            returns: {returns}
        """
    ) + textwrap.dedent(resources)


@pytest.mark.parametrize(
    ("returns", "kind", "items"),
    [
        ("audio", "audio", ()),
        ("resource", "resource", ()),
        ("[text, image]", "content", ("text", "image")),
        ("[audio, text, resource, image]", "content", ("audio", "text", "resource", "image")),
        ("[text]", "content", ("text",)),
    ],
)
def test_rich_returns_load(returns: str, kind: str, items: tuple[str, ...]) -> None:
    model = load_spec_text(spec(returns)).tools[0].returns
    assert (model.kind, model.items) == (kind, items)


def test_a_list_is_part_of_the_fingerprint_and_the_canonical_form() -> None:
    a = load_spec_text(spec("[text, image]"))
    b = load_spec_text(spec("[image, text]"))
    assert a.fingerprint != b.fingerprint
    assert spec_from_canonical(a.canonical()).tools[0].returns == a.tools[0].returns
    # A spec without lists has no `items` in its canonical form (fingerprints kept).
    plain = load_spec_text(spec("string")).canonical()
    assert "items" not in plain["tools"][0]["returns"]


def test_changing_the_items_is_a_breaking_change() -> None:
    old = load_spec_text(spec("[text, image]"))
    new = load_spec_text(spec("[text, audio]"))
    [change] = diff_specs(old, new)
    assert change.breaking and "content items changed from [text, image] to [text, audio]" in change.what


@pytest.mark.parametrize(
    ("returns", "line", "column", "path", "message", "hint"),
    [
        ("[]", 5, 14, "tools[0].returns", "expected at least one content kind", "[text, image]"),
        (
            "[text, string]",
            5,
            21,
            "tools[0].returns[1]",
            "expected a content kind (text, image, audio, resource), got string 'string'",
            "write `text`",
        ),
        ("[text, imgae]", 5, 21, "tools[0].returns[1]", "expected a content kind", "did you mean `image`?"),
        ("[text, {a: 1}]", 5, 21, "tools[0].returns[1]", "expected a content kind", ""),
        (
            "[text, text, text, text, text, text, text, text, text]",
            5,
            14,
            "tools[0].returns",
            "expected at most 8 content items, got 9",
            "fewer items",
        ),
        ("content", 5, 14, "tools[0].returns", "expected a return kind", "`returns: [text, image]`"),
        ("text", 5, 14, "tools[0].returns", "expected a return kind", "`returns: string`"),
    ],
)
def test_list_errors_are_located(one_error, returns, line, column, path, message, hint) -> None:
    error = one_error(spec(returns))
    assert error.path == path, error.format()
    assert message in error.message, error.format()
    assert hint in error.hint, error.format()
    assert (error.line, error.column) == (line, column), error.format()


@pytest.mark.parametrize("returns", ["resource", "[text, resource]"])
def test_an_embedded_resource_needs_the_specs_resources(one_error, returns: str) -> None:
    error = one_error(spec(returns, resources=""))
    assert error.path == "tools[0].returns" and (error.line, error.column) == (5, 14), error.format()
    assert "the spec declares none" in error.message
    assert "`resources:`" in error.hint
