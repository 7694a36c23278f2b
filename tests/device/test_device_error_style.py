"""`device.errors: jsonrpc` (for stock xiaozhi backends): arguments that break the spec
get a JSON-RPC error -32602 with the message an MCP-style device puts in its isError
result; everything else is answered as before. The default stays MCP-correct."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from device_sim_driver import StdioSim
from device_testlib import LAMP_SPEC, copy_spec

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.host import build_host
from mcpgen.runtime import connect_process
from mcpgen.runtime.errors import RpcError


def _with_errors(style: str) -> Callable[[str], str]:
    return lambda text: text.replace("  version: 0.3.1\n", f"  version: 0.3.1\n  errors: {style}\n")


@pytest.fixture(scope="module")
def jsonrpc_lamp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("jsonrpc_errors")
    spec = copy_spec(LAMP_SPEC, work, _with_errors("jsonrpc"))
    return build_host(spec, work / "out", log=lambda _m: None)


def _call(sim: StdioSim, rid: int, args: dict[str, Any]) -> dict[str, Any]:
    import json

    sim.send_line(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "self.light.set_rgb", "arguments": args},
            }
        )
    )
    return sim.read_json()


def test_fingerprint_changes_only_when_set(tmp_path: Path) -> None:
    plain = load_spec(LAMP_SPEC)
    spec = copy_spec(LAMP_SPEC, tmp_path, _with_errors("jsonrpc"))
    assert load_spec(spec).device.errors == "jsonrpc" and plain.device.errors == "mcp"
    assert load_spec(spec).fingerprint != plain.fingerprint
    same = copy_spec(LAMP_SPEC, tmp_path / "mcp", _with_errors("mcp"))
    assert load_spec(same).fingerprint == plain.fingerprint


def test_argument_errors_are_jsonrpc_errors(jsonrpc_lamp: Path, lamp_sim_exe: Path, tmp_path: Path) -> None:
    stock = StdioSim(jsonrpc_lamp, tmp_path / "stock")
    mcp = StdioSim(lamp_sim_exe, tmp_path / "mcp")
    try:
        cases = ((1, {"r": 300, "g": 0, "b": 0}), (2, {"r": 1, "g": 2}), (3, {"r": "x", "g": 0, "b": 0}))
        for rid, args in cases:
            got = _call(stock, rid, args)
            reference = _call(mcp, rid, args)
            assert reference["result"]["isError"] is True
            assert got["error"]["code"] == -32602 and "result" not in got and got["id"] == rid
            assert got["error"]["message"] == reference["result"]["content"][0]["text"]
        ok = _call(stock, 4, {"r": 1, "g": 2, "b": 3})
        assert ok["result"]["isError"] is False
    finally:
        stock.close()
        mcp.close()


async def test_the_runtime_raises_the_message(jsonrpc_lamp: Path, lamp_sim_exe: Path) -> None:
    bad = {"r": 300, "g": 0, "b": 0}  # call_raw: the runtime's own check would stop it first
    device = await connect_process([str(jsonrpc_lamp), "--stdio"])
    try:
        with pytest.raises(RpcError) as info:
            await device.call_raw("self.light.set_rgb", bad)
        assert info.value.code == -32602 and "`r`: must be <= 255, got 300" in info.value.message
    finally:
        await device.close()
    device = await connect_process([str(lamp_sim_exe), "--stdio"])
    try:
        result = await device.call_raw("self.light.set_rgb", bad)
        assert result["isError"] is True and "`r`: must be <= 255, got 300" in result["content"][0]["text"]
    finally:
        await device.close()
