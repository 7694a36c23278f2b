"""The loader builds the normalized, immutable model from valid specs."""

from __future__ import annotations

import dataclasses

import pytest
from spec_testlib import EXAMPLE_SPECS, TOOLSPEC

from mcpgen.codegen.spec.loader import SpecErrors, check_spec, load_spec, load_spec_text
from mcpgen.codegen.spec.model import (
    DEFAULT_PAGE_SIZE,
    DEFAULT_PROTOCOL_VERSION,
    Field,
    Param,
    Returns,
    SourcePos,
    Spec,
)


def test_there_are_example_specs():
    names = {p.name for p in EXAMPLE_SPECS}
    assert {"default_device.yaml", "desk_lamp.yaml"} <= names


@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_example_specs_load_cleanly(path):
    assert check_spec(path) == []
    spec = load_spec(path)
    assert isinstance(spec, Spec)
    assert spec.tools
    assert len(spec.fingerprint) == 16


def test_default_device_model():
    spec = load_spec(TOOLSPEC / "default_device.yaml")
    assert spec.device.name == "xiaozhi-sim"
    assert spec.device.version == "1.0.0"
    assert spec.device.protocol_version == "2024-11-05"
    assert [t.name for t in spec.tools][:2] == ["self.get_device_status", "self.audio_speaker.set_volume"]

    vol = spec.tool("self.audio_speaker.set_volume")
    assert vol.handler == "audio_speaker_set_volume"
    assert vol.idempotent is True and vol.read_only is None
    assert vol.returns == Returns(kind="boolean")
    assert vol.params == (
        Param(name="volume", type="integer", description="Volume in percent.", minimum=0, maximum=100),
    )
    assert vol.params[0].required

    show = spec.tool("self.display.show_text")
    assert [p.name for p in show.params] == ["scroll", "seconds", "text"]  # sorted by name
    seconds = show.params[1]
    assert (seconds.minimum, seconds.maximum, seconds.default) == (0.5, 30.0, 3.0)
    assert not seconds.required
    assert show.params[0].default is False and not show.params[0].required
    assert show.title == "Show text"

    reboot = spec.tool("self.reboot")
    assert reboot.user_only and reboot.destructive and reboot.returns.kind == "none"

    status = spec.tool("self.get_device_status")
    assert status.returns.kind == "object"
    assert [f.name for f in status.returns.properties] == ["audio_speaker", "battery", "screen"]
    battery = status.returns.properties[1]
    assert battery.properties == (Field("charging", "boolean"), Field("level", "integer"))


def test_defaults_are_filled_in(write_spec):
    spec = load_spec(
        write_spec(
            """
            device: {name: t, version: "2"}
            tools:
              - name: self.go
                description: Go.
            """
        )
    )
    assert spec.device.page_size == DEFAULT_PAGE_SIZE
    assert spec.device.protocol_version == DEFAULT_PROTOCOL_VERSION
    assert spec.device.description == ""
    tool = spec.tools[0]
    assert tool.params == ()
    assert tool.returns == Returns(kind="none")
    assert tool.handler == "go"
    assert (tool.user_only, tool.read_only, tool.destructive, tool.idempotent, tool.title) == (
        False,
        None,
        None,
        None,
        None,
    )


def test_explicit_handler_is_used(write_spec):
    spec = load_spec(
        write_spec(
            """
            device: {name: t, version: "2"}
            tools:
              - name: self.delete
                description: Delete.
                handler: delete_all
            """
        )
    )
    assert spec.tools[0].handler == "delete_all"


def test_yaml_1_2_booleans_and_strings(write_spec):
    spec = load_spec(
        write_spec(
            """
            device:
              name: t
              version: 1.10
              protocol_version: 2025-06-18
            tools:
              - name: self.toggle
                description: Toggle.
                params:
                  on: {type: boolean, default: true}
                  mode: {type: string, enum: [yes, no, off], default: off}
                  count: {type: integer, default: 0x10, max: 0o777}
            """
        )
    )
    assert spec.device.version == "1.10"  # as written, not the float 1.1
    assert spec.device.protocol_version == "2025-06-18"  # a string, not a date
    params = {p.name: p for p in spec.tools[0].params}
    assert set(params) == {"count", "mode", "on"}
    assert params["on"].default is True
    assert params["mode"].enum == ("yes", "no", "off")
    assert params["mode"].default == "off"
    assert (params["count"].default, params["count"].maximum) == (16, 511)


def test_number_bounds_are_floats_and_integer_bounds_ints(write_spec):
    spec = load_spec(
        write_spec(
            """
            device: {name: t, version: "1"}
            tools:
              - name: self.set
                description: Set.
                params:
                  ratio: {type: number, min: 0, max: 2, default: 1}
                  level: {type: integer, min: -3, max: 3, default: 0}
            """
        )
    )
    level, ratio = spec.tools[0].params
    assert [type(v) for v in (ratio.minimum, ratio.maximum, ratio.default)] == [float, float, float]
    assert [type(v) for v in (level.minimum, level.maximum, level.default)] == [int, int, int]
    assert level.default == 0 and not level.required  # a falsy default still makes it optional


def test_source_positions(write_spec, tmp_path, monkeypatch):
    write_spec(
        """
        # comment
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: A.
          - name: self.b
            description: B.
            params:
              x: {type: string}
              a: {type: string}
        """,
        name="pos.yaml",
    )
    monkeypatch.chdir(tmp_path)
    spec = load_spec("pos.yaml")
    assert spec.source == "pos.yaml"  # the path as given, not resolved
    assert spec.tools[0].pos == SourcePos("pos.yaml", 4, 5)
    assert spec.tools[1].pos == SourcePos("pos.yaml", 6, 5)
    a, x = spec.tools[1].params
    assert (a.name, a.pos.line, a.pos.column) == ("a", 10, 7)
    assert (x.name, x.pos.line) == ("x", 9)
    assert str(a.pos) == "pos.yaml:10:7"


def test_model_is_immutable():
    spec = load_spec(EXAMPLE_SPECS[0])
    tool = spec.tools[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.device.page_size = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.tools = ()  # type: ignore[misc]
    with_params = next(t for t in spec.tools if t.params)
    with pytest.raises(dataclasses.FrozenInstanceError):
        with_params.params[0].default = 5  # type: ignore[misc]
    assert isinstance(spec.tools, tuple) and isinstance(with_params.params, tuple)
    assert all(isinstance(p.enum, tuple) for t in spec.tools for p in t.params)
    hash(spec)  # frozen all the way down: hashable


def test_load_spec_raises_every_error(write_spec):
    path = write_spec(
        """
        device: {name: t, version: "1", page_size: -1}
        tools:
          - name: self.a
        """
    )
    with pytest.raises(SpecErrors) as info:
        load_spec(path)
    assert info.value.errors == check_spec(path)
    assert [(e.line, e.path) for e in info.value.errors] == [(1, "device.page_size"), (3, "tools[0]")]
    text = str(info.value)
    assert text.splitlines()[0] == "2 errors in spec"
    assert f"{path}:1:" in text and "missing required key `description`" in text


def test_load_spec_text_names_the_source():
    with pytest.raises(SpecErrors) as info:
        load_spec_text("device: {name: t}\ntools: []\n", "inline.yaml")
    assert {e.file for e in info.value.errors} == {"inline.yaml"}
    spec = load_spec_text('device: {name: t, version: "1"}\ntools: [{name: a, description: b}]\n', "x.yaml")
    assert spec.source == "x.yaml"


def test_nan_and_inf_are_rejected_as_bounds(errors_of):
    errors = errors_of(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              x: {type: number, min: -.inf, max: .nan}
        """
    )
    assert [e.path for e in errors] == ["tools[0].params.x.min", "tools[0].params.x.max"]
    assert all("finite" in e.message for e in errors)
