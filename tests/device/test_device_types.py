"""Named object types (the spec's `types:`, issue 41 item 5) on the device and in the runtime:
the published inputSchema ($defs/$ref, additionalProperties: false at every level), what
the C++ core decodes into the generated structs, and the same accept/refuse decision from
the runtime's SchemaValidator, the generated bindings and JSON Schema 2020-12 itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import jsonschema
import pytest
from device_sim_driver import StdioSim
from device_testlib import bindings_module, host_simulator

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import list_entry
from mcpgen.runtime.core.validate import SchemaValidator
from mcpgen.runtime.errors import ValidationError

SPEC_PATH = Path(__file__).parent / "types_spec" / "scene_lamp.yaml"
SPEC = load_spec(SPEC_PATH)
TOOL = "self.light.set_scene"
GOOD = {"scene": {"name": "eve", "color": {"r": 1, "g": 2}}}

# (arguments, the device's text: its echo when accepted, else its error; the runtime's
# ValidationError argument path, or None when accepted)
CASES: list[tuple[dict[str, Any], str, Optional[str]]] = [
    (GOOD, "eve calm 1 2 0 1.0", None),
    (
        {"scene": {"name": "x", "mood": "party", "color": {"r": 255, "g": 0, "b": 9}}, "fade": 2.5},
        "x party 255 0 9 2.5",
        None,
    ),
    (
        {"scene": {"name": "eve", "color": {"r": 1, "g": 2, "x": 1}}},
        "invalid argument `scene`: invalid field `color`: unknown field `x`",
        "scene.color.x",
    ),
    (
        {"scene": {"name": "eve", "color": {"r": 1, "g": 2}, "zz": 1}},
        "invalid argument `scene`: unknown field `zz`",
        "scene.zz",
    ),
    (
        {"scene": {"name": "eve", "color": {"r": 1, "g": 300}}},
        "invalid argument `scene`: invalid field `color`: invalid field `g`: must be <= 255, got 300",
        "scene.color.g",
    ),
    (
        {"scene": {"name": "eve", "color": {"r": 1}}},
        "invalid argument `scene`: invalid field `color`: missing required field `g`",
        "scene.color.g",
    ),
    (
        {"scene": {"name": "eve", "color": 5}},
        "invalid argument `scene`: invalid field `color`: must be an object, got number",
        "scene.color",
    ),
    (
        {"scene": {"name": "eve", "mood": "sad", "color": {"r": 1, "g": 2}}},
        'invalid argument `scene`: invalid field `mood`: must be one of calm, party; got "sad"',
        "scene.mood",
    ),
    (
        {"scene": {"name": "a" * 17, "color": {"r": 1, "g": 2}}},
        "invalid argument `scene`: invalid field `name`: must be at most 16 characters, got 17",
        "scene.name",
    ),
    ({"scene": "x"}, "invalid argument `scene`: must be an object, got string", "scene"),
    ({}, "missing required argument `scene`", "scene"),
    ({**GOOD, "extra": 1}, "unknown argument `extra`", "extra"),
]


@pytest.fixture(scope="module")
def exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return host_simulator(SPEC_PATH, tmp_path_factory.mktemp("scene_lamp"))


@pytest.fixture
def sim(exe: Path, tmp_path: Path) -> Iterator[StdioSim]:
    s = StdioSim(exe, tmp_path)
    yield s
    s.close()


def _schema() -> dict[str, Any]:
    return list_entry(SPEC.tool(TOOL), SPEC.types)["inputSchema"]


def test_published_schema_has_defs_refs_and_no_extra_keys(sim: StdioSim) -> None:
    tools = sim.request("tools/list")["result"]["tools"]
    schema = next(t for t in tools if t["name"] == TOOL)["inputSchema"]
    assert schema == _schema()
    assert schema["properties"]["scene"] == {"$ref": "#/$defs/Scene"}
    assert schema["$defs"]["Scene"]["properties"]["color"] == {"$ref": "#/$defs/Color"}
    assert schema["additionalProperties"] is False
    assert all(d["additionalProperties"] is False for d in schema["$defs"].values())
    assert schema["$defs"]["Color"]["required"] == ["g", "r"]  # b has a default
    power = next(t for t in tools if t["name"] == "self.light.set_power")["inputSchema"]
    assert "$defs" not in power  # only the types a tool uses
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("arguments,device_text,path", CASES)
def test_device_runtime_and_json_schema_agree(
    sim: StdioSim, arguments: dict[str, Any], device_text: str, path: Optional[str]
) -> None:
    result = sim.call(TOOL, arguments)
    assert result["content"][0]["text"] == device_text
    assert result.get("isError", False) is (path is not None)

    validator = SchemaValidator(_schema())
    standard = jsonschema.Draft202012Validator(_schema())
    if path is None:
        validator.validate(arguments)
        assert standard.is_valid(arguments)
    else:
        with pytest.raises(ValidationError) as caught:
            validator.validate(arguments)
        assert caught.value.argument == path
        assert not standard.is_valid(arguments)


def test_runtime_fills_nested_defaults_as_the_device_does() -> None:
    sent = SchemaValidator(_schema()).validate(GOOD)
    assert sent == {"scene": {"name": "eve", "mood": "calm", "color": {"r": 1, "g": 2, "b": 0}}, "fade": 1.0}
    assert GOOD == {"scene": {"name": "eve", "color": {"r": 1, "g": 2}}}  # the caller's dict untouched


def test_duplicate_nested_key_is_a_jsonrpc_error(sim: StdioSim) -> None:
    sim.send_line(
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"self.light.set_scene",'
        '"arguments":{"scene":{"name":"a","name":"b","color":{"r":1,"g":2}}}}}'
    )
    reply = sim.read_json()
    assert reply["error"] == {"code": -32602, "message": "invalid argument `scene`: duplicate field `name`"}


@pytest.mark.parametrize("compiled", [False, True])
def test_bindings_check_named_types_like_the_device(tmp_path: Path, compiled: bool) -> None:
    module = bindings_module(SPEC_PATH, tmp_path / ("c" if compiled else "p"), compile=compiled)
    bindings = module._bindings
    make = bindings.args_light_set_scene
    assert make(scene=GOOD["scene"], fade=2.0) == {
        "scene": {"name": "eve", "mood": "calm", "color": {"r": 1, "g": 2, "b": 0}},
        "fade": 2.0,
    }
    for arguments, _text, path in CASES:
        if path is None or "scene" not in arguments or not path.startswith("scene"):
            continue
        with pytest.raises(ValidationError) as caught:
            make(scene=arguments["scene"], fade=1.0)
        assert caught.value.argument == path
