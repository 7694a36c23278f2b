"""``codegen diff`` is linear in the tool count (issue 40: 100,000 tools ran past 60 s).

No timing: the work is counted at two sizes. Four times the tools must cost about four
times the work (a quadratic step would cost sixteen): the names compared for rename
guesses, and the YAML entries read to locate the changes.
"""

from __future__ import annotations

import pytest

from mcpgen.codegen.spec import evolution
from mcpgen.codegen.spec.loader import load_spec_text
from mcpgen.codegen.spec.locate import SpecLocator
from mcpgen.codegen.spec.spec_errors import SpecErrors


def spec_text(tools: int, renamed: bool) -> str:
    lines = ["device:", "  name: big", "  version: 1.0.0", "tools:"]
    for i in range(tools):
        name = f"self.group{i % 10}.tool_{i}" + ("_v2" if renamed and i % 2 else "")
        lines += [f"  - name: {name}", "    description: d", "    returns: boolean"]
    return "\n".join(lines) + "\n"


def diff_work(tools: int) -> tuple[int, int, int]:
    """(rename comparisons, YAML entries indexed, changes) of a diff where every other tool
    is renamed."""
    old = load_spec_text(spec_text(tools, False))
    new_text = spec_text(tools, True)
    new = load_spec_text(new_text)
    compared = 0
    guessers: list[evolution.RenameGuesser] = []
    real = evolution.RenameGuesser

    class Counting(real):
        def __init__(self, added: list[str]) -> None:
            super().__init__(added)
            guessers.append(self)

    evolution.RenameGuesser = Counting  # type: ignore[misc]
    try:
        changes = evolution.diff_specs(old, new)
    finally:
        evolution.RenameGuesser = real  # type: ignore[misc]
    compared = sum(g.compared for g in guessers)
    locator = SpecLocator("new.yaml", new_text)
    located = evolution.locate_changes(changes, locator)
    assert len(located) == len(changes)
    return compared, locator.entries_read, len(changes)


def test_diff_work_grows_linearly_with_the_tool_count() -> None:
    small = diff_work(400)
    large = diff_work(1600)
    assert large[2] == 4 * small[2], "four times the tools, four times the changes"
    for name, a, b in (("rename comparisons", small[0], large[0]), ("entries indexed", small[1], large[1])):
        assert b <= 4.5 * a, f"{name}: {a} at 400 tools, {b} at 1600 (quadratic would be 16x)"
    # the rename of a tool is still found (its group and its last part narrow the search)
    changes = evolution.diff_specs(
        load_spec_text(spec_text(400, False)), load_spec_text(spec_text(400, True))
    )
    removed = next(c for c in changes if c.what == "tool `self.group1.tool_1` removed")
    assert "renamed to `self.group1.tool_1_v2`?" in removed.hint


def test_a_small_spec_compares_every_added_name() -> None:
    """Below RENAME_CANDIDATES added names the guess sees all of them, as before."""
    guesser = evolution.RenameGuesser(["self.light.set_colour", "self.fan.on"])
    assert guesser.guess("self.lights.set_color") == "self.light.set_colour"
    assert guesser.compared == 2


def test_loading_a_valid_spec_makes_no_did_you_mean_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    # difflib's close-match search is for mistakes; a valid `returns: boolean` on each of
    # 100,000 tools once spent a third of `codegen diff` looking for a near `object`.
    from mcpgen.codegen.spec.rules import returns

    calls: list[str] = []
    real = returns.did_you_mean
    monkeypatch.setattr(returns, "did_you_mean", lambda word, cands: calls.append(word) or real(word, cands))
    load_spec_text(spec_text(50, False))
    assert calls == []
    # a near miss still gets its hint
    with pytest.raises(SpecErrors, match="did you mean an object"):
        load_spec_text(spec_text(1, False).replace("returns: boolean", "returns: objcet"))
    assert calls == ["objcet"]
