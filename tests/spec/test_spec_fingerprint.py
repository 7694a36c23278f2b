"""The fingerprint ignores formatting and changes with every change of meaning."""

from __future__ import annotations

import pytest

from mcpgen.codegen.spec.loader import load_spec_text

BASE = """\
device:
  name: lamp
  version: 1.2.0
  description: A lamp.
  page_size: 4000
  protocol_version: 2024-11-05
tools:
  - name: self.light.set
    description: Set the light.
    title: Set light
    idempotent: true
    params:
      level: {type: integer, min: 0, max: 100, default: 50, description: Percent.}
      ratio: {type: number, min: 0.5, max: 2.0}
      mode: {type: string, enum: [warm, cold], default: warm}
      name: {type: string, max_length: 16, pattern: "^[a-z]+$"}
      blink: {type: boolean, default: false}
      count: {type: integer}
    returns: boolean
  - name: self.light.get
    description: Get the light.
    read_only: true
    returns:
      type: object
      properties:
        level: {type: integer, description: Percent.}
        history: {type: array, items: {type: number}}
"""

# The same spec: comments, blank lines, key order, block vs flow style, quoting,
# `2.0` vs `2` for a number, indentation.
REFORMATTED = """\
# A lamp, written differently.
tools:

  -   description: "Set the light."   # same text, quoted
      name: 'self.light.set'
      idempotent: true
      title: Set light
      returns: boolean
      params:
        ratio:
          max: 2
          min: 0.5
          type: number
        blink: {default: false, type: boolean}
        count:
          type: integer
        name:
          pattern: ^[a-z]+$
          type: string
          max_length: 16
        mode:
          type: string
          default: warm
          enum:
            - warm
            - cold
        level: {description: Percent., max: 100, default: 50, min: 0, type: integer}
  - name: self.light.get
    read_only: true
    description: Get the light.
    returns:
      properties:
        history:
          items: {type: number}
          type: array
        level: {description: Percent., type: integer}
      type: object
device:
    protocol_version: "2024-11-05"
    page_size: 4000
    version: "1.2.0"
    description: A lamp.
    name: lamp
"""


def fp(text: str) -> str:
    return load_spec_text(text).fingerprint


def test_formatting_does_not_change_the_fingerprint():
    assert fp(REFORMATTED) == fp(BASE)
    assert load_spec_text(REFORMATTED) == load_spec_text(BASE)


def test_positions_and_source_do_not_change_the_fingerprint():
    shifted = "\n\n# moved down\n" + BASE
    a, b = load_spec_text(BASE, "a.yaml"), load_spec_text(shifted, "b.yaml")
    assert a.tools[0].pos != b.tools[0].pos
    assert a.fingerprint == b.fingerprint


def test_fingerprint_is_stable_across_loads():
    assert fp(BASE) == fp(BASE)
    assert len(fp(BASE)) == 16 and int(fp(BASE), 16) >= 0


CHANGES = [
    ("name: lamp", "name: lamp2", "device name"),
    ("version: 1.2.0", "version: 1.2.1", "device version"),
    ("description: A lamp.", "description: A lamp!", "device description"),
    ("page_size: 4000", "page_size: 4001", "page size"),
    ("protocol_version: 2024-11-05", "protocol_version: 2025-06-18", "protocol version"),
    ("name: self.light.set", "name: self.light.put", "tool name"),
    ("description: Set the light.", "description: Set the lamp.", "tool description"),
    ("title: Set light", "title: Set lamp", "title"),
    ("idempotent: true", "idempotent: false", "annotation"),
    ("    read_only: true\n", "    read_only: true\n    user_only: true\n", "user_only"),
    ("    read_only: true\n", "    read_only: true\n    progress: true\n", "progress"),
    ("    returns: boolean", "    returns: string", "return kind"),
    ("    returns: boolean", "    returns: none", "return kind none"),
    ("    returns: boolean", "    returns: boolean\n    handler: set_it", "handler"),
    ("level: {type: integer, min", "lvl: {type: integer, min", "param name"),
    ("min: 0, max: 100", "min: 1, max: 100", "param min"),
    ("min: 0, max: 100", "min: 0, max: 99", "param max"),
    ("default: 50", "default: 51", "param default"),
    ("default: 50, ", "", "param default removed"),
    ("description: Percent.}\n      ratio", "description: Per cent.}\n      ratio", "param description"),
    ("count: {type: integer}", "count: {type: number}", "param type"),
    ("count: {type: integer}", "count: {type: integer, default: 0}", "param made optional"),
    ("min: 0.5, max: 2.0", "min: 0.5, max: 2.5", "number range"),
    ("enum: [warm, cold]", "enum: [warm, cool]", "enum value"),
    ("enum: [warm, cold]", "enum: [cold, warm]", "enum order"),
    ("max_length: 16", "max_length: 17", "max_length"),
    ('pattern: "^[a-z]+$"', 'pattern: "^[a-z0-9]+$"', "pattern"),
    ("blink: {type: boolean, default: false}", "blink: {type: boolean, default: true}", "bool default"),
    (
        "level: {type: integer, description: Percent.}",
        "level: {type: number, description: Percent.}",
        "field type",
    ),
    ("history: {type: array", "past: {type: array", "field name"),
    ("items: {type: number}", "items: {type: string}", "array item type"),
    (
        "level: {type: integer, description: Percent.}",
        "level: {type: integer, description: Pct.}",
        "field description",
    ),
]


@pytest.mark.parametrize(("old", "new", "what"), CHANGES, ids=[c[2] for c in CHANGES])
def test_every_change_of_meaning_changes_the_fingerprint(old, new, what):
    assert BASE.count(old) == 1, f"ambiguous edit for {what}"
    changed = BASE.replace(old, new)
    assert fp(changed) != fp(BASE), what


def test_swapping_tool_order_changes_the_fingerprint():
    # tools/list order is part of the device's behaviour (and of paging).
    head, rest = BASE.split("  - name: self.light.set\n")
    first, second = rest.split("  - name: self.light.get\n")
    swapped = head + "  - name: self.light.get\n" + second + "  - name: self.light.set\n" + first
    assert fp(swapped) != fp(BASE)


def test_progress_false_is_the_default_and_keeps_the_fingerprint():
    """`progress` joined the format later: a spec that does not set it (or sets it false)
    keeps the fingerprint its devices report."""
    same = BASE.replace("    read_only: true\n", "    read_only: true\n    progress: false\n", 1)
    assert same != BASE
    assert fp(same) == fp(BASE)
