"""The console checks a device's patterns on RE2, in linear time (issue 40).

The page sends ``POST api/check`` as the user types (the browser runs no pattern itself);
with Python's ``re`` a device reporting ``^(\\w+\\s?)*$`` froze the console's loop (every
device, page and ``/metrics``) for seconds per keystroke once the text reached 46
characters. Now the check answers at once, a ticker on the loop keeps ticking, and a tool
whose pattern RE2 cannot run shows why and refuses calls with ``UnsupportedPattern``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
from console_testlib import served
from looplag import EVIL_PATTERN, MAX_LAG, SENTENCE, Ticker

from mcpgen.runtime.console import Console
from mcpgen.runtime.session.session_setup import ToolInfo

TOKEN = "t0ken"
RAW_TOOLS: list[dict[str, Any]] = [
    {
        "name": "self.hostile.say",
        "description": "Says a sentence (write it as words, each followed by one space).",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "pattern": EVIL_PATTERN}},
        },
    },
    {
        "name": "self.hostile.echo",
        "description": "A backreference: RE2 has none.",
        "inputSchema": {"type": "object", "properties": {"word": {"type": "string", "pattern": r"^(a+)\1$"}}},
    },
]


class HostileDevice:
    """A device handle whose tools are what a hostile device reported (runtime ToolInfo)."""

    def __init__(self, device_id: str = "hostile-1") -> None:
        self.device_id = device_id
        self.tools = [ToolInfo.from_raw(raw) for raw in RAW_TOOLS]
        self.closed = False
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def call_raw(self, name: str, arguments: Any, *, timeout: float | None = None) -> Any:
        self.sent.append((name, dict(arguments or {})))
        return {"content": [{"type": "text", "text": "said"}], "isError": False}

    def on_notification(self, callback: Callable[[str, dict[str, Any]], Any]) -> Callable[[], None]:
        return lambda: None


async def test_check_as_you_type_answers_at_once_and_the_loop_keeps_ticking() -> None:
    console = Console()
    device = HostileDevice()
    console.add_device(device, "custom")
    body = {"device": device.device_id, "tool": "self.hostile.say"}
    async with served(console, TOKEN) as port:
        url = f"http://127.0.0.1:{port}/"
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as c:
            async with Ticker() as ticker:
                started = time.perf_counter()
                # the page checks after each pause in typing: the sentence as it grows
                done = 0
                for n in range(40, len(SENTENCE) + 1):
                    typed = {**body, "arguments": {"text": SENTENCE[:n]}}
                    answer = (await c.post(f"{url}api/check", json=typed)).json()
                    done += 1
                    if time.perf_counter() - started > 5 * MAX_LAG:
                        break  # stalled (the old `re` took seconds a check): the ticker shows it
                per_check = (time.perf_counter() - started) * 1000 / done
                call = (await c.post(f"{url}api/call", json={**body, "arguments": {"text": SENTENCE}})).json()
    print(f"\nconsole api/check over HTTP, {EVIL_PATTERN}, up to 46 characters: {per_check:.3f} ms a check")
    assert answer["ok"] is False and answer["error"]["rule"] == "pattern", answer
    assert answer["error"]["argument"] == "text"
    assert call["outcome"] == "invalid" and device.sent == []
    assert ticker.max_gap < MAX_LAG, f"the loop stalled {ticker.max_gap * 1000:.0f} ms"
    # in-process, without HTTP: the validation itself
    started = time.perf_counter()
    for _ in range(100):
        assert console.check(device.device_id, "self.hostile.say", {"text": SENTENCE})["ok"] is False
    print(f"console.check in process: {(time.perf_counter() - started) * 10:.3f} ms per validation")
    assert console.check(device.device_id, "self.hostile.say", {"text": "hello world "})["ok"] is True


async def test_unsupported_pattern_shows_why_and_refuses_calls() -> None:
    console = Console()
    device = HostileDevice()
    console.add_device(device, "custom")
    tools = {t["name"]: t for t in console.detail(device.device_id)["toolList"]}
    assert tools["self.hostile.say"]["refused"] is None
    reason = tools["self.hostile.echo"]["refused"]
    assert reason is not None and "RE2 cannot compile it" in reason
    checked = console.check(device.device_id, "self.hostile.echo", {"word": "aa"})
    assert checked["ok"] is False and checked["error"]["type"] == "UnsupportedPattern"
    assert checked["error"]["argument"] == "word" and checked["error"]["rule"] == "pattern"
    record = await console.call(device.device_id, "self.hostile.echo", {"word": "aa"})
    assert record.outcome == "invalid" and record.error is not None
    assert record.error["type"] == "UnsupportedPattern"
    ok = await console.call(device.device_id, "self.hostile.say", {"text": "hi "})
    assert ok.outcome == "ok" and device.sent == [("self.hostile.say", {"text": "hi "})]
