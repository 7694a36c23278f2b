"""Validation primitives (used by generated bindings) and the schema-driven validator."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from mcpgen.runtime.core import validate as v
from mcpgen.runtime.errors import ValidationError


def rule_of(fn: Any, *args: Any) -> tuple[str, str]:
    with pytest.raises(ValidationError) as err:
        fn(*args)
    return err.value.argument, err.value.rule


# -- primitives --------------------------------------------------------------------------------


def test_check_int() -> None:
    assert v.check_int("n", 5, 0, 10) == 5
    assert v.check_int("n", 0, 0, 10) == 0 and v.check_int("n", 10, 0, 10) == 10
    assert v.check_int("n", -(2**40)) == -(2**40)
    assert rule_of(v.check_int, "n", -1, 0, 10) == ("n", "minimum")
    assert rule_of(v.check_int, "n", 11, 0, 10) == ("n", "maximum")
    assert rule_of(v.check_int, "n", 5.0, 0, 10) == ("n", "type")
    assert rule_of(v.check_int, "n", "5", 0, 10) == ("n", "type")


def test_bool_is_not_an_integer_or_number() -> None:
    assert rule_of(v.check_int, "n", True, 0, 10) == ("n", "type")
    assert rule_of(v.check_number, "x", False) == ("x", "type")


def test_int_subclasses_are_normalized() -> None:
    class Level(int):
        pass

    out = v.check_int("n", Level(3), 0, 5)
    assert out == 3 and type(out) is int


def test_check_number() -> None:
    assert v.check_number("x", 0.5, 0.5, 30) == 0.5
    assert v.check_number("x", 3, 0.5, 30) == 3
    assert rule_of(v.check_number, "x", 0.49, 0.5, 30) == ("x", "minimum")
    assert rule_of(v.check_number, "x", 30.01, 0.5, 30) == ("x", "maximum")
    assert rule_of(v.check_number, "x", math.nan) == ("x", "type")
    assert rule_of(v.check_number, "x", math.inf) == ("x", "type")
    assert rule_of(v.check_number, "x", "1.5") == ("x", "type")


def test_check_bool() -> None:
    assert v.check_bool("b", True) is True and v.check_bool("b", False) is False
    for bad in (1, 0, "true", None):
        assert rule_of(v.check_bool, "b", bad) == ("b", "type")


def test_check_str() -> None:
    assert v.check_str("s", "abc", 3) == "abc"
    assert rule_of(v.check_str, "s", "abcd", 3) == ("s", "maxLength")
    # max_length counts code points, like the device
    assert v.check_str("s", "ééé", 3) == "ééé"
    assert v.check_str("t", "dark", None, ("light", "dark")) == "dark"
    assert rule_of(v.check_str, "t", "blue", None, ("light", "dark")) == ("t", "enum")
    assert v.check_str("h", "lamp-1", 32, None, "^[a-z0-9-]+$") == "lamp-1"
    assert rule_of(v.check_str, "h", "Lamp_1", 32, None, "^[a-z0-9-]+$") == ("h", "pattern")
    assert v.check_str("h", "xx1yy", None, None, re.compile("[0-9]")) == "xx1yy"  # search, not match
    assert rule_of(v.check_str, "s", 5) == ("s", "type")


def test_error_message_is_readable() -> None:
    with pytest.raises(ValidationError) as err:
        v.check_str("theme", "blue", None, ("light", "dark"))
    assert str(err.value) == "theme: must be one of 'light', 'dark', got 'blue'"
    assert isinstance(err.value, ValueError)


# -- schema validator --------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "volume": {"type": "integer", "minimum": 0, "maximum": 100},
        "seconds": {"type": "number", "minimum": 0.5, "maximum": 30, "default": 3.0},
        "text": {"type": "string", "maxLength": 8},
        "theme": {"type": "string", "enum": ["light", "dark"], "default": "light"},
        "host": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "scroll": {"type": "boolean"},
    },
    "required": ["volume"],
}


@pytest.fixture
def sv() -> v.SchemaValidator:
    return v.SchemaValidator(SCHEMA)


def test_schema_fills_defaults_without_touching_the_input(sv: v.SchemaValidator) -> None:
    args = {"volume": 5}
    out = sv.validate(args)
    assert out == {"volume": 5, "seconds": 3.0, "theme": "light"}
    assert args == {"volume": 5}
    full = {"volume": 5, "seconds": 1, "theme": "dark"}
    assert sv.validate(full) is full


@pytest.mark.parametrize(
    "args, argument, rule",
    [
        ({}, "volume", "required"),
        ({"volume": 101}, "volume", "maximum"),
        ({"volume": -1}, "volume", "minimum"),
        ({"volume": True}, "volume", "type"),
        ({"volume": "5"}, "volume", "type"),
        ({"volume": 5.5}, "volume", "type"),
        ({"volume": 1, "seconds": 0.1}, "seconds", "minimum"),
        ({"volume": 1, "seconds": float("nan")}, "seconds", "type"),
        ({"volume": 1, "text": "123456789"}, "text", "maxLength"),
        ({"volume": 1, "theme": "blue"}, "theme", "enum"),
        ({"volume": 1, "host": "Bad Host"}, "host", "pattern"),
        ({"volume": 1, "scroll": 1}, "scroll", "type"),
        ({"volume": 1, "colour": "red"}, "colour", "additionalProperties"),
    ],
)
def test_schema_rules(sv: v.SchemaValidator, args: dict, argument: str, rule: str) -> None:
    with pytest.raises(ValidationError) as err:
        sv.validate(args)
    assert (err.value.argument, err.value.rule) == (argument, rule)


def test_schema_accepts_integral_floats_for_integers(sv: v.SchemaValidator) -> None:
    out = sv.validate({"volume": 7.0})
    assert out["volume"] == 7 and type(out["volume"]) is int


def test_schema_arguments_must_be_an_object(sv: v.SchemaValidator) -> None:
    with pytest.raises(ValidationError) as err:
        sv.validate([1, 2])
    assert (err.value.argument, err.value.rule) == ("", "type")
    assert v.SchemaValidator({"type": "object", "properties": {}}).validate(None) == {}


def test_schema_extras_and_exclusive_bounds() -> None:
    s = v.SchemaValidator(
        {
            "type": "object",
            "properties": {
                "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "tags": {"type": "array"},
                "opt": {"type": ["string", "null"]},
                "any": {},
            },
            "additionalProperties": True,
        }
    )
    assert s.validate({"x": 0.5, "tags": [1], "opt": None, "any": {"k": 1}, "extra": 1})["extra"] == 1
    for bad, rule in (
        ({"x": 0}, "minimum"),
        ({"x": 1}, "maximum"),
        ({"tags": "a"}, "type"),
        ({"opt": 3}, "type"),
    ):
        with pytest.raises(ValidationError) as err:
            s.validate(bad)
        assert err.value.rule == rule


def test_schema_without_properties_refuses_unknown_arguments() -> None:
    s = v.SchemaValidator({"type": "object", "properties": {}})
    assert s.validate({}) == {}
    with pytest.raises(ValidationError):
        s.validate({"x": 1})
