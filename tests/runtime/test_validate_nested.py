"""SchemaValidator on nested objects and $ref/$defs as devices may report them (issue 41
item 5): a spec's named types, and the shapes a foreign device might send (self-referring
types, refs to nothing, JSON Schema's open objects), bounded in the work of building."""

from __future__ import annotations

import pytest

from mcpgen.runtime.core.validate import MAX_SCHEMA_DEPTH, SchemaValidator
from mcpgen.runtime.errors import ValidationError

TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "required": ["root"],
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"value": {"type": "integer", "maximum": 9}, "next": {"$ref": "#/$defs/Node"}},
            "required": ["value"],
            "additionalProperties": False,
        }
    },
}


def _error(schema: dict, arguments: dict) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        SchemaValidator(schema).validate(arguments)
    return caught.value


def test_a_type_that_refers_to_itself_is_built_once_and_checked_to_any_depth() -> None:
    validator = SchemaValidator(TREE)
    chain = {"value": 1, "next": {"value": 2, "next": {"value": 3}}}
    assert validator.validate({"root": chain}) == {"root": chain}
    deep = {"value": 1, "next": {"value": 2, "next": {"value": 30}}}
    e = _error(TREE, {"root": deep})
    assert (e.argument, e.rule) == ("root.next.next.value", "maximum")
    e = _error(TREE, {"root": {"value": 1, "next": {"value": 2, "nxt": {}}}})
    assert (e.argument, e.rule) == ("root.next.nxt", "additionalProperties")


def test_open_objects_refs_to_nothing_and_draft7_definitions() -> None:
    open_object = {
        "type": "object",
        "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    assert SchemaValidator(open_object).validate({"o": {"a": "x", "extra": 1}}) == {
        "o": {"a": "x", "extra": 1}
    }
    assert _error(open_object, {"o": {"a": 1}}).argument == "o.a"
    nowhere = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}}
    assert SchemaValidator(nowhere).validate({"x": [1]}) == {"x": [1]}  # unknown: not checked
    draft7 = {
        "properties": {"c": {"$ref": "#/definitions/C"}},
        "definitions": {"C": {"type": "string", "maxLength": 2}},
    }
    assert _error(draft7, {"c": "abc"}).rule == "maxLength"


def test_a_chain_of_refs_longer_than_the_bound_builds() -> None:
    defs = {f"D{i}": {"$ref": f"#/$defs/D{i + 1}"} for i in range(MAX_SCHEMA_DEPTH * 3)}
    defs["D0"] = {"$ref": "#/$defs/D0"}  # and a ref to itself
    schema = {"properties": {"x": {"$ref": "#/$defs/D1"}, "y": {"$ref": "#/$defs/D0"}}, "$defs": defs}
    assert SchemaValidator(schema).validate({"x": 1, "y": 2}) == {"x": 1, "y": 2}
