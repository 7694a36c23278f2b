"""A parameter's constraints read the same in every generated file: the C++ field comment,
the bindings' docstring, TOOLS.md and the stock xiaozhi description all take their words
from ``codegen.emit.param_text``."""

from __future__ import annotations

from mcpgen.codegen.emit import cpp, docs, python, xiaozhi
from mcpgen.codegen.emit.param_text import constraint_phrases, number_text
from mcpgen.codegen.spec.loader import load_spec_text

SPEC = """
device: {name: words, version: "1"}
tools:
  - name: self.thing.set
    description: Set the thing.
    handler: thing_set
    params:
      level: {type: number, min: 0.5, max: 30.0}
      floor: {type: integer, min: -3}
      mode: {type: string, enum: [eco, turbo]}
      label: {type: string, max_length: 12, pattern: "^[a-z]+$"}
"""


def test_phrases() -> None:
    params = {p.name: p for p in load_spec_text(SPEC).tools[0].params}
    assert constraint_phrases(params["level"]) == ["0.5 to 30"]
    assert constraint_phrases(params["floor"]) == [">= -3"]
    assert constraint_phrases(params["mode"]) == ["one of eco, turbo"]
    assert constraint_phrases(params["label"]) == ["at most 12 characters", "matching ^[a-z]+$"]
    assert constraint_phrases(params["level"], with_range=False) == []
    assert (number_text(5.0), number_text(-2), number_text(0.25)) == ("5", "-2", "0.25")


def test_every_emitter_says_the_same_words() -> None:
    spec = load_spec_text(SPEC)
    texts = {
        "C++ header": cpp.emit(spec)["firmware/generated/mcp_tools.h"],
        "bindings": "\n".join(v for k, v in python.emit(spec).items() if k.endswith(".py")),
        "TOOLS.md": docs.emit(spec)["TOOLS.md"],
        "xiaozhi": xiaozhi.stock_description(spec.tools[0]),
    }
    for p in spec.tools[0].params:
        # The stock Property carries an integer range itself: only the others are in words.
        for phrase in constraint_phrases(p):
            for where, text in texts.items():
                if where == "xiaozhi" and p.name == "floor":
                    continue
                assert phrase in text, f"{where} does not say {phrase!r} for {p.name}"
