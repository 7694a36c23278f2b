"""The spec's named object types (`types:`, issue 41 item 5): checked with located errors,
published as JSON Schema 2020-12 $defs/$ref, kept through a release's canonical form, and
judged by `codegen diff` like parameters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mcpgen.codegen.spec.canonical import spec_from_canonical
from mcpgen.codegen.spec.evolution import diff_specs
from mcpgen.codegen.spec.loader import load_spec, load_spec_text
from mcpgen.codegen.spec.mcp_json import input_schema
from mcpgen.codegen.spec.spec_errors import SpecError

SCENE = Path(__file__).parents[1] / "device" / "types_spec" / "scene_lamp.yaml"

HEAD = """\
device: {name: t, version: "1"}
types:
  Color:
    fields:
      r: {type: integer, min: 0, max: 255}
      g: {type: integer, min: 0, max: 255, default: 0}
"""
TOOL = """\
tools:
  - name: self.a
    description: d
    params:
      c: {type: Color}
"""


def test_model_schema_and_canonical_round_trip() -> None:
    spec = load_spec(SCENE)
    assert [t.name for t in spec.types] == ["Color", "Scene"]
    scene = spec.tool("self.light.set_scene").params[1]
    assert (scene.name, scene.type, scene.ref) == ("scene", "object", "Scene")
    schema = input_schema(spec.tool("self.light.set_scene"), spec.types)
    assert list(schema["$defs"]) == ["Color", "Scene"]
    again = spec_from_canonical(spec.canonical())
    assert again.types == spec.types and again.fingerprint == spec.fingerprint


def test_a_spec_without_types_keeps_its_canonical_form() -> None:
    text = HEAD.split("types:")[0] + TOOL.replace("{type: Color}", "{type: integer}")
    spec = load_spec_text(text, "s.yaml")
    assert "types" not in spec.canonical()
    assert "ref" not in spec.canonical()["tools"][0]["params"][0]


@pytest.mark.parametrize(
    "text,line,column,path,message,hint",
    [
        (
            HEAD + TOOL.replace("{type: Color}", "{type: Colour}"),
            11,
            17,
            "tools[0].params.c.type",
            "expected a parameter type or a name of `types:`",
            "did you mean `Color`?",
        ),
        (
            HEAD + TOOL.replace("{type: Color}", "{type: Color, default: {}}"),
            11,
            24,
            "tools[0].params.c.default",
            "unknown key `default`",
            "always required",
        ),
        (
            HEAD + TOOL.replace("{type: Color}", "{type: Color, max: 3}"),
            11,
            24,
            "tools[0].params.c.max",
            "unknown key `max`",
            "belongs in the fields of `Color`",
        ),
        (
            HEAD.replace("{type: integer, min: 0, max: 255}\n", "{type: Color}\n", 1) + TOOL,
            5,
            7,
            "types.Color.fields.r",
            "type `Color` contains itself (Color -> Color)",
            "break the loop",
        ),
        (
            HEAD.replace("  Color:", "  color:") + TOOL.replace("Color", "integer"),
            3,
            3,
            "types.color",
            "type name `color` is not a CamelCase name",
            "write it like `Color`",
        ),
        (
            HEAD.replace("    fields:\n", "    field:\n") + TOOL,
            4,
            5,
            "types.Color.field",
            "unknown key `field`",
            "",
        ),
        (
            HEAD + TOOL + "events:\n  e:\n    description: d\n    params:\n      c: {type: Color}\n",
            16,
            17,
            "events.e.params.c.type",
            "expected a parameter type",
            "",
        ),
    ],
)
def test_located_errors(
    one_error: Callable[[str], SpecError],
    text: str,
    line: int,
    column: int,
    path: str,
    message: str,
    hint: str,
) -> None:
    e = one_error(text)
    assert (e.line, e.column, e.path) == (line, column, path), e.format()
    assert message in e.message, e.format()
    assert hint in e.hint, e.format()


def test_a_loop_through_two_types_is_one_error_at_the_field_that_closes_it(
    errors_of: Callable[[str], list[SpecError]],
) -> None:
    text = (
        'device: {name: t, version: "1"}\ntypes:\n  A:\n    fields:\n      b: {type: B}\n'
        "  B:\n    fields:\n      a: {type: A}\n" + TOOL.replace("Color", "A")
    )
    [e] = errors_of(text)
    assert (e.line, e.path) == (8, "types.B.fields.a") and "(A -> B -> A)" in e.message


def _diff(old: str, new: str) -> list[tuple[str, str, str]]:
    changes = diff_specs(load_spec_text(old, "old.yaml"), load_spec_text(new, "new.yaml"))
    return [(c.verdict, c.path, c.what) for c in changes]


@pytest.mark.parametrize(
    "edit,expected",
    [
        (
            ("max: 255, default: 0", "max: 100, default: 0"),
            [("breaking", "types.Color.fields.g.max", "range narrowed: max 255 -> 100")],
        ),
        (
            ("min: 0, max: 255}", "min: 0, max: 999}"),
            [("compatible", "types.Color.fields.r.max", "range widened: max 255 -> 999")],
        ),
        (
            ("      g: {type: integer, min: 0, max: 255, default: 0}\n", ""),
            [("breaking", "types.Color.fields.g", "field `g` removed")],
        ),
        (
            ("      g:", "      w: {type: boolean}\n      g:"),
            [("breaking", "types.Color.fields.w", "required field `w` added")],
        ),
        (
            ("      g:", "      w: {type: boolean, default: true}\n      g:"),
            [("compatible", "types.Color.fields.w", "optional field `w` added (default True)")],
        ),
        (
            (", max: 255, default: 0}", ", max: 255}"),
            [("breaking", "types.Color.fields.g.default", "parameter became required (default removed)")],
        ),
    ],
)
def test_diff_judges_a_types_fields_like_parameters(
    edit: tuple[str, str], expected: list[tuple[str, str, str]]
) -> None:
    old = HEAD + TOOL
    assert _diff(old, old.replace(*edit)) == expected


def test_diff_of_a_renamed_type_with_the_same_shape_is_compatible() -> None:
    old = HEAD + TOOL
    new = old.replace("Color", "Rgb")
    changes = _diff(old, new)
    assert ("compatible", "tools.self.a.params.c.type", "named type changed from Color to Rgb") in changes
    assert all(verdict == "compatible" for verdict, _, _ in changes), changes


def test_diff_of_a_scalar_parameter_becoming_an_object_is_breaking() -> None:
    old = HEAD + TOOL.replace("{type: Color}", "{type: integer}")
    assert _diff(old, HEAD + TOOL) == [
        ("breaking", "tools.self.a.params.c.type", "type changed from integer to Color"),
    ]


def test_the_xiaozhi_glue_refuses_a_named_type() -> None:
    """The stock firmware's McpServer properties are scalars: the xiaozhi target says so."""
    from mcpgen.codegen.emit import xiaozhi

    with pytest.raises(xiaozhi.XiaozhiSpecError, match="parameter scene: type Scene is an object"):
        xiaozhi.emit(load_spec(SCENE))


def test_tools_md_lists_the_types() -> None:
    from mcpgen.codegen.emit.docs import tools_markdown

    text = tools_markdown(load_spec(SCENE))
    assert "| `scene` | [`Scene`](#type-scene) | yes |" in text
    assert "### type Color" in text and "| `b` | integer | no | `0` | 0 to 255 |  |" in text
