"""A device on stdio for the self-test's own tests: a small JSON-RPC responder that serves a
spec's tools correctly, unless ``--break WHAT`` makes it get one thing wrong.

    python fake_device.py SPEC.yaml [--break WHAT]

WHAT (each breaks one self-test check): parse-error-code, invalid-request-code,
method-not-found-code, invalid-params-code, version, fingerprint, missing-tool,
schema-differs, page-over-limit, forged-cursor, accepts-out-of-range, refuses-in-range,
undeclared-event.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional

from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import tools_list
from mcpgen.codegen.spec.model import Param, Spec
from mcpgen.protocol import SESSION_PROTOCOL_VERSIONS

BREAKS = (
    "parse-error-code",
    "invalid-request-code",
    "method-not-found-code",
    "invalid-params-code",
    "version",
    "fingerprint",
    "missing-tool",
    "schema-differs",
    "page-over-limit",
    "forged-cursor",
    "accepts-out-of-range",
    "refuses-in-range",
    "undeclared-event",
)


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def valid(p: Param, v: Any) -> bool:
    if p.type == "boolean":
        return isinstance(v, bool)
    if p.type in ("integer", "number"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        if p.type == "integer" and not float(v).is_integer():
            return False
        return (p.minimum is None or v >= p.minimum) and (p.maximum is None or v <= p.maximum)
    if not isinstance(v, str):
        return False
    if p.enum and v not in p.enum:
        return False
    if p.max_length is not None and len(v) > p.max_length:
        return False
    import re

    return p.pattern is None or re.search(p.pattern, v) is not None


class Fake:
    def __init__(self, spec: Spec, broken: Optional[str]) -> None:
        self.spec = spec
        self.broken = broken
        entries = tools_list(spec, with_user_tools=True)
        if broken == "missing-tool":
            entries = entries[1:]
        if broken == "schema-differs":
            for e in entries:
                for prop in e["inputSchema"].get("properties", {}).values():
                    if "maximum" in prop:
                        prop["maximum"] += 1
                        break
        self.entries = entries
        self.tools = {t.name: t for t in spec.tools}

    def error(self, rid: Any, code: int, message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}

    def result(self, rid: Any, result: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def handle(self, line: str) -> list[dict[str, Any]]:
        try:
            msg = json.loads(line)
        except ValueError:
            return [self.error(None, -32600 if self.broken == "parse-error-code" else -32700, "Parse error")]
        if not isinstance(msg, dict):
            return [self.error(None, -32600, "expected an object")]
        rid = msg.get("id")
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str):
            code = -32603 if self.broken == "invalid-request-code" else -32600
            return [self.error(rid, code, "Invalid Request")]
        params = msg.get("params") or {}
        if "id" not in msg:
            return []
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = (
                asked
                if asked in SESSION_PROTOCOL_VERSIONS or self.broken == "version"
                else self.spec.device.protocol_version
            )
            fp = "0" * 16 if self.broken == "fingerprint" else self.spec.fingerprint
            return [
                self.result(
                    rid,
                    {
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": self.spec.device.name, "version": self.spec.device.version},
                        "_meta": {"mcpgen/fingerprint": fp},
                    },
                )
            ]
        if method == "ping":
            return [self.result(rid, {})]
        if method == "tools/list":
            return [self.tools_list(rid, params)]
        if method == "tools/call":
            return self.call(rid, params)
        code = -32600 if self.broken == "method-not-found-code" else -32601
        return [self.error(rid, code, f"Method not found: {method}")]

    def tools_list(self, rid: Any, params: dict[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        bad_params = -32603 if self.broken == "invalid-params-code" else -32602
        if cursor is not None and not isinstance(cursor, str):
            return self.error(rid, bad_params, "cursor must be a string")
        visible = [
            e
            for e in self.entries
            if params.get("withUserTools") or e.get("annotations", {}).get("audience") != ["user"]
        ]
        start = 0
        if cursor:
            if not cursor.isdigit() or int(cursor) >= len(visible):
                if self.broken == "forged-cursor":
                    return self.result(rid, {"tools": []})
                return self.error(rid, bad_params, "unknown cursor")
            start = int(cursor)
        limit = 10**9 if self.broken == "page-over-limit" else self.spec.device.page_size
        page: list[dict[str, Any]] = []
        i = start
        while i < len(visible):
            trial = {"tools": [*page, visible[i]], "nextCursor": "0000"}
            if page and len(dumps(trial).encode()) > limit:
                break
            page.append(visible[i])
            i += 1
        out: dict[str, Any] = {"tools": page}
        if i < len(visible):
            out["nextCursor"] = f"{i:04d}"
        return self.result(rid, out)

    def call(self, rid: Any, params: dict[str, Any]) -> list[dict[str, Any]]:
        name, args = params.get("name"), params.get("arguments", {})
        bad_params = -32603 if self.broken == "invalid-params-code" else -32602
        if not isinstance(name, str):
            return [self.error(rid, bad_params, "params.name must be a string")]
        if not isinstance(args, dict):
            return [self.error(rid, bad_params, "params.arguments must be an object")]
        tool = self.tools.get(name)
        if tool is None:
            return [self.error(rid, -32601, f"Unknown tool: {name}")]
        wrong = [
            p.name
            for p in tool.params
            if (p.name in args and not valid(p, args[p.name])) or (p.name not in args and p.default is None)
        ]
        if self.broken == "refuses-in-range" and args:
            wrong = wrong or [next(iter(args))]
        if wrong and self.broken != "accepts-out-of-range":
            text = f"invalid argument {wrong[0]}"
            if self.spec.device.errors == "jsonrpc":
                return [self.error(rid, -32602, text)]
            return [self.result(rid, {"content": [{"type": "text", "text": text}], "isError": True})]
        out: list[dict[str, Any]] = []
        if self.broken == "undeclared-event":
            out.append({"jsonrpc": "2.0", "method": "notifications/events/not_declared", "params": {}})
        out.append(self.result(rid, {"content": [{"type": "text", "text": "true"}], "isError": False}))
        return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--break", dest="broken", choices=BREAKS)
    a = ap.parse_args()
    fake = Fake(load_spec(a.spec), a.broken)
    for line in sys.stdin:
        if not line.strip():
            continue
        for reply in fake.handle(line):
            sys.stdout.write(dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
