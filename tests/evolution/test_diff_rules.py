"""`codegen diff`: one case per row of the rule table ("Evolving a spec" in toolspec/README.md),
each with its verdict, field path and the line of NEW it names; exit codes and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpgen.codegen.cli import main

BASE = """\
device:
  name: rule-dev
  version: 1.0.0
events:
  moved:
    description: It moved.
    params:
      steps: {type: integer, min: 0, max: 10}
      dir: {type: string, enum: [left, right]}
tools:
  - name: self.motor.run
    description: Run the motor.
    params:
      speed: {type: integer, min: 0, max: 100}
      mode: {type: string, enum: [slow, fast]}
      label: {type: string, max_length: 8}
      note: {type: string, default: x}
    returns: boolean
  - name: self.motor.state
    description: The state.
    returns:
      type: object
      properties:
        speed: {type: integer}
        on: {type: boolean}
  - name: self.motor.stop
    description: Stop.
    returns: boolean
resources:
  status:
    description: The state.
    mime_type: application/json
    uri: dev://status
    content: text
  log:
    description: One day of the log.
    mime_type: text/plain
    uri_template: dev://log/{day}
    params:
      day: {type: integer, min: 0, max: 6}
    content: text
"""

# (case, old text -> new text replacements, verdict, path, text on NEW's reported line)
CASES = [
    (
        "new tool",
        [
            (
                "  - name: self.motor.stop\n",
                "  - name: self.motor.spin\n    description: Spin.\n"
                "    returns: boolean\n  - name: self.motor.stop\n",
            )
        ],
        "compatible",
        "tools.self.motor.spin",
        "- name: self.motor.spin",
    ),
    (
        "new optional parameter",
        [
            (
                "      note: {type: string, default: x}\n",
                "      note: {type: string, default: x}\n      ramp: {type: integer, default: 0}\n",
            )
        ],  # noqa: E501
        "compatible",
        "tools.self.motor.run.params.ramp",
        "ramp:",
    ),
    (
        "widened range",
        [("min: 0, max: 100}", "min: 0, max: 200}")],
        "compatible",
        "tools.self.motor.run.params.speed.max",
        "speed:",
    ),
    (
        "widened length",
        [("max_length: 8}", "max_length: 16}")],
        "compatible",
        "tools.self.motor.run.params.label.max_length",
        "label:",
    ),
    (
        "new enum value",
        [("enum: [slow, fast]", "enum: [slow, fast, turbo]")],
        "compatible",
        "tools.self.motor.run.params.mode.enum",
        "mode:",
    ),
    (
        "new result property",
        [("        on: {type: boolean}\n", "        on: {type: boolean}\n        temp: {type: number}\n")],
        "compatible",
        "tools.self.motor.state.returns.properties.temp",
        "temp:",
    ),
    (
        "new event",
        [("tools:\n", "  stalled:\n    description: Stalled.\ntools:\n")],
        "compatible",
        "events.stalled",
        "stalled:",
    ),
    (
        "new event parameter",
        [
            (
                "      dir: {type: string, enum: [left, right]}\n",
                "      dir: {type: string, enum: [left, right]}\n      at: {type: integer}\n",
            )
        ],
        "compatible",
        "events.moved.params.at",
        "at:",
    ),
    (
        "description change",
        [("description: Stop.", "description: Stop the motor.")],
        "compatible",
        "tools.self.motor.stop.description",
        "description: Stop the motor.",
    ),
    (
        "annotation change",
        [("    description: Stop.\n", "    description: Stop.\n    idempotent: true\n")],
        "compatible",
        "tools.self.motor.stop.idempotent",
        "idempotent: true",
    ),
    (
        "parameter becomes optional",
        [
            (
                "      speed: {type: integer, min: 0, max: 100}",
                "      speed: {type: integer, min: 0, max: 100, default: 5}",
            )
        ],
        "compatible",
        "tools.self.motor.run.params.speed.default",
        "speed:",
    ),
    (
        "default changed",
        [("note: {type: string, default: x}", "note: {type: string, default: y}")],
        "compatible",
        "tools.self.motor.run.params.note.default",
        "note:",
    ),
    (
        "narrowed event range",
        [("min: 0, max: 10}", "min: 0, max: 5}")],
        "compatible",
        "events.moved.params.steps.max",
        "steps:",
    ),
    (
        "tool no longer user-only",
        [],
        "compatible",
        "tools.self.motor.stop.user_only",
        "- name: self.motor.stop",
    ),
    (
        "tool reports progress",
        [("    description: Stop.\n", "    description: Stop.\n    progress: true\n")],
        "compatible",
        "tools.self.motor.stop.progress",
        "progress: true",
    ),
    (
        "removed tool",
        [("  - name: self.motor.stop\n    description: Stop.\n    returns: boolean\n", "")],
        "breaking",
        "tools.self.motor.stop",
        "tools:",
    ),
    ("renamed tool", [("self.motor.stop", "self.motor.halt")], "breaking", "tools.self.motor.stop", "tools:"),
    (
        "removed parameter",
        [("      label: {type: string, max_length: 8}\n", "")],
        "breaking",
        "tools.self.motor.run.params.label",
        "params:",
    ),
    (
        "renamed parameter",
        [("      speed: {type: integer, min: 0, max: 100}", "      rpm: {type: integer, min: 0, max: 100}")],  # noqa: E501
        "breaking",
        "tools.self.motor.run.params.speed",
        "params:",
    ),
    (
        "new required parameter",
        [
            (
                "      note: {type: string, default: x}\n",
                "      note: {type: string, default: x}\n      force: {type: boolean}\n",
            )
        ],
        "breaking",
        "tools.self.motor.run.params.force",
        "force:",
    ),
    (
        "narrowed range",
        [("min: 0, max: 100}", "min: 10, max: 100}")],
        "breaking",
        "tools.self.motor.run.params.speed.min",
        "speed:",
    ),
    (
        "narrowed length",
        [("max_length: 8}", "max_length: 4}")],
        "breaking",
        "tools.self.motor.run.params.label.max_length",
        "label:",
    ),
    (
        "removed enum value",
        [("enum: [slow, fast]", "enum: [slow]")],
        "breaking",
        "tools.self.motor.run.params.mode.enum",
        "mode:",
    ),
    (
        "changed parameter type",
        [("speed: {type: integer, min: 0, max: 100}", "speed: {type: number, min: 0, max: 100}")],  # noqa: E501
        "breaking",
        "tools.self.motor.run.params.speed.type",
        "speed:",
    ),
    (
        "changed return kind",
        [("    description: Stop.\n    returns: boolean", "    description: Stop.\n    returns: string")],  # noqa: E501
        "breaking",
        "tools.self.motor.stop.returns",
        "returns: string",
    ),
    (
        "removed result property",
        [("        on: {type: boolean}\n", "")],
        "breaking",
        "tools.self.motor.state.returns.properties.on",
        "properties:",
    ),
    (
        "removed event",
        [
            (
                "  moved:\n    description: It moved.\n    params:\n      steps: {type: integer, min: 0, max: 10}\n"  # noqa: E501
                "      dir: {type: string, enum: [left, right]}\n",
                "  {}\n",
            )
        ],
        "breaking",
        "events.moved",
        "events:",
    ),
    (
        "removed event parameter",
        [("      steps: {type: integer, min: 0, max: 10}\n", "")],
        "breaking",
        "events.moved.params.steps",
        "params:",
    ),
    (
        "widened event range",
        [("min: 0, max: 10}", "min: 0, max: 99}")],
        "breaking",
        "events.moved.params.steps.max",
        "steps:",
    ),
    (
        "default removed",
        [("note: {type: string, default: x}", "note: {type: string}")],
        "breaking",
        "tools.self.motor.run.params.note.default",
        "note:",
    ),
    (
        "pattern added",
        [("label: {type: string, max_length: 8}", "label: {type: string, max_length: 8, pattern: '^a'}")],  # noqa: E501
        "breaking",
        "tools.self.motor.run.params.label.pattern",
        "label:",
    ),
    (
        "changed result property type",
        [("        speed: {type: integer}\n", "        speed: {type: string}\n")],  # noqa: E501
        "breaking",
        "tools.self.motor.state.returns.properties.speed.type",
        "speed: {type: string}",
    ),
    (
        "device renamed",
        [("name: rule-dev", "name: rule-device")],
        "breaking",
        "device.name",
        "name: rule-device",
    ),
    (
        "tool becomes user-only",
        [("    description: Stop.\n", "    description: Stop.\n    user_only: true\n")],  # noqa: E501
        "breaking",
        "tools.self.motor.stop.user_only",
        "user_only: true",
    ),
    # the bindings' method loses on_progress: a backend passing it no longer runs
    (
        "tool no longer reports progress",
        [],
        "breaking",
        "tools.self.motor.stop.progress",
        "- name: self.motor.stop",
    ),
    (
        "new resource",
        [
            (
                "resources:\n",
                "resources:\n  pic:\n    description: A picture.\n"
                "    mime_type: image/png\n    uri: dev://pic\n    content: binary\n",
            )
        ],
        "compatible",
        "resources.pic",
        "pic:",
    ),
    (
        "removed resource",
        [
            (
                "  status:\n    description: The state.\n    mime_type: application/json\n"
                "    uri: dev://status\n    content: text\n",
                "",
            )
        ],
        "breaking",
        "resources.status",
        "resources:",
    ),
    (
        "changed resource uri",
        [("uri: dev://status", "uri: dev://state")],
        "breaking",
        "resources.status.uri",
        "uri: dev://state",
    ),
    (
        "changed resource uri template",
        [("uri_template: dev://log/{day}", "uri_template: dev://logs/{day}")],
        "breaking",
        "resources.log.uri_template",
        "uri_template: dev://logs/{day}",
    ),
    (
        "changed resource content",
        [("max: 6}\n    content: text", "max: 6}\n    content: binary")],
        "breaking",
        "resources.log.content",
        "content: binary",
    ),
    (
        "narrowed template variable",
        [("min: 0, max: 6}", "min: 0, max: 5}")],
        "breaking",
        "resources.log.params.day.max",
        "day:",
    ),
]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _edit(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize(("case", "edits", "verdict", "path", "line_text"), CASES, ids=[c[0] for c in CASES])
def test_rule(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    edits: list[tuple[str, str]],
    verdict: str,
    path: str,
    line_text: str,
) -> None:
    old_text = BASE
    if case == "removed event":  # an empty events mapping is written `events: {}`
        new_text = BASE.replace(BASE[BASE.index("events:") : BASE.index("tools:")], "events: {}\n")
    elif case == "tool no longer user-only":
        old_text = BASE.replace("    description: Stop.\n", "    description: Stop.\n    user_only: true\n")
        new_text = BASE
    elif case == "tool no longer reports progress":
        old_text = BASE.replace("    description: Stop.\n", "    description: Stop.\n    progress: true\n")
        new_text = BASE
    else:
        new_text = _edit(BASE, edits)
    old = _write(tmp_path, "old.yaml", old_text)
    new = _write(tmp_path, "new.yaml", new_text)
    code = main(["diff", str(old), str(new), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    mine = [c for c in report["changes"] if c["path"] == path]
    assert mine, report["changes"]
    change = mine[0]
    assert change["verdict"] == verdict
    assert change["file"] == str(new)
    lines = new_text.splitlines()
    assert line_text in lines[change["line"] - 1], (change, lines[change["line"] - 1])
    assert code == (1 if any(c["verdict"] == "breaking" for c in report["changes"]) else 0)
    assert code == (1 if verdict == "breaking" else 0)


def test_identical_specs_have_no_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.yaml", BASE)
    new = _write(
        tmp_path, "new.yaml", "# reformatted\n" + BASE.replace("{type: boolean}", "{type: boolean }")
    )  # noqa: E501
    assert main(["diff", str(old), str(new)]) == 0
    assert "0 changes, 0 breaking" in capsys.readouterr().out


def test_text_output_names_file_line_and_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.yaml", BASE)
    new = _write(tmp_path, "new.yaml", BASE.replace("enum: [slow, fast]", "enum: [slow]"))
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert f"{new}:15:28: breaking: tools.self.motor.run.params.mode.enum: enum value removed: fast" in out


def test_an_old_spec_that_does_not_parse_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # noqa: E501
    old = _write(tmp_path, "old.yaml", BASE.replace("  version: 1.0.0\n", "  version: 1.0.0\n bad: [\n"))
    new = _write(tmp_path, "new.yaml", BASE)
    assert main(["diff", str(old), str(new)]) == 2
    err = capsys.readouterr().err
    assert f"{old}:4:" in err and "YAML syntax error" in err
    assert main(["diff", str(old), str(new), "--format", "json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert (
        report["ok"] is False and report["errors"][0]["file"] == str(old) and report["errors"][0]["line"] == 4
    )  # noqa: E501


def test_an_invalid_new_spec_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.yaml", BASE)
    new = _write(tmp_path, "new.yaml", BASE.replace("max: 100}", "max: -5}"))
    assert main(["diff", str(old), str(new)]) == 2
    assert f"{new}:14:" in capsys.readouterr().err
    assert main(["diff", str(old), str(tmp_path / "missing.yaml")]) == 2
