"""The web console in a real browser (Debian's headless Chromium, driven by Playwright).

The devices are the real C++ simulators: the default device over stdio behind a proxy
that counts the tool calls reaching it, and the desk lamp joining over WebSocket.
Screenshots go to ``MCPGEN_CONSOLE_SCREENSHOTS`` (or a temp folder); docs/console.md
shows copies of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

from console_testlib import browser_page, fleet, generous_expect, screenshot_dir
from e2e_testlib import Built, launch_ws
from playwright.async_api import expect
from prometheus_client.parser import text_string_to_metric_families

generous_expect()

VOLUME = "self.audio_speaker.set_volume"


async def test_devices_tools_calls_validation_events_in_the_browser(
    built_default: Built, built_lamp: Built, tmp_path: Path
) -> None:
    spec = built_default.spec
    shots = screenshot_dir(tmp_path / "shots")
    async with (
        fleet(
            tmp_path, built_default.exe, spec.fingerprint, gateway_fingerprint=built_lamp.spec.fingerprint
        ) as f,
        browser_page(tmp_path / "profile") as page,
    ):
        await page.goto(f"{f.url}?token={f.token}")
        # The page may already have put the selected device in the fragment (#device=...).
        assert page.url.split("#")[0] == f.url, "the token leaves the address bar (a cookie holds the login)"

        # The device list: id, name, version, fingerprint and its status, transport.
        row = page.locator('#devices tr[data-device-id="speaker-1"]')
        for text in ("xiaozhi-sim", "1.0.0", spec.fingerprint, "spec match", "stdio"):
            await expect(row).to_contain_text(text)
        await expect(row.locator("td.calls")).to_have_text("0")

        # Its tools as forms, from the input schemas; the user-only tool stays hidden.
        forms = page.locator("form.tool")
        await expect(forms.first).to_be_visible()
        names = await forms.evaluate_all("fs => fs.map(f => f.dataset.tool)")
        assert names == [t.name for t in spec.tools if not t.user_only]
        await expect(page.locator("#hidden-tools")).to_contain_text("1 user-only tool(s) hidden")
        volume_form = page.locator(f'form[data-tool="{VOLUME}"]')
        volume = volume_form.locator('input[name="volume"]')
        assert [await volume.get_attribute(a) for a in ("type", "min", "max", "step")] == [
            "number",
            "0",
            "100",
            "1",
        ]
        theme = page.locator('form[data-tool="self.screen.set_theme"] select[name="theme"]')
        assert await theme.locator("option").all_text_contents() == ["—", "light", "dark"]
        show_text = page.locator('form[data-tool="self.display.show_text"]')
        assert await show_text.locator('input[name="text"]').get_attribute("maxlength") == "64"
        assert await show_text.locator('input[name="seconds"]').input_value() == "3"  # the default
        unit = page.locator('form[data-tool="self.sensor.read_temperature"] select[name="unit"]')
        assert await unit.input_value() == '"celsius"'  # enum default preselected

        # A valid call shows its result, and it reached the device once.
        for level in (10, 20, 30, 42):
            await volume.fill(str(level))
            await volume_form.locator("button").click()
            await expect(volume_form.locator(".outcome")).to_have_attribute("data-outcome", "ok")
            await expect(row.locator("td.calls")).to_have_text(str((10, 20, 30, 42).index(level) + 1))
        await expect(volume_form.locator(".outcome pre")).to_have_text("true")
        assert f.speaker_calls() == 4
        status_form = page.locator('form[data-tool="self.get_device_status"]')
        await status_form.locator("button").click()
        await expect(status_form.locator(".outcome pre")).to_contain_text('"volume": 42')
        assert f.speaker_calls() == 5

        # Out of range: the runtime validator's message at the field, nothing sent.
        await volume.fill("420")
        await expect(volume_form.locator('.field-error[data-for="volume"]')).to_have_text(
            "volume: must be <= 100, got 420"
        )  # checked as you type
        await volume_form.locator("button").click()
        await expect(volume_form.locator(".outcome")).to_contain_text(
            "ValidationError (not sent): volume: must be <= 100, got 420"
        )
        await expect(page.locator("#history tbody tr").first).to_contain_text("invalid")
        # ... and the server refuses it on its own, without the page's checks.
        direct = await page.request.post(
            f"{f.url}api/call",
            data=json.dumps({"device": "speaker-1", "tool": VOLUME, "arguments": {"volume": 420}}),
            headers={"Content-Type": "application/json"},
        )
        assert direct.status == 422 and (await direct.json())["error"]["rule"] == "maximum"
        assert f.speaker_calls() == 5, "no invalid call reached the device"
        await expect(row.locator("td.calls")).to_have_text("5")  # calls that reached the device

        # A tool error is shown as such (the handler answers Result::Error for "fail").
        await show_text.locator('input[name="text"]').fill("fail")
        await show_text.locator("button").click()
        await expect(show_text.locator(".outcome")).to_have_attribute("data-outcome", "tool_error")
        await expect(row.locator("td.errors")).to_have_text("1")
        await page.screenshot(path=str(shots / "console-device.png"), full_page=True)

        # A second device connecting appears, and its events arrive, without a reload.
        await page.evaluate("window.__notReloaded = true")
        async with launch_ws(built_lamp.exe, f.ws_url, f.device_token, "lamp-1"):
            lamp_row = page.locator('#devices tr[data-device-id="lamp-1"]')
            for text in ("desk-lamp", "0.3.1", "websocket", "spec match"):
                await expect(lamp_row).to_contain_text(text)
            lamp = await f.gateway.wait_for_device("lamp-1", timeout=10)
            await lamp.call("self.button.press", {"count": 1})  # another client presses the button
            pressed = page.locator('#feed li[data-event="button_pressed"]')
            await expect(pressed).to_contain_text('lamp-1 button_pressed{"count":1}')
            await expect(page.locator('#feed li[data-event="power_changed"]')).to_contain_text(
                '"source":"button"'
            )
            assert await page.evaluate("window.__notReloaded") is True
            await lamp_row.click()
            await expect(page.locator("#device-events li")).to_have_count(2)
            rgb = page.locator('form[data-tool="self.light.set_rgb"]')
            for name, value in (("r", "255"), ("g", "120"), ("b", "0")):
                await rgb.locator(f'input[name="{name}"]').fill(value)
            await rgb.locator("button").click()
            await expect(rgb.locator(".outcome")).to_have_attribute("data-outcome", "ok")
            await page.screenshot(path=str(shots / "console-events.png"), full_page=True)

            # Rich results: an audio clip gets a player that loads it, and each item of a
            # result of several is drawn (text, image, the embedded status resource).
            chime = page.locator('form[data-tool="self.lamp.chime"]')
            await chime.locator("button").click()
            player = chime.locator(".outcome audio")
            await expect(player).to_have_attribute("src", re.compile(r"^data:audio/wav;base64,UklGR"))
            await expect(chime.locator(".outcome .audio-result")).to_contain_text("audio/wav · 684 bytes")
            duration = await player.evaluate(
                "a => a.readyState >= 1 ? a.duration : new Promise((ok, fail) => {"
                " a.addEventListener('loadedmetadata', () => ok(a.duration));"
                " a.addEventListener('error', fail); })"
            )
            assert abs(duration - 0.08) < 0.01, "Chromium decodes the clip: 640 samples at 8 kHz"
            snapshot = page.locator('form[data-tool="self.light.snapshot"]')
            await snapshot.locator("button").click()
            outcome = snapshot.locator(".outcome")
            in_words = "The lamp is on, colour (255, 120, 0), effect none."  # the button turned it on
            await expect(outcome.locator("pre").first).to_have_text(in_words)
            png = re.compile(r"^data:image/png;base64,iVBOR")
            await expect(outcome.locator("img")).to_have_attribute("src", png)
            embedded = outcome.locator('.embedded-resource[data-uri="lamp://status"]')
            await expect(embedded).to_contain_text("application/json")
            await expect(embedded.locator("pre")).to_contain_text('"rgb": [')
            await page.screenshot(path=str(shots / "console-rich-results.png"), full_page=True)
        # The lamp left: its row says so.
        await expect(lamp_row).to_contain_text("disconnected")


@contextlib.asynccontextmanager
async def foreign_site(console_url: str) -> AsyncIterator[str]:
    """A page on another port of the same host: another origin, but the same *site*, so
    the browser sends the console's login cookie along with its requests."""
    body = f"""<!doctype html><title>elsewhere</title><script>
      fetch({json.dumps(console_url + "api/call")}, {{method: "POST", credentials: "include",
        headers: {{"Content-Type": "text/plain"}},
        body: JSON.stringify({{device: "speaker-1", tool: "{VOLUME}", arguments: {{volume: 7}}}})}})
        .catch(() => {{}});
      new EventSource({json.dumps(console_url + "api/stream")}, {{withCredentials: true}});
    </script>""".encode()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.readuntil(b"\r\n\r\n")
            head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n"
            writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        server.close()


async def test_wrong_token_and_foreign_origin_are_refused(built_default: Built, tmp_path: Path) -> None:
    async with (
        fleet(tmp_path, built_default.exe, built_default.spec.fingerprint) as f,
        browser_page(tmp_path / "profile") as page,
    ):
        wrong = await page.goto(f"{f.url}?token=wrong")
        assert wrong is not None and wrong.status == 401
        await expect(page.locator("#problem")).to_have_text("wrong token: try again")
        none = await page.goto(f.url)
        assert none is not None and none.status == 401  # no cookie was set
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = await page.request.get(f"{f.url}api/state", headers=headers)
            assert refused.status == 401
        assert (await page.request.get(f"{f.url}metrics")).status == 401

        await page.goto(f"{f.url}?token={f.token}")
        await expect(page.locator('#devices tr[data-device-id="speaker-1"]')).to_be_visible()

        async def refused(status: int) -> float:
            """The console's own count of requests it refused with ``status``."""
            answer = await page.request.get(f"{f.url}metrics", headers={"Authorization": f"Bearer {f.token}"})
            for family in text_string_to_metric_families(await answer.text()):
                for sample in family.samples:
                    if sample.name == "mcpgen_http_refused_requests_total" and sample.labels == {
                        "status": str(status)
                    }:
                        return sample.value
            return 0.0

        foreign = await page.context.new_page()  # the console stays open in the first tab
        async with foreign_site(f.url) as elsewhere:
            await foreign.goto(elsewhere)
            for _ in range(200):  # the page's POST and its event stream, both refused
                if await refused(403) >= 2:
                    break
                await asyncio.sleep(0.05)
        assert await refused(403) == 2
        assert f.speaker_calls() == 0, "the foreign page's call never reached the device"
        # The console page itself still works (same origin, same cookie).
        volume_form = page.locator(f'form[data-tool="{VOLUME}"]')
        await volume_form.locator('input[name="volume"]').fill("5")
        await volume_form.locator("button").click()
        await expect(volume_form.locator(".outcome")).to_have_attribute("data-outcome", "ok")
        assert f.speaker_calls() == 1


async def test_a_call_that_reports_progress_shows_a_bar(
    built_default: Built, built_lamp: Built, tmp_path: Path
) -> None:
    """The lamp's slow fade (spec `progress: true`): while it runs, the page that called it
    draws the device's notifications/progress as a bar under the form; the result replaces it."""
    async with (
        fleet(
            tmp_path,
            built_default.exe,
            built_default.spec.fingerprint,
            gateway_fingerprint=built_lamp.spec.fingerprint,
        ) as f,
        browser_page(tmp_path / "profile") as page,
        launch_ws(built_lamp.exe, f.ws_url, f.device_token, "lamp-fade"),
    ):
        await page.goto(f"{f.url}?token={f.token}")
        row = page.locator('#devices tr[data-device-id="lamp-fade"]')
        await expect(row).to_contain_text("desk-lamp")
        await row.click()
        fade = page.locator('form[data-tool="self.light.fade"]')
        for name, value in (("r", "255"), ("g", "80"), ("b", "0"), ("seconds", "3")):
            await fade.locator(f'input[name="{name}"]').fill(value)
        await fade.locator("button").click()
        bar = fade.locator(".outcome progress.call-progress")
        await expect(bar).to_be_visible()
        assert await bar.get_attribute("max") == "10"
        await expect(fade.locator(".outcome .progress-text")).to_contain_text(" / 10 · rgb ")
        shot = screenshot_dir(tmp_path / "shots") / "console-progress.png"
        await page.screenshot(path=str(shot), full_page=True)
        await expect(fade.locator(".outcome")).to_have_attribute("data-outcome", "ok")
        await expect(bar).to_have_count(0)  # the result replaced the bar
        await expect(fade.locator(".outcome pre")).to_have_text("true")


async def test_a_tool_that_asks_the_person_opens_a_dialog_first(
    built_default: Built, built_lamp: Built, tmp_path: Path
) -> None:
    """The lamp's reset confirms and asks for its scope (spec confirm, from_human): the page
    asks in a dialog; declined or cancelled (Escape), nothing reaches the lamp."""
    async with (
        fleet(
            tmp_path,
            built_default.exe,
            built_default.spec.fingerprint,
            gateway_fingerprint=built_lamp.spec.fingerprint,
        ) as f,
        browser_page(tmp_path / "profile") as page,
        launch_ws(built_lamp.exe, f.ws_url, f.device_token, "lamp-1"),
    ):
        lamp = await f.gateway.wait_for_device("lamp-1", timeout=10)
        await lamp.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3})
        await lamp.call("self.timer.set", {"minutes": 9})

        async def lamp_state() -> tuple[list[int], int]:
            state = await lamp.call("self.light.get_state", {})
            return state["rgb"], state["timer_minutes"]

        await page.goto(f"{f.url}?token={f.token}")
        lamp_row = page.locator('#devices tr[data-device-id="lamp-1"]')
        await lamp_row.click()
        reset = page.locator('form[data-tool="self.lamp.reset"]')
        await expect(reset.locator(".asks-person")).to_have_text(
            "asks you first: Reset the desk lamp to its factory state?"
        )
        assert await reset.locator('[name="scope"]').count() == 0, "the person's value is not a form field"

        dialog = page.locator('dialog.ask[data-tool="self.lamp.reset"]')
        await reset.locator("button").click()
        await expect(dialog).to_be_visible()
        await expect(dialog.locator(".ask-message")).to_have_text("Reset the desk lamp to its factory state?")
        await expect(dialog.locator("label")).to_have_text(
            "Reset only the light, or everything (timer and effect too)?"
        )
        scope = dialog.locator('select[name="scope"]')
        assert await scope.input_value() == '"light"'  # the spec's default, preselected
        await dialog.locator("button.decline").click()
        await expect(dialog).to_have_count(0)
        await expect(reset.locator(".outcome")).to_have_attribute("data-outcome", "declined")
        await expect(reset.locator(".outcome")).to_have_text("✗ declined by you: not sent")

        await reset.locator("button").click()
        await expect(dialog).to_be_visible()
        await page.keyboard.press("Escape")
        await expect(reset.locator(".outcome")).to_have_attribute("data-outcome", "cancelled")
        assert await lamp_state() == ([1, 2, 3], 9), "neither call reached the lamp"
        await expect(lamp_row.locator("td.calls")).to_have_text("0")

        # The server refuses a call without the person's answer, whatever the page does.
        direct = await page.request.post(
            f"{f.url}api/call",
            data=json.dumps({"device": "lamp-1", "tool": "self.lamp.reset", "arguments": {"scope": "light"}}),
            headers={"Content-Type": "application/json"},
        )
        assert direct.status == 422 and (await direct.json())["error"]["rule"] == "from_human"

        await reset.locator("button").click()
        await scope.select_option(label="everything")
        await dialog.locator("button.accept").click()
        await expect(reset.locator(".outcome")).to_have_attribute("data-outcome", "ok")
        await expect(reset.locator(".outcome pre")).to_have_text("true")
        assert await lamp_state() == ([255, 255, 255], 0)
        await expect(lamp_row.locator("td.calls")).to_have_text("1")
