"""worst_case_page_bytes is exact: it is the size of a real one-tool page."""

from __future__ import annotations

import json

import pytest
from spec_testlib import EXAMPLE_SPECS

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import CURSOR_LEN, list_entry, worst_case_page_bytes


@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: p.name)
def test_worst_case_equals_a_real_page(path):
    spec = load_spec(path)
    cursor = "0" * CURSOR_LEN  # the device's cursors are all this long (ASCII)
    for tool in spec.tools:
        page = {"tools": [list_entry(tool)], "nextCursor": cursor}
        real = json.dumps(page, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        assert worst_case_page_bytes(tool, spec) == len(real), tool.name
