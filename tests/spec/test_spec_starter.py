"""`codegen new NAME`: the starter spec is valid and names the device."""

from __future__ import annotations

import pytest

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.starter import starter_spec

NAMES = ["my-device", "Lamp 2", 'quote "q" : # x', "café", "x\\y", "null", "1.5", "7up"]


@pytest.mark.parametrize("name", NAMES)
def test_starter_spec_is_valid_and_names_the_device(tmp_path, name):
    path = tmp_path / "new.yaml"
    path.write_text(starter_spec(name), encoding="utf-8")
    spec = load_spec(path)
    assert spec.device.name == name
    assert len(spec.tools) >= 2
    # It shows the main features: params with a default, an object return.
    assert any(not p.required for t in spec.tools for p in t.params)
    assert any(t.returns.kind == "object" for t in spec.tools)


def test_starter_spec_is_commented_and_plain_for_simple_names():
    text = starter_spec("desk-lamp")
    assert "\n  name: desk-lamp " in text
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith("#")) >= 5
    assert "yaml-language-server" not in text


def test_starter_spec_schema_modeline():
    text = starter_spec("x", schema_ref="../toolspec/toolspec.schema.json")
    assert text.splitlines()[0] == "# yaml-language-server: $schema=../toolspec/toolspec.schema.json"


@pytest.mark.parametrize("name", ["", "---", "two\nlines", "none"])
def test_starter_spec_refuses_unusable_names(name):
    with pytest.raises(ValueError):
        starter_spec(name)
