"""``completion/complete`` (issue 30): values of resource template variables, through the
bridge's SDK handlers (the SDK client against the real simulator is in tests/e2e)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bridge_fakes import FakeDevice
from bridge_testlib import subprocess_env
from sdk_harness import RawClient

from mcpgen.runtime.bridge import Bridge
from mcpgen.runtime.bridge.completion import EVENTS_TEMPLATE, MAX_VALUES, answer, schema_values

EFFECTS = "lamp://effects/{name}"
LEVELS = "lamp://levels/{level}/{on}"
SCHEMAS = {
    EFFECTS: {"name": {"type": "string", "enum": ["none", "breathe", "rainbow", "Bright"]}},
    LEVELS: {"level": {"type": "integer", "minimum": 0, "maximum": 250}, "on": {"type": "boolean"}},
}


class TemplateDevice(FakeDevice):
    """A fake device that lists resource templates as a runtime.Device does."""

    def __init__(self, device_id: str, templates: list[str]) -> None:
        super().__init__(device_id)
        self.templates = templates

    async def list_resource_templates(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
        return [{"uriTemplate": t, "name": t.split("/")[2], "mimeType": "text/plain"} for t in self.templates]


def complete(uri: str, name: str, value: str, id: int = 9, kind: str = "ref/resource") -> dict[str, Any]:
    ref = {"type": kind, "uri": uri} if kind == "ref/resource" else {"type": kind, "name": uri}
    params = {"ref": ref, "argument": {"name": name, "value": value}}
    return {"jsonrpc": "2.0", "id": id, "method": "completion/complete", "params": params}


def device_template(device_id: str, template: str) -> str:
    return f"mcpgen://devices/{device_id}/{template}"


async def values(client: RawClient, uri: str, name: str, value: str) -> dict[str, Any]:
    reply = await client.request(complete(uri, name, value))
    assert "result" in reply, reply
    return dict(reply["result"]["completion"])


def test_schema_values_are_what_the_schema_bounds() -> None:
    assert schema_values({"type": "string", "enum": ["a", "b"]}) == ["a", "b"]
    assert schema_values({"type": "boolean"}) == ["false", "true"]
    assert schema_values({"type": "integer", "minimum": 1.5, "maximum": 4}) == ["2", "3", "4"]
    assert schema_values({"type": "integer", "minimum": 0, "maximum": 65536}) == []  # too wide to list
    assert schema_values({"type": "integer", "minimum": 0}) == []
    assert schema_values({"type": "string"}) == []


def test_answer_filters_by_prefix_and_caps_at_one_hundred() -> None:
    assert answer(["none", "Bright", "breathe"], "b") == {
        "completion": {"values": ["Bright", "breathe"], "total": 2, "hasMore": False}
    }
    many = answer([str(i) for i in range(250)], "")["completion"]
    assert len(many["values"]) == MAX_VALUES and many["total"] == 250 and many["hasMore"] is True


async def test_capability_declared_and_enum_values_completed() -> None:
    bridge = Bridge(template_schemas=SCHEMAS)
    bridge.add_device(TemplateDevice("lamp-1", [EFFECTS, LEVELS]))
    async with RawClient(bridge) as client:
        assert client.initialize_result is not None
        assert "completions" in client.initialize_result["capabilities"]
        uri = device_template("lamp-1", EFFECTS)
        both = {"values": ["breathe", "Bright"], "total": 2, "hasMore": False}
        assert await values(client, uri, "name", "b") == both
        assert (await values(client, uri, "name", ""))["total"] == 4
        assert (await values(client, uri, "name", "x"))["values"] == []

        levels = device_template("lamp-1", LEVELS)
        assert await values(client, levels, "on", "t") == {"values": ["true"], "total": 1, "hasMore": False}
        wide = await values(client, levels, "level", "")
        assert wide["total"] == 251 and len(wide["values"]) == MAX_VALUES and wide["hasMore"] is True
        assert (await values(client, levels, "level", "25"))["values"] == ["25", "250"]


async def test_device_ids_complete_the_events_template() -> None:
    bridge = Bridge()
    for device_id in ("kitchen", "lamp-1", "lamp-2"):
        bridge.add_device(FakeDevice(device_id))
    async with RawClient(bridge) as client:
        listed = await client.request({"jsonrpc": "2.0", "id": 2, "method": "resources/templates/list"})
        assert [t["uriTemplate"] for t in listed["result"]["resourceTemplates"]] == [EVENTS_TEMPLATE]
        assert (await values(client, EVENTS_TEMPLATE, "device", "lamp"))["values"] == ["lamp-1", "lamp-2"]
        assert (await values(client, EVENTS_TEMPLATE, "device", ""))["total"] == 3


async def test_a_template_without_known_schemas_completes_to_nothing() -> None:
    bridge = Bridge()  # no spec given: the device's templates come without variable types
    bridge.add_device(TemplateDevice("lamp-1", [EFFECTS]))
    async with RawClient(bridge) as client:
        got = await values(client, device_template("lamp-1", EFFECTS), "name", "")
        assert got == {"values": [], "total": 0, "hasMore": False}


@pytest.mark.parametrize(
    ("uri", "name", "kind", "says"),
    [
        ("greeting", "who", "ref/prompt", "unknown prompt 'greeting' (prompts: none)"),
        (device_template("lamp-1", "lamp://nothing/{x}"), "x", "ref/resource", "unknown resource template"),
        (device_template("lamp-9", EFFECTS), "name", "ref/resource", "unknown resource template"),
        ("file:///etc/{passwd}", "passwd", "ref/resource", "unknown resource template"),
        (device_template("lamp-1", EFFECTS), "colour", "ref/resource", "'colour' is not a variable"),
        (EVENTS_TEMPLATE, "id", "ref/resource", "'id' is not a variable"),
    ],
)
async def test_unknown_references_are_invalid_params(uri: str, name: str, kind: str, says: str) -> None:
    bridge = Bridge(template_schemas=SCHEMAS)
    bridge.add_device(TemplateDevice("lamp-1", [EFFECTS]))
    async with RawClient(bridge) as client:
        reply = await client.request(complete(uri, name, "", kind=kind))
        assert reply["error"]["code"] == -32602
        assert says in reply["error"]["message"]


async def test_stateless_2026_07_28_requests_complete_too() -> None:
    bridge = Bridge(template_schemas=SCHEMAS)
    bridge.add_device(TemplateDevice("lamp-1", [EFFECTS]))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    async with RawClient(bridge, version=None) as client:
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
        discovered = await client.request(discover)
        assert "completions" in discovered["result"]["capabilities"]
        request = complete(device_template("lamp-1", EFFECTS), "name", "r")
        request["params"]["_meta"] = meta
        reply = await client.request(request)
        assert reply["result"]["completion"]["values"] == ["rainbow"]
        assert reply["result"]["resultType"] == "complete"


def test_codegen_bridge_refuses_a_spec_it_cannot_load(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("device: {name: x}\nresources:\n  r: {uri_template: 'x://{a}'}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mcpgen", "bridge", "--spec", str(broken), "--device-cmd", "true"],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert proc.returncode == 1
    assert "broken.yaml" in proc.stderr  # the loader's located errors, before anything starts
