"""The `events:` section: one test per rule (message, path, position), the model, the
fingerprint, and the generated code of both ends for a spec with events."""

from __future__ import annotations

import pytest

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import python as emit_python

HEAD = """
device: {name: t, version: "1"}
tools:
  - name: self.a
    description: d
"""

CASES = [
    pytest.param(
        HEAD + "events:\n  pressed:\n    descripton: x\n",
        7,
        5,
        "events.pressed.descripton",
        "unknown key `descripton`",
        "did you mean `description`?",
        id="misspelt-key",
    ),
    pytest.param(
        HEAD + "events:\n  pressed:\n    params: {}\n",
        7,
        5,
        "events.pressed",
        "missing required key `description`",
        "say when the device sends it",
        id="missing-description",
    ),
    pytest.param(
        HEAD + "events:\n  ButtonPressed:\n    description: x\n",
        6,
        3,
        "events.ButtonPressed",
        "is not a lowercase identifier",
        "`button_pressed`",
        id="name-not-snake-case",
    ),
    pytest.param(
        HEAD + "events:\n  class:\n    description: x\n",
        6,
        3,
        "events.class",
        "reserved word",
        "`class_event`",
        id="name-reserved",
    ),
    pytest.param(
        HEAD + "events:\n  pressed:\n    description: x\n    params:\n      n: {type: integer, default: 1}\n",
        9,
        26,
        "events.pressed.params.n.default",
        "event parameters have no default",
        "remove `default`",
        id="param-default",
    ),
    pytest.param(
        HEAD + "events:\n  pressed:\n    description: x\n    params:\n      n: {type: intger}\n",
        9,
        17,
        "events.pressed.params.n.type",
        "expected a parameter type",
        "did you mean `integer`?",
        id="param-type-misspelt",
    ),
    pytest.param(
        HEAD
        + "events:\n  pressed:\n    description: x\n    params:\n      n: {type: integer, min: 5, max: 1}\n",
        9,
        39,
        "events.pressed.params.n.max",
        "expected max >= min (5), got 1",
        "swap min and max",
        id="param-range",
    ),
    pytest.param(
        HEAD + "events:\n  pressed:\n    description: x\n    returns: boolean\n",
        8,
        5,
        "events.pressed.returns",
        "unknown key `returns`",
        "events carry parameters only",
        id="returns",
    ),
    pytest.param(
        HEAD + "events: [pressed]\n",
        5,
        9,
        "events",
        "expected a mapping of event name to event",
        "",
        id="list-instead-of-mapping",
    ),
    pytest.param(
        """
device: {name: t, version: "1"}
tools:
  - name: self.on_pressed
    description: d
events:
  pressed:
    description: x
""",
        6,
        3,
        "events.pressed",
        "`device.on_pressed` of event `pressed` collides with tools[0]",
        "rename the event or the tool",
        id="callback-collides-with-tool",
    ),
    pytest.param(
        """
device: {name: t, version: "1"}
tools:
  - name: self.events.clear
    description: d
events:
  pressed:
    description: x
""",
        6,
        3,
        "events",
        "the Python bindings put events under `device.events`",
        "self.event_log.clear",
        id="events-namespace-taken",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "path", "message", "hint"), CASES)
def test_event_validation_error(one_error, text, line, column, path, message, hint):
    error = one_error(text)
    assert error.path == path, error.format()
    assert message in error.message, error.format()
    assert hint in error.hint, error.format()
    assert (error.line, error.column) == (line, column), error.format()


SPEC = (
    HEAD
    + """events:
  pressed:
    description: The button was pressed.
    params:
      count: {type: integer, min: 1, max: 9}
      mode: {type: string, enum: [short, long]}
      level: {type: number, min: 0, max: 1}
      label: {type: string, max_length: 8}
      held: {type: boolean}
"""
)


def test_events_in_the_model_and_the_fingerprint(write_spec):
    from mcpgen.codegen.spec.loader import load_spec

    spec = load_spec(write_spec(SPEC))
    [event] = spec.events
    assert event.method == "notifications/events/pressed"
    assert [p.name for p in event.params] == ["count", "held", "label", "level", "mode"]
    assert event.params[0].minimum == 1 and event.params[4].enum == ("short", "long")
    without = load_spec(write_spec(HEAD, name="plain.yaml"))
    assert "events" not in without.canonical()  # specs without events keep their fingerprint
    assert spec.fingerprint != without.fingerprint
    changed = load_spec(write_spec(SPEC.replace("max: 9", "max: 8"), name="changed.yaml"))
    assert changed.fingerprint != spec.fingerprint
    renamed = load_spec(write_spec(SPEC.replace("pressed:", "clicked:"), name="renamed.yaml"))
    assert renamed.fingerprint != spec.fingerprint


def test_generated_code_of_both_ends(write_spec):
    from mcpgen.codegen.spec.loader import load_spec

    spec = load_spec(write_spec(SPEC))
    cpp = emit_cpp.emit(spec)
    header = cpp[emit_cpp.HEADER_PATH]
    source = cpp[emit_cpp.SOURCE_PATH]
    assert '#include "mcpgen/events.h"' in header
    assert (
        "mcpgen::EventStatus emit_pressed(int64_t count, bool held, const char* label, double level, "
        "const char* mode);" in header
    )
    assert "if (count > 9LL) return mcpgen::EventStatus::kInvalidArgument;" in source
    assert "mcpgen::event_text_length(label) > 8u" in source
    assert 'strcmp(mode, "short") != 0 && strcmp(mode, "long") != 0' in source
    py = emit_python.emit(spec)
    bindings = py["python/t_tools/_bindings.py"]
    stubs = py["python/t_tools/_bindings.pyi"]
    assert "class PressedEvent(NamedTuple):" in bindings
    assert "def on_pressed(self, callback" in bindings
    assert 'mode: Literal["short", "long"]' in stubs
    assert "-> EventStream[PressedEvent]:" in stubs
    # A spec without events gets no emitters, only the count that lets ports skip the outlet.
    plain = load_spec(write_spec(HEAD, name="plain.yaml"))
    plain_header = emit_cpp.emit(plain)[emit_cpp.HEADER_PATH]
    assert "#define MCPGEN_SPEC_EVENT_COUNT 0\n" in plain_header
    assert "emit_" not in plain_header and "namespace events" not in plain_header
    assert "Event" not in emit_python.emit(plain)["python/t_tools/_bindings.py"]
