"""The transport-independent bridge: names, visibility, device lifecycle, cancellation,
version handling, and the raw stdio transport."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from bridge_fakes import FakeDevice, FakeTool
from bridge_testlib import HERE, subprocess_env
from sdk_harness import RawClient

from mcpgen.llm_names import LLM_NAME_RE as SAFE_NAME_RE
from mcpgen.runtime.bridge import Bridge, ToolKey, ToolNameMap, device_prefix, safe_tool_name


def req(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def call(name: str, arguments: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    return req("tools/call", {"name": name, "arguments": arguments or {}}, id)


# ---------------------------------------------------------------- names


def test_safe_names_and_reverse_mapping() -> None:
    assert safe_tool_name("self.audio_speaker.set_volume") == "self__audio_speaker__set_volume"
    assert safe_tool_name("weird name/ü").startswith("weird_name___")
    assert SAFE_NAME_RE.match(safe_tool_name("weird name/ü"))
    assert safe_tool_name("self.a__b") != safe_tool_name("self.a.b") == "self__a__b"
    assert device_prefix("aa:bb:cc:dd:ee:ff") == "aa_bb_cc_dd_ee_ff"
    assert "__" not in device_prefix("a::__b")
    long_tool = "self." + "x" * 80
    keys = [
        ToolKey("aa:bb:cc:dd:ee:ff", "self.audio_speaker.set_volume"),
        ToolKey("kitchen", "self.audio_speaker.set_volume"),
        ToolKey("kitchen", long_tool),
        ToolKey("kitchen", "self.a_b"),
        ToolKey("kitchen", "self.a.b"),
        ToolKey("kitchen", "self.a__b"),  # self__a__b would be ambiguous: hashed instead
        ToolKey("kitchen", "x" * 60),
        ToolKey("kitchen", "x" * 60 + "y"),  # both cut to the same prefix: hash differs
    ]
    names = ToolNameMap(keys, prefix=True)
    exported = [names.exported(k) for k in keys]
    assert exported[0] == "aa_bb_cc_dd_ee_ff__self__audio_speaker__set_volume"
    assert exported[1] == "kitchen__self__audio_speaker__set_volume"
    assert len(set(exported)) == len(keys)
    assert all(SAFE_NAME_RE.match(n) for n in exported)
    assert len(exported[2]) == 64
    for key, name in zip(keys, exported, strict=True):
        assert names.resolve(name) == key
    # the same set in another order maps identically
    again = ToolNameMap(reversed(keys), prefix=True)
    assert [again.exported(k) for k in keys] == exported
    raw = ToolNameMap([ToolKey("d", "self.a.b")], prefix=False, safe=False)
    assert raw.exported(ToolKey("d", "self.a.b")) == "self.a.b"


async def test_tool_list_meta_user_only_and_filter() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice("one"))
    tools = bridge.exported_tools("2025-06-18")
    assert "self__reboot" not in [t["name"] for t in tools]
    status = tools[0]
    assert status["_meta"] == {"io.mcpgen/device": "one", "io.mcpgen/tool": "self.get_device_status"}
    assert "_meta" not in bridge.exported_tools("2024-11-05")[0]

    with_user = Bridge(user_tools=True)
    with_user.add_device(FakeDevice("one"))
    assert "self__reboot" in with_user.tool_names()

    only = Bridge(device_ids=["two"], prefix_tools=True)
    assert only.add_device(FakeDevice("one")) is False
    assert only.add_device(FakeDevice("two")) is True
    assert all(n.startswith("two__") for n in only.tool_names())
    assert only.exported_tools("2025-11-25")[0]["description"].startswith("[two] ")


# ---------------------------------------------------------------- devices come and go


async def test_list_changed_on_tool_change_and_device_churn() -> None:
    bridge = Bridge(prefix_tools=True)
    async with RawClient(bridge) as client:
        pushed = client.notifications
        device = FakeDevice("one")
        bridge.add_device(device)
        await client.wait_for(1)
        assert pushed == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]

        device.set_tools([FakeTool("self.only", "The only tool.", {"type": "object"})])
        await client.wait_for(2)
        assert bridge.tool_names() == ["one__self__only"]
        assert len(pushed) == 2

        await device.close()
        bridge.prune_closed()
        await client.wait_for(3)
        assert bridge.tool_names() == [] and len(pushed) == 3
        reply = await client.request(call("one__self__only"))
        result = reply["result"]
        assert result["isError"] is True and "one is not connected" in result["content"][0]["text"]


async def test_device_lost_mid_call_is_a_tool_error() -> None:
    bridge = Bridge()
    device = FakeDevice("one", step=0.05)
    bridge.add_device(device)
    async with RawClient(bridge) as client:
        pending = asyncio.ensure_future(client.request(call("self__slow__count", {"steps": 100})))
        await asyncio.sleep(0.1)
        await device.close()
        result = (await asyncio.wait_for(pending, 2))["result"]
        assert result["isError"] is True and "disconnected" in result["content"][0]["text"]


async def test_removed_device_cancels_calls_in_flight() -> None:
    bridge = Bridge()
    device = FakeDevice("one", step=0.05)
    bridge.add_device(device)
    async with RawClient(bridge) as client:
        pending = asyncio.ensure_future(client.request(call("self__slow__count", {"steps": 100})))
        await asyncio.sleep(0.1)
        bridge.remove_device("one")
        reply = await asyncio.wait_for(pending, 2)
        assert reply["result"]["isError"] is True
        assert device.cancelled == ["self.slow.count"]


async def test_hung_device_cannot_hang_the_client() -> None:
    class Hung(FakeDevice):
        async def call_raw(
            self, name: str, arguments: Any, *, timeout: float | None = None
        ) -> dict[str, Any]:
            await asyncio.Event().wait()  # ignores its timeout
            raise AssertionError

    bridge = Bridge(call_timeout=0.05)
    bridge.timeout_slack = 0.05
    bridge.add_device(Hung("one"))
    async with RawClient(bridge) as client:
        reply = await asyncio.wait_for(client.request(call("self__fail")), 2)
        assert "did not answer" in reply["result"]["content"][0]["text"]


async def test_cancelled_notification_cancels_the_device_call() -> None:
    bridge = Bridge()
    device = FakeDevice("one", step=0.05)
    bridge.add_device(device)
    async with RawClient(bridge) as client:
        pending = asyncio.ensure_future(client.request(call("self__slow__count", {"steps": 100}, id="abc")))
        await asyncio.sleep(0.1)
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "abc"}}
        await client.send(note)
        await asyncio.sleep(0.3)
        assert device.cancelled == ["self.slow.count"]
        assert not pending.done()  # no response for a cancelled request
        pending.cancel()


async def test_runtime_errors_become_tool_errors() -> None:
    from mcpgen.runtime.errors import DeviceTimeout, RpcError

    class Failing(FakeDevice):
        def __init__(self, exc: Exception) -> None:
            super().__init__("one")
            self.exc = exc

        async def call_raw(
            self, name: str, arguments: Any, *, timeout: float | None = None
        ) -> dict[str, Any]:
            raise self.exc

    for exc, text in [
        (RpcError(-32602, "Invalid params: volume"), "(error -32602): Invalid params: volume"),
        (DeviceTimeout("late"), "did not answer"),
    ]:
        bridge = Bridge()
        bridge.add_device(Failing(exc))
        async with RawClient(bridge) as client:
            result = (await client.request(call("self__fail")))["result"]
        assert result["isError"] is True and text in result["content"][0]["text"], result


# ---------------------------------------------------------------- versions


async def test_legacy_negotiation_and_modern_errors() -> None:
    bridge = Bridge()
    bridge.add_device(FakeDevice("one"))
    async with RawClient(bridge, "2030-01-01") as client:
        assert client.initialize_result is not None
        assert client.initialize_result["protocolVersion"] == "2025-11-25"
    # structuredContent exists from 2025-06-18 on; older sessions do not get it
    async with RawClient(bridge, "2025-03-26") as old:
        reply = await old.request(call("self__audio_speaker__set_volume", {"volume": 3}))
        assert "structuredContent" not in reply["result"]


# ---------------------------------------------------------------- stdio, raw


def run_stdio(lines: list[Any], *args: str) -> list[dict[str, Any]]:
    text = "".join(json.dumps(m) + "\n" for m in lines)
    proc = subprocess.run(
        [sys.executable, str(HERE / "fake_bridge_main.py"), *args],
        input=text.encode() + b"not json\n",
        capture_output=True,
        timeout=30,
        env=subprocess_env(),
    )
    assert b"stray print" in proc.stderr
    out = proc.stdout.decode().splitlines()
    return [json.loads(line) for line in out]  # every stdout line is one JSON-RPC message


def test_stdio_modern_requests_and_errors() -> None:
    """2026-07-28 over stdio (served by the SDK): discover, then envelope errors."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    old = {**meta, "io.modelcontextprotocol/protocolVersion": "2025-06-18"}
    volume_3 = {"name": "self__audio_speaker__set_volume", "arguments": {"volume": 3}}
    out = run_stdio(
        [
            req("server/discover", {"_meta": meta}, 1),
            req("server/discover", {}, 2),
            req("tools/list", {"_meta": old}, 3),
            req("tools/call", {**volume_3, "_meta": meta}, 4),
        ]
    )
    by_id = {m.get("id"): m for m in out}
    assert by_id[1]["result"]["supportedVersions"] == ["2026-07-28"]
    assert by_id[1]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpgen-bridge"
    assert by_id[2]["error"]["code"] == -32602
    assert by_id[3]["error"]["code"] == -32022
    assert "2026-07-28" in by_id[3]["error"]["data"]["supported"]
    result = by_id[4]["result"]
    assert result["structuredContent"] is not None and result["resultType"] == "complete"


@pytest.mark.parametrize(("version", "batch_ok"), [("2025-03-26", True), ("2025-06-18", False)])
def test_stdio_raw_batches_and_parse_errors(version: str, batch_ok: bool) -> None:
    init = req(
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    )
    batch = [req("tools/list", {}, 2), call("self__light__set_rgb", {"r": 9, "g": 8, "b": 7}, 3)]
    out = run_stdio([init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, batch])
    assert len(out) == 3
    assert out[0]["id"] == 1 and out[0]["result"]["protocolVersion"] == version
    parse_errors = [m for m in out if isinstance(m, dict) and m.get("error", {}).get("code") == -32700]
    assert len(parse_errors) == 1 and parse_errors[0]["id"] is None
    assert parse_errors[0]["error"]["message"].startswith("Parse error: Expecting value: line 1 column 1")
    middle = next(m for m in out[1:] if isinstance(m, list) or m["error"]["code"] != -32700)
    if batch_ok:
        assert isinstance(middle, list) and {m["id"] for m in middle} == {2, 3}
    else:
        assert middle["error"]["code"] == -32600 and middle["id"] is None


async def test_a_range_error_has_the_runtime_wording() -> None:
    """The bridge's own check and the runtime's validator word a range error alike."""
    from mcpgen.runtime.core.validate import SchemaValidator
    from mcpgen.runtime.errors import ValidationError

    device = FakeDevice("one")
    bridge = Bridge()
    bridge.add_device(device)
    [volume] = [t for t in device.tools if t.name == "self.audio_speaker.set_volume"]
    with pytest.raises(ValidationError) as raised:
        SchemaValidator(volume.input_schema).validate({"volume": 101})
    assert str(raised.value) == "volume: must be <= 100, got 101"
    async with RawClient(bridge) as client:
        result = (await client.request(call("self__audio_speaker__set_volume", {"volume": 101})))["result"]
    assert result["isError"] is True
    assert str(raised.value) in result["content"][0]["text"], result
    assert "greater than the maximum" not in result["content"][0]["text"]
