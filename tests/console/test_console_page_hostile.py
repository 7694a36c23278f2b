"""A hostile device against the console page (issue 40), in a real headless Chromium: tool
schemas that make no sense (``required: 5``, ``maxLength: -1``, ``properties: "x"``) must
leave the panel working, and a flood of events must be drawn in bounded work (the page
keeps and draws at most its limits, once per animation frame)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console_testlib import browser_page, generous_expect, served
from playwright.async_api import expect

from mcpgen.runtime.console import Console

generous_expect()

TOKEN = "t0ken"


@dataclass(frozen=True)
class Tool:
    name: str
    input_schema: Any
    description: str = ""
    user_only: bool = False
    title: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


NONSENSE = [
    Tool("self.required_five", {"type": "object", "properties": {"a": {"type": "integer"}}, "required": 5}),
    Tool(
        "self.negative_length",
        {"type": "object", "properties": {"text": {"type": "string", "maxLength": -1}}},
    ),
    Tool("self.properties_text", {"type": "object", "properties": "x"}),
    Tool("self.property_number", {"type": "object", "properties": {"n": 5, "ok": {"type": "boolean"}}}),
    Tool(
        "self.mixed",
        {
            "type": "object",
            "properties": {
                "level": {"type": "integer", "minimum": "low", "maximum": 10},
                "mode": {"enum": "fast"},
                "tag": {"type": 7, "pattern": ["x"]},
            },
            "required": ["level", 3],
        },
    ),
    Tool("self.schema_list", [1, 2, 3]),
    Tool(
        "self.fine",
        {"type": "object", "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}}},
    ),
]


class OddDevice:
    """A device handle (``DeviceLike``) whose tools report nonsense schemas."""

    def __init__(self, device_id: str) -> None:
        self.device_id = device_id
        self.tools = list(NONSENSE)
        self.closed = False
        self.callbacks: list[Callable[[str, Any], Any]] = []
        self.calls: list[tuple[str, Any]] = []

    async def call_raw(self, name: str, arguments: Any, *, timeout: float | None = None) -> Any:
        self.calls.append((name, arguments))
        return {"content": [{"type": "text", "text": "done"}], "isError": False}

    def on_notification(self, callback: Callable[[str, Any], Any]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: None


async def test_nonsense_schemas_leave_the_panel_working(tmp_path: Path) -> None:
    """Regression: `required: 5` threw in the page (`new Set(5)`) and `maxLength: -1` threw
    when set on the input, so the device's whole panel stayed empty."""
    console = Console(call_timeout=5.0)
    device = OddDevice("odd-1")
    console.add_device(device, "custom")
    async with served(console, TOKEN) as port, browser_page(tmp_path / "profile") as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(f"http://127.0.0.1:{port}/?token={TOKEN}")
        forms = page.locator("form.tool")
        await expect(forms).to_have_count(len(NONSENSE))
        assert await forms.evaluate_all("fs => fs.map(f => f.dataset.tool)") == [t.name for t in NONSENSE]

        # what is sane is rendered: the property of `required: 5`, a text field without a bound
        five = page.locator('form[data-tool="self.required_five"]')
        await expect(five.locator('input[name="a"]')).to_have_attribute("type", "number")
        await expect(five.locator(".schema-problems")).to_contain_text("unsupported schema: 1 problem(s)")
        await expect(five.locator(".schema-problems li")).to_have_text(
            ["required is 5, expected a list of property names"]
        )
        negative = page.locator('form[data-tool="self.negative_length"]')
        text = negative.locator('input[name="text"]')
        await expect(text).to_have_attribute("type", "text")
        assert await text.get_attribute("maxlength") is None
        await expect(negative.locator(".schema-problems li")).to_have_text(
            ["text: maxLength is -1, expected a whole number >= 0"]
        )
        # the rest is shown raw, with a JSON field for what cannot be typed
        await expect(
            page.locator('form[data-tool="self.properties_text"] textarea[data-kind="arguments"]')
        ).to_have_count(1)
        number = page.locator('form[data-tool="self.property_number"]')
        await expect(number.locator('textarea[name="n"]')).to_have_attribute("data-kind", "json")
        await expect(number.locator('select[name="ok"]')).to_have_count(1)
        mixed = page.locator('form[data-tool="self.mixed"]')
        await expect(mixed.locator(".schema-problems")).to_have_attribute("data-problems", "5")
        await expect(mixed.locator('input[name="level"]')).to_have_attribute("max", "10")
        await expect(mixed.locator(".raw-schema")).to_contain_text('"required":["level",3]')
        await expect(page.locator('form[data-tool="self.schema_list"] .schema-problems')).to_contain_text(
            "1 problem"
        )
        fine = page.locator('form[data-tool="self.fine"]')
        await expect(fine.locator(".schema-problems")).to_have_count(0)

        # and the panel still works: a call from the odd form and from the fine one
        await five.locator('input[name="a"]').fill("3")
        await five.locator("button").click()
        await expect(five.locator(".outcome")).to_have_attribute("data-outcome", "ok")
        await fine.locator('input[name="volume"]').fill("7")
        await fine.locator("button").click()
        await expect(fine.locator(".outcome")).to_have_attribute("data-outcome", "ok")
        assert ("self.fine", {"volume": 7}) in device.calls
        assert errors == [], errors
    await console.close()


async def test_an_event_flood_is_drawn_in_bounded_work(tmp_path: Path) -> None:
    """Regression: every event redrew the fleet feed (200 rows) and the device's whole event
    list, which only grew: 20,000 events froze the page for 77 s. Now an event only updates
    the page's state; the lists are drawn at most once per animation frame and hold at most
    their limits. Asserted by counting the rows the page adds while it takes the flood."""
    console = Console(call_timeout=5.0)
    device = OddDevice("odd-1")
    device.tools = [NONSENSE[-1]]
    console.add_device(device, "custom")
    async with served(console, TOKEN) as port, browser_page(tmp_path / "profile") as page:
        await page.goto(f"http://127.0.0.1:{port}/?token={TOKEN}")
        await expect(page.locator("form.tool")).to_have_count(1)
        await expect(page.locator("#detail")).to_have_attribute("data-device-id", "odd-1")
        # count every <li> the page adds to the two event lists
        await page.evaluate(
            """() => {
                window.__added = 0;
                const count = (records) => {
                    for (const r of records) window.__added += r.addedNodes.length;
                };
                for (const id of ["feed", "device-events"])
                    new MutationObserver(count).observe(document.getElementById(id), { childList: true });
            }"""
        )
        n = 20_000
        started = time.perf_counter()
        await page.evaluate(
            """(n) => {
                const now = Date.now();
                for (let i = 0; i < n; i++)
                    handle({ type: "event",
                             event: { device: "odd-1", event: "tick", arguments: { i }, time: now } });
            }""",
            n,
        )
        newest = page.locator("#feed li").first
        await expect(newest).to_contain_text(f'{{"i":{n - 1}}}')
        await expect(page.locator("#device-events li").first).to_contain_text(f'{{"i":{n - 1}}}')
        took = time.perf_counter() - started
        await expect(page.locator("#feed li")).to_have_count(200)
        await expect(page.locator("#device-events li")).to_have_count(100)
        added = await page.evaluate("window.__added")
        frames = await page.evaluate("drawn.frames")
        # one drawing of both lists per frame that had something to draw: with 20,000 events
        # handed over in one task that is one frame, 300 rows (it was about 4 million)
        assert added <= 300 * frames and frames <= 3, (added, frames)
        print(
            f"\n{n} events handled and drawn in {took * 1000:.0f} ms ({frames} frame(s), {added} rows added)"
        )
    await console.close()
