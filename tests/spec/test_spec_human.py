"""Values asked of the person: `from_human` on a tool parameter, `confirm` on a tool.

The model, the fingerprint rule (specs without them keep theirs), the `tools/list` entry
the device sends (`_meta` "io.mcpgen/human") and the located errors.
"""

from __future__ import annotations

import json

import pytest

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import list_entry, list_entry_json
from mcpgen.human import META_HUMAN, human_ask, model_schema, requested_schema

DOOR = """
device: {name: door, version: "1.0"}
tools:
  - name: self.door.unlock
    description: Unlock the door.
    confirm: "  Unlock the front door?  "
    params:
      pin: {type: string, max_length: 8, from_human: Enter the door PIN}
      seconds: {type: integer, min: 1, max: 60, default: 5}
      mode: {type: string, enum: [once, stay], default: once, from_human: true}
      level: {type: number, min: 0, max: 1, from_human: false}
"""


def test_model_and_tools_list_entry(write_spec):
    spec = load_spec(write_spec(DOOR))
    tool = spec.tool("self.door.unlock")
    assert tool.confirm == "Unlock the front door?"
    assert {p.name: p.human for p in tool.params} == {
        "level": None,
        "mode": "",
        "pin": "Enter the door PIN",
        "seconds": None,
    }
    entry = list_entry(tool)
    assert entry["_meta"] == {
        META_HUMAN: {"confirm": "Unlock the front door?", "params": {"mode": "", "pin": "Enter the door PIN"}}
    }
    # the device keeps every parameter in its inputSchema (it checks them all)
    assert set(entry["inputSchema"]["properties"]) == {"level", "mode", "pin", "seconds"}
    # what the runtime reads back from those bytes
    ask = human_ask(json.loads(list_entry_json(tool)))
    assert ask is not None and ask.confirm == "Unlock the front door?"
    assert ask.params == (("mode", ""), ("pin", "Enter the door PIN"))
    hidden = model_schema(entry["inputSchema"], ask)
    assert set(hidden["properties"]) == {"level", "seconds"} and hidden["required"] == ["level"]
    assert requested_schema(entry["inputSchema"], ask) == {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["once", "stay"], "default": "once", "title": "mode"},
            "pin": {"type": "string", "maxLength": 8, "title": "Enter the door PIN"},
        },
        "required": ["pin"],
    }


def test_fingerprint_of_a_spec_without_them_is_unchanged(write_spec):
    plain = load_spec(write_spec(DOOR, "a.yaml"))
    without = DOOR.replace('    confirm: "  Unlock the front door?  "\n', "")
    without = without.replace(", from_human: Enter the door PIN", "").replace(", from_human: true", "")
    bare = load_spec(write_spec(without, "b.yaml"))
    canonical = json.dumps(bare.canonical())
    assert "human" not in canonical and "confirm" not in canonical
    assert "_meta" not in list_entry(bare.tools[0])
    assert plain.fingerprint != bare.fingerprint


ERRORS = [
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              code: {type: string, pattern: "^[0-9]+$", from_human: true}
        """,
        6,
        61,
        "tools[0].params.code.from_human",
        "MCP elicitation cannot carry its `pattern`",
        "drop `pattern`",
        id="pattern-cannot-be-asked",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: integer, from_human: 3}
        """,
        6,
        38,
        "tools[0].params.n.from_human",
        "expected true or the question to ask",
        'from_human: "Which n?"',
        id="from-human-not-text",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
        events:
          rang:
            description: r
            params:
              who: {type: string, from_human: true}
        """,
        9,
        39,
        "events.rang.params.who.from_human",
        "applies to tool parameters only",
        "remove it",
        id="from-human-on-event",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            confirm: ""
        """,
        5,
        14,
        "tools[0].confirm",
        "expected a non-empty string",
        "",
        id="confirm-empty",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              x: {type: integer, human: true}
        """,
        6,
        26,
        "tools[0].params.x.human",
        "unknown key `human`",
        "did you mean `from_human`?",
        id="human-alias",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "path", "message", "hint"), ERRORS)
def test_located_error(one_error, text, line, column, path, message, hint):
    error = one_error(text)
    assert error.path == path
    assert message in error.message, error.format()
    assert hint in error.hint, error.format()
    assert (error.line, error.column) == (line, column), error.format()


def test_codegen_diff_classifies_them(write_spec):
    from mcpgen.codegen.spec.evolution import diff_specs

    old = load_spec(write_spec(DOOR, "old.yaml"))
    edited = DOOR.replace('    confirm: "  Unlock the front door?  "\n', "")
    edited = edited.replace("from_human: true", "from_human: Which mode?")
    edited = edited.replace("from_human: false", "from_human: true")
    new = load_spec(write_spec(edited, "new.yaml"))
    verdicts = {c.path: (c.verdict, c.what) for c in diff_specs(old, new)}
    assert verdicts == {
        "tools.self.door.unlock.confirm": ("compatible", "confirm removed"),
        "tools.self.door.unlock.params.level.from_human": ("breaking", "now asked of the person"),
        "tools.self.door.unlock.params.mode.from_human": ("compatible", "question changed"),
    }
