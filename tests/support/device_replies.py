"""What an emulated device answers, from one spec: the replies the benchmarks' light device
emulators (``benchmarks/gw_emulator.py``, ``benchmarks/mqtt_emulator.py``) send and the MQTT
swarm of the fleet fault suite (``tests/mqtt/mqtt_swarm.py``) sends too. Tests import it as
``device_replies`` (``pytest.ini`` puts ``tests/support`` on the path), the benchmarks as
``tests.support.device_replies``."""

from __future__ import annotations

from typing import Any, Optional

import orjson

from mcpgen.codegen.spec import mcp_json
from mcpgen.codegen.spec.loader import load_spec

MARK = b"987654321987"


CALL_TEXT = {"boolean": "true", "integer": "30", "number": "1.5", "string": "rainbow", "none": None}


class Replies:
    """Reply templates (split around the id) for one spec; enveloped per session."""

    def __init__(self, spec_path: str) -> None:
        spec = load_spec(spec_path)
        self.fingerprint = spec.fingerprint
        self.results: dict[str, Any] = {}
        for tool in spec.tools:
            kind = tool.returns.kind
            if kind == "object":
                obj = {"on": True, "rgb": [255, 120, 0], "timer_minutes": 30}
                text = orjson.dumps(obj).decode()
                res: dict[str, Any] = {
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": obj,
                    "isError": False,
                }
            elif kind == "none" or CALL_TEXT.get(kind) is None:
                res = {"content": [], "isError": False}
            else:
                res = {"content": [{"type": "text", "text": CALL_TEXT[kind]}], "isError": False}
            self.results[tool.name] = res
        self.list_result = {"tools": mcp_json.tools_list(spec)}
        self.init_result = {
            "protocolVersion": spec.device.protocol_version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": spec.device.name, "version": spec.device.version},
            "_meta": {"mcpgen/fingerprint": spec.fingerprint},
        }
        self.unknown_tool = {"code": -32601, "message": "Unknown tool"}

    def templates(self, session_id: str) -> dict[str, tuple[bytes, bytes]]:
        def split(field: str, value: Any) -> tuple[bytes, bytes]:
            doc = {
                "session_id": session_id,
                "type": "mcp",
                "payload": {"jsonrpc": "2.0", "id": int(MARK), field: value},
            }
            head, _, tail = orjson.dumps(doc).partition(MARK)
            return head, tail

        out = {f"call:{name}": split("result", res) for name, res in self.results.items()}
        out["tools/list"] = split("result", self.list_result)
        out["initialize"] = split("result", self.init_result)
        out["ping"] = split("result", {})
        out["error:unknown"] = split("error", self.unknown_tool)
        return out


class Model:
    """What every emulated device answers, from one spec."""

    def __init__(self, spec_path: str) -> None:
        spec = load_spec(spec_path)
        self.tools = {"tools": mcp_json.tools_list(spec)}
        self.init = {
            "protocolVersion": spec.device.protocol_version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": spec.device.name, "version": spec.device.version},
            "_meta": {"mcpgen/fingerprint": spec.fingerprint},
        }
        # Other tools get the gateway benchmark emulator's replies (the same bytes).
        self.results = Replies(spec_path).results
        self.fixed = {"content": [], "isError": False}
        # The same results serialised once: a reply is then the id spliced into bytes.
        self.init_json = orjson.dumps(self.init)
        self.tools_json = orjson.dumps(self.tools)
        self.results_json = {name: orjson.dumps(r) for name, r in self.results.items()}
        self.fixed_json = orjson.dumps(self.fixed)


def _reply(model: Model, counters: dict[str, int], device_id: str, req: dict) -> Optional[dict]:
    """The reply to one request as a dict (the MQTT swarm's)."""
    raw = _reply_json(model, counters, device_id, req)
    return None if raw is None else dict(orjson.loads(raw))


def _reply_json(model: Model, counters: dict[str, int], device_id: str, req: dict) -> Optional[bytes]:
    """The JSON-RPC reply to one request, serialised; None for notifications and replies."""
    rid = req.get("id")
    method = req.get("method")
    if rid is None or not isinstance(method, str):
        return None  # notifications and stray replies
    if method == "tools/call":
        params = req.get("params") or {}
        name = params.get("name")
        if name == "self.counter.add":
            amount = (params.get("arguments") or {}).get("amount", 1)
            counters[device_id] = counters.get(device_id, 0) + int(amount)
            text = str(counters[device_id])
            result = b'{"content":[{"type":"text","text":"' + text.encode() + b'"}],"isError":false}'
        else:
            result = model.results_json.get(str(name), model.fixed_json)
    elif method == "initialize":
        result = model.init_json
    elif method == "tools/list":
        result = model.tools_json
    elif method == "ping":
        result = b"{}"
    else:
        return orjson.dumps(
            {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
        )
    return b'{"jsonrpc":"2.0","id":' + orjson.dumps(rid) + b',"result":' + result + b"}"
