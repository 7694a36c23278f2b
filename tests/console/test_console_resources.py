"""Device resources in the web console (issue 30), in a real headless Chromium: the desk
lamp simulator's resources and templates listed, text and binary reads (an image preview,
a size and a download), template forms, device errors, and a watched resource re-read
live when the device says it changed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from console_testlib import browser_page, fleet, generous_expect, screenshot_dir
from e2e_testlib import Built, launch_ws
from playwright.async_api import expect

generous_expect()


async def test_resources_listed_read_and_watched_live_in_the_browser(
    built_default: Built, built_lamp: Built, tmp_path: Path
) -> None:
    shots = screenshot_dir(tmp_path / "shots")
    async with (
        fleet(
            tmp_path,
            built_default.exe,
            built_default.spec.fingerprint,
            gateway_fingerprint=built_lamp.spec.fingerprint,
        ) as f,
        browser_page(tmp_path / "profile") as page,
    ):
        await page.goto(f"{f.url}?token={f.token}")
        await page.locator('#devices tr[data-device-id="speaker-1"]').click()
        await expect(page.locator("form.tool").first).to_be_visible()
        # The default device serves no resources (-32601): no resources section, no error.
        await expect(page.locator("#resources")).to_be_hidden()

        async with launch_ws(built_lamp.exe, f.ws_url, f.device_token, "lamp-1"):
            await page.locator('#devices tr[data-device-id="lamp-1"]').click()
            items = page.locator("#resource-list li")
            await expect(items).to_have_count(2)
            assert await items.evaluate_all("ls => ls.map(l => l.dataset.uri)") == [
                "lamp://status",
                "lamp://icon.png",
            ]
            await expect(items.first).to_contain_text("application/json")
            templates = page.locator("form.template")
            assert await templates.evaluate_all("fs => fs.map(f => f.dataset.template)") == [
                "lamp://effects/{name}",
                "lamp://pattern/{length}",
            ]

            view = page.locator("#resource-view")
            status = page.locator('#resource-list li[data-uri="lamp://status"]')
            await status.locator("button.read").click()
            await expect(view).to_have_attribute("data-state", "ok")
            await expect(view.locator("pre")).to_contain_text('"effect": "none"')  # JSON, indented

            icon = page.locator('#resource-list li[data-uri="lamp://icon.png"]')
            await icon.locator("button.read").click()
            await expect(view).to_have_attribute("data-uri", "lamp://icon.png")
            preview = view.locator("img.preview")
            await expect(preview).to_be_visible()
            assert await preview.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [8, 8]
            link = view.locator("a.download")
            assert await link.get_attribute("download") == "icon.png"
            async with page.expect_download() as started:
                await link.click()
            downloaded = Path(await (await started.value).path()).read_bytes()
            lamp = await f.gateway.wait_for_device("lamp-1", timeout=10)
            assert downloaded == await lamp.read_resource("lamp://icon.png")
            await expect(view.locator(".size")).to_have_text(f"image/png · {len(downloaded)} bytes")

            pattern = page.locator('form.template[data-template="lamp://pattern/{length}"]')
            await pattern.locator('input[name="length"]').fill("300")
            await pattern.locator("button").click()
            await expect(view).to_have_attribute("data-uri", "lamp://pattern/300")
            await expect(view.locator(".size")).to_have_text("application/octet-stream · 300 bytes")
            assert await view.locator("img").count() == 0, "no preview for a type that is not an image"

            effect = page.locator('form.template[data-template="lamp://effects/{name}"]')
            await effect.locator('input[name="name"]').fill("bogus")
            await effect.locator("button").click()
            await expect(view).to_have_attribute("data-state", "error")
            await expect(view).to_contain_text("-32602")  # the device refuses a value outside the enum
            await effect.locator('input[name="name"]').fill("candle")
            await effect.locator("button").click()
            await expect(view).to_have_attribute("data-uri", "lamp://effects/candle")
            await expect(view.locator("pre")).not_to_be_empty()

            # The icon has no subscribe: true in the spec, so the device refuses to watch it.
            # A click, not check(): check() reads the box back after its click and fails when
            # the page has already un-ticked the refused watch (a race the page can win).
            icon_watch = icon.locator("input.watch")
            await expect(icon_watch).not_to_be_checked()
            await icon_watch.click()
            await expect(icon.locator(".watch-error")).to_contain_text("subscribe")
            await expect(icon_watch).not_to_be_checked()
            assert not f.console.entries["lamp-1"].subscriptions

            # Watch the status, show it, and let another client change the lamp: the
            # device's notifications/resources/updated makes the page read it again.
            await status.locator("input.watch").check()
            await expect(status.locator("input.watch")).to_be_checked()
            await until(lambda: f.console.entries["lamp-1"].subscriptions == {"lamp://status"})
            await status.locator("button.read").click()
            await expect(view).to_have_attribute("data-uri", "lamp://status")
            await expect(view).to_have_attribute("data-state", "ok")
            await lamp.call("self.light.set_rgb", {"r": 12, "g": 34, "b": 56})
            await expect(view).to_have_attribute("data-updates", "1")
            await expect(view).to_have_attribute("data-state", "ok")
            shown = json.loads(await view.locator("pre").text_content() or "{}")
            assert shown["rgb"] == [12, 34, 56]
            await expect(status.locator(".updated")).to_contain_text("updated")
            await page.locator("#resources").screenshot(path=str(shots / "console-resources.png"))

            # Unwatched: the device stops telling (its notification would come before the
            # call's answer), so the page has nothing to re-read.
            updates: list[str] = []
            lamp.on_notification(lambda method, params: updates.append(method))
            await status.locator("input.watch").uncheck()
            await until(lambda: not f.console.entries["lamp-1"].subscriptions)
            await lamp.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3})
            assert "notifications/resources/updated" not in updates
            await expect(view).to_have_attribute("data-updates", "1")


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait for a condition of the console's state that the page's clicks bring about."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)
