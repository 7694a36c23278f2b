"""Realistic device frames, shaped byte for byte like the firmware core writes them.

The C++ core (``firmware_template/core/mcpgen/mcp_server.cpp``) answers a ``tools/call``
with ``{"session_id":..,"type":"mcp","payload":{"jsonrpc":"2.0","id":N,"result":
{"content":[{"type":"text","text":..}],"isError":false}}}``; object results carry the
same JSON as text *and* as ``structuredContent``. ``tools/list`` entries are the exact
bytes of ``codegen.spec.mcp_json.list_entry_json`` (what the device stores in flash).

Each message exists as a template so batches of frames with distinct ids (1..N) can be
built cheaply: the hot path matches every reply to its own pending request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from mcpgen.codegen.spec import mcp_json
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.model import Spec, Tool

REPO = Path(__file__).resolve().parent.parent
SPECS = {
    "xiaozhi-sim": REPO / "toolspec" / "default_device.yaml",
    "desk-lamp": REPO / "toolspec" / "desk_lamp.yaml",
}
SESSION_ID = "b7e2a5c4-19d3-4f0e-9a61-3c8d2f7e5a10"
_ID_MARK = 987654321987


def load_examples() -> dict[str, Spec]:
    return {name: load_spec(path) for name, path in SPECS.items()}


@dataclass(frozen=True)
class Message:
    """One kind of incoming reply. ``kind`` is the runtime return kind used to decode it."""

    key: str
    title: str
    kind: str  # "boolean" | "integer" | "string" | "object" | "raw" (tools/list) | "error"
    tool: str  # the tool (or method) it answers
    result: Any  # the JSON-RPC result (or error object for kind == "error")
    expected: Any  # the decoded value a typed client should end up with

    def payload(self, rid: int) -> dict[str, Any]:
        field = "error" if self.kind == "error" else "result"
        return {"jsonrpc": "2.0", "id": rid, field: self.result}

    def envelope(self, rid: int) -> dict[str, Any]:
        return {"session_id": SESSION_ID, "type": "mcp", "payload": self.payload(rid)}

    def _template(self, enveloped: bool) -> tuple[bytes, bytes]:
        doc = self.envelope(_ID_MARK) if enveloped else self.payload(_ID_MARK)
        raw = orjson.dumps(doc)
        head, _, tail = raw.partition(str(_ID_MARK).encode())
        return head, tail

    def frame(self, rid: int = 1, enveloped: bool = True) -> bytes:
        head, tail = self._template(enveloped)
        return head + str(rid).encode() + tail

    def frames(self, ids: Sequence[int], enveloped: bool = True) -> list[bytes]:
        head, tail = self._template(enveloped)
        return [head + str(i).encode() + tail for i in ids]


def _text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _object_result(obj: dict[str, Any]) -> dict[str, Any]:
    text = orjson.dumps(obj).decode()
    return {"content": [{"type": "text", "text": text}], "structuredContent": obj, "isError": False}


def list_page_tools(specs: dict[str, Spec], count: int = 20) -> list[Tool]:
    """``count`` tools: every example tool, then renamed copies until there are enough."""
    base = [t for s in specs.values() for t in s.tools]
    tools = list(base)
    n = 2
    while len(tools) < count:
        for t in base:
            if len(tools) >= count:
                break
            name = t.name.replace("self.", f"self.unit{n}_", 1)
            tools.append(
                Tool(
                    name,
                    t.description,
                    t.handler + f"_{n}",
                    t.params,
                    t.returns,
                    t.title,
                    t.user_only,
                    t.read_only,
                    t.destructive,
                    t.idempotent,
                )
            )
        n += 1
    return tools


def tools_list_page(specs: dict[str, Spec], count: int = 20) -> tuple[dict[str, Any], list[Tool]]:
    tools = list_page_tools(specs, count)
    result: dict[str, Any] = {
        "tools": [mcp_json.list_entry(t) for t in tools],
        "nextCursor": "self.unit3_light.set_rgb",
    }
    return result, tools


def messages(specs: dict[str, Spec]) -> list[Message]:
    status = {
        "audio_speaker": {"volume": 60},
        "screen": {"brightness": 80, "theme": "dark"},
        "battery": {"level": 87, "charging": False},
    }
    page, _ = tools_list_page(specs)
    return [
        Message(
            "call_bool",
            "tools/call -> boolean",
            "boolean",
            "self.audio_speaker.set_volume",
            _text_result("true"),
            True,
        ),
        Message(
            "call_int", "tools/call -> integer", "integer", "self.counter.add", _text_result("1042"), 1042
        ),
        Message(
            "call_string",
            "tools/call -> string",
            "string",
            "self.display.show_text",
            _text_result('Showing "Dinner is ready" for 3 s'),
            'Showing "Dinner is ready" for 3 s',
        ),
        Message(
            "call_object",
            "tools/call -> JSON object",
            "object",
            "self.get_device_status",
            _object_result(status),
            status,
        ),
        Message("tools_list", "tools/list page (20 tools)", "raw", "tools/list", page, page),
        Message(
            "error",
            "error reply (-32602)",
            "error",
            "self.audio_speaker.set_volume",
            {"code": -32602, "message": "Invalid params: argument `volume` must be <= 100, got 150"},
            None,
        ),
    ]
