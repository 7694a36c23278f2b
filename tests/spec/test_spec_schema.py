"""toolspec.schema.json: a valid JSON Schema that accepts the examples and rejects mistakes."""

from __future__ import annotations

import json
import keyword
import textwrap

import jsonschema
import pytest
from spec_testlib import EXAMPLE_SPECS, SCHEMA_PATH

from mcpgen.codegen.spec.names import CPP_KEYWORDS, PYTHON_RESERVED
from mcpgen.codegen.spec.starter import starter_spec
from mcpgen.codegen.spec.yaml_source import compose, to_plain


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def schema_errors(validator: jsonschema.Draft7Validator, yaml_text: str) -> list[str]:
    data = to_plain(compose(textwrap.dedent(yaml_text)))
    return [e.message for e in validator.iter_errors(data)]


@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_example_specs_validate_against_the_schema(validator, path):
    assert schema_errors(validator, path.read_text(encoding="utf-8")) == []


def test_example_specs_point_editors_at_the_schema():
    for path in EXAMPLE_SPECS:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first == "# yaml-language-server: $schema=./toolspec.schema.json", path.name


def test_starter_spec_validates_against_the_schema(validator):
    assert schema_errors(validator, starter_spec("my-device")) == []


def test_unknown_key_fails_the_schema(validator):
    errors = schema_errors(
        validator,
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            descripton: d
        """,
    )
    assert any("'descripton' was unexpected" in m for m in errors), errors
    assert any("'description' is a required property" in m for m in errors), errors


@pytest.mark.parametrize(
    ("param", "fragment"),
    [
        pytest.param("{type: string, min: 1}", "False schema", id="min-on-string"),
        pytest.param("{type: integer, max_length: 3}", "False schema", id="max-length-on-integer"),
        pytest.param("{type: integer, default: true}", "is not of type 'integer'", id="bool-default-for-int"),
        pytest.param("{type: string, enum: []}", "should be non-empty", id="empty-enum"),
        pytest.param("{type: string, enum: [a, a]}", "non-unique", id="duplicate-enum"),
        pytest.param("{type: string, pattern: '[a'}", "is not a 'regex'", id="bad-pattern"),
        pytest.param("{type: int}", "is not valid under any of the given schemas", id="bad-type"),
        pytest.param("{min: 1}", "'type' is a required property", id="missing-type"),
    ],
)
def test_schema_rejects_bad_params(validator, param, fragment):
    errors = schema_errors(
        validator,
        f"""
        device: {{name: t, version: "1"}}
        tools:
          - name: self.a
            description: d
            params:
              x: {param}
        """,
    )
    assert any(fragment in m for m in errors), errors


@pytest.mark.parametrize(
    ("tool", "fragment"),
    [
        pytest.param("{name: self.a__b, description: d}", "does not match", id="double-underscore"),
        pytest.param("{name: 'a b', description: d}", "does not match", id="space-in-name"),
        pytest.param(f"{{name: self.{'x' * 60}, description: d}}", "does not match", id="longer-than-64"),
        pytest.param(
            "{name: self.a, description: d, params: {class: {type: string}}}",
            "should not be valid",
            id="reserved-param",
        ),
        pytest.param(
            "{name: self.a, description: d, returns: object}",
            "is not valid under any",
            id="object-without-properties",
        ),
        pytest.param(
            "{name: self.a, description: d, handler: int}", "should not be valid", id="keyword-handler"
        ),
        pytest.param("{name: self.a, description: d, user_only: yes}", "is not of type 'boolean'", id="yes"),
        pytest.param(
            "{name: self.a, description: d, returns: {type: object, properties: {v: {type: array}}}}",
            "is not valid under any",
            id="array-without-items",
        ),
    ],
)
def test_schema_rejects_bad_tools(validator, tool, fragment):
    errors = schema_errors(validator, f'device: {{name: t, version: "1"}}\ntools:\n  - {tool}\n')
    assert any(fragment in m for m in errors), errors


def test_schema_reserved_words_match_codegen_names():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    reserved = set(schema["definitions"]["identifier"]["not"]["enum"])
    # Every C++ keyword and every hard Python keyword is refused by the schema, and the
    # schema refuses nothing the loader accepts (soft keywords vary with Python's version).
    assert CPP_KEYWORDS <= reserved
    assert set(keyword.kwlist) | {"self", "cls"} <= reserved
    soft = set(keyword.softkwlist) | {"type", "_", "match", "case"}
    assert reserved <= CPP_KEYWORDS | PYTHON_RESERVED | soft
    handler_reserved = set(schema["definitions"]["tool"]["properties"]["handler"]["not"]["enum"])
    assert handler_reserved == CPP_KEYWORDS


def test_schema_lists_the_protocol_versions_the_loader_accepts():
    from mcpgen.codegen.spec.rules.tables import PROTOCOL_VERSIONS, SIMPLE_RETURN_KINDS

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    device = schema["definitions"]["device"]["properties"]
    assert device["protocol_version"]["enum"] == list(PROTOCOL_VERSIONS)
    returns = schema["definitions"]["tool"]["properties"]["returns"]["oneOf"][0]
    assert returns["enum"] == list(SIMPLE_RETURN_KINDS)


def test_every_schema_property_has_a_description():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    for name, definition in schema["definitions"].items():
        assert definition.get("description"), name
        for key, prop in definition.get("properties", {}).items():
            if "$ref" in prop or prop.get("const") is not None:
                continue
            assert prop.get("description"), f"{name}.{key}"


def test_the_committed_schema_is_the_one_the_rule_tables_generate():
    from mcpgen.codegen.spec.rules.schema import schema_text

    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "toolspec.schema.json is stale: run "
        "`python -m mcpgen.codegen.spec.rules.schema toolspec/toolspec.schema.json`"
    )


def test_a_key_the_rules_accept_cannot_miss_from_the_schema(monkeypatch):
    from mcpgen.codegen.spec.rules import schema

    monkeypatch.setattr(schema, "TOOL_KEYS", (*schema.TOOL_KEYS, "priority"))
    with pytest.raises(ValueError, match="a tool: the rules accept .*priority.* update mcpgen.codegen"):
        schema.editor_schema()


def test_the_schema_accepts_the_soft_keywords_the_loader_accepts(validator):
    from mcpgen.codegen.spec.loader import load_spec_text

    text = (
        'device: {name: t, version: "1"}\ntools:\n  - name: self.a\n    description: d\n'
        "    params:\n      match: {type: string}\n      _: {type: integer}\n"
    )
    assert load_spec_text(text).tools[0].params
    assert schema_errors(validator, text) == []


def test_the_schema_command_has_a_real_command_line(tmp_path):
    # Before: `--help` was taken for the output path (a file named "--help" was written),
    # and without a path the packaged schema was rewritten (inside site-packages on a
    # wheel install).
    import subprocess
    import sys

    from mcpgen.codegen.resources import spec_schema
    from mcpgen.codegen.spec.rules.schema import schema_text

    packaged = spec_schema().read_bytes()
    run = [sys.executable, "-m", "mcpgen.codegen.spec.rules.schema"]
    helped = subprocess.run([*run, "--help"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert helped.stdout.startswith("usage: python -m mcpgen.codegen.spec.rules.schema")
    assert list(tmp_path.iterdir()) == []
    printed = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert printed.stdout == schema_text() and list(tmp_path.iterdir()) == []
    written = subprocess.run([*run, "out.json"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == schema_text()
    assert "wrote out.json" in written.stderr
    assert spec_schema().read_bytes() == packaged
    wrong = subprocess.run([*run, "a", "b"], cwd=tmp_path, capture_output=True, text=True)
    assert wrong.returncode == 2 and "unrecognized arguments: b" in wrong.stderr
