"""Tool names are checked against the name every consumer shows the model.

The consumer mappings in ``codegen.spec.consumer_names`` are compared with the runtime's own
functions (mcpgen's) and with the stock xiaozhi-esp32-server's documented rule (every
character outside ``A-Za-z0-9_-`` and CJK becomes ``_``), then ``check_spec`` is run on
every colliding pair of a small exhaustive set of names.
"""

from __future__ import annotations

import itertools
import re

import pytest
from spec_testlib import EXAMPLE_SPECS

from mcpgen import llm_names
from mcpgen.codegen.spec.consumer_names import llm_function_name, suggest_rename, xiaozhi_server_name
from mcpgen.codegen.spec.loader import check_spec, load_spec
from mcpgen.runtime.bridge.names import safe_tool_name
from mcpgen.runtime.session.llm import NameMap
from mcpgen.runtime.session.llm import llm_function_name as runtime_llm_function_name


def stock_server_name(name: str) -> str:
    """The stock server's rule, restated independently of the code under test."""
    return re.sub(r"[^a-zA-Z0-9_\-\u4e00-\u9fff]", "_", name)


def short_names() -> list[str]:
    """``self.`` + every string of up to 4 characters from a, b, `_`, `-`, `.`."""
    out = []
    for n in range(1, 5):
        out += ["self." + "".join(chars) for chars in itertools.product("ab_-.", repeat=n)]
    return out


def spec_text(*names: str) -> str:
    tools = "".join(
        f"  - name: '{name}'\n    description: d\n    handler: h{i}\n" for i, name in enumerate(names)
    )
    return 'device: {name: t, version: "1"}\ntools:\n' + tools


def errors(tmp_path, *names: str) -> list:
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(*names), encoding="utf-8")
    return check_spec(path)


@pytest.fixture(scope="module")
def valid_names(tmp_path_factory) -> list[str]:
    """The short names that are valid on their own."""
    tmp = tmp_path_factory.mktemp("names")
    return [n for n in short_names() if not errors(tmp, n)]


def test_the_mcpgen_mapping_is_the_runtime_and_bridge_mapping(valid_names):
    # One home for the rule: the checker and the runtime use the same function.
    assert llm_function_name is runtime_llm_function_name is llm_names.llm_function_name
    # The bridge and NameMap export a name plainly exactly when it maps back, as the spec
    # names of the examples all do.
    for path in EXAMPLE_SPECS:
        names = [t.name for t in load_spec(path).tools]
        name_map = NameMap(names)
        for name in names:
            assert safe_tool_name(name) == llm_function_name(name) == name_map.to_llm(name)


def test_the_stock_mapping_is_the_stock_servers_rule(valid_names):
    assert xiaozhi_server_name("self.light.set_on") == "self_light_set_on"
    assert xiaozhi_server_name("self.set-mode") == "self_set-mode"
    for name in valid_names:
        assert xiaozhi_server_name(name) == stock_server_name(name)


def test_every_colliding_pair_is_rejected_at_the_second_name(tmp_path, valid_names):
    rules = {"mcpgen": llm_function_name, "stock xiaozhi-esp32-server": stock_server_name}
    checked = dict.fromkeys(rules, 0)
    for first, second in itertools.combinations(valid_names, 2):
        clashing = [who for who, rule in rules.items() if rule(first) == rule(second)]
        if not clashing:
            continue
        found = errors(tmp_path, first, second)
        assert len(found) == 1, [e.format() for e in found]
        [error] = found
        assert (error.line, error.column, error.path) == (6, 11, "tools[1].name"), error.format()
        assert f"`{second}` collides with tools[0] `{first}` (line 3)" in error.message
        for who in clashing:
            assert who in error.message, error.format()
        # The suggested rename is a real fix.
        suggestion = re.search(r"e\.g\. `([^`]+)`", error.hint)
        assert suggestion, error.format()
        assert errors(tmp_path, first, suggestion.group(1)) == []
        for who in clashing:
            checked[who] += 1
    assert min(checked.values()) >= 5, checked  # the set really has collisions of both kinds


def test_pairs_that_no_consumer_confuses_raise_no_name_collision(tmp_path, valid_names):
    pairs = [
        (a, b)
        for a, b in itertools.combinations(valid_names, 2)
        if llm_function_name(a) != llm_function_name(b) and stock_server_name(a) != stock_server_name(b)
    ]
    for first, second in pairs[::997]:  # a spread-out sample: each check parses a file
        for error in errors(tmp_path, first, second):
            assert "as an LLM function name" not in error.message, error.format()


def test_suggestion_avoids_every_other_name():
    taken = ["self.light.set_on", "self.light_set.on_2", "self.light.set_on_3"]
    # `_2` collides with an existing name for the stock server, `_3` too; `_4` is free.
    assert suggest_rename("self.light_set.on", taken) == "self.light_set.on_4"
    assert suggest_rename("self.a._", []) == "self.a._2"  # not `self.a.__2`: no `__`
    assert suggest_rename("self." + "x" * 57, []) == ""  # no room left for a suffix
