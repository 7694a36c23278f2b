"""One Gateway, two firmware versions of the desk lamp, the v2 bindings: each device is
served typed by its own version (policy "compatible"); an unreleased fingerprint is handled
per policy."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from lamp_versions import LampVersions, build_unreleased, build_versions, exercise_mixed_fleet

from mcpgen.codegen.run.simulator import launch_simulator
from mcpgen.runtime import Gateway, SpecMismatch, TokenAuth
from mcpgen.runtime.bridge import Bridge


@pytest.fixture(scope="module")
def built_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lamp_versions")


@pytest.fixture(scope="module")
def versions(built_dir: Path) -> LampVersions:
    return build_versions(built_dir)


async def test_one_gateway_serves_v1_and_v2_typed(versions: LampVersions, token: str) -> None:
    mod = versions.module
    assert list(mod.RELEASES) == [versions.fingerprint_v1, versions.fingerprint_v2]
    auth = TokenAuth({"*": token})
    async with Gateway(port=0, auth=auth, fingerprint=mod.RELEASES, policy="compatible") as gw:
        url = f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/"
        p1 = await launch_simulator(versions.exe_v1, url, token, "lamp-v1")
        p2 = await launch_simulator(versions.exe_v2, url, token, "lamp-v2")
        try:
            d1 = await gw.wait_for_device("lamp-v1", timeout=10)
            d2 = await gw.wait_for_device("lamp-v2", timeout=10)
            await exercise_mixed_fleet(versions, d1, d2)
            # The bridge lists each device's own tools, with its own schemas.
            bridge = Bridge(prefix_tools=True)
            bridge.add_device(d1)
            bridge.add_device(d2)
            listed = {t["name"]: t for t in bridge.exported_tools("2025-06-18")}
            brightness = [n for n in listed if "set_brightness" in n]
            assert len(brightness) == 1 and "lamp-v2" in brightness[0], sorted(listed)
            timers = {
                n.split("__")[0]: t["inputSchema"]["properties"]["minutes"]["maximum"]
                for n, t in listed.items()
                if n.endswith("timer__set")
            }
            assert timers == {"lamp-v1": 720, "lamp-v2": 1440}, sorted(listed)
        finally:
            for p in (p1, p2):
                p.kill()
                await p.wait()


class _Unreleased:
    """A device reporting a fingerprint no release has (a firmware built from an unreleased spec)."""

    fingerprint = "0123456789abcdef"
    device_id = "lamp-x"

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def invoke(self, name: str, arguments: dict, kind: int, timeout: object = None) -> bool:
        self.sent.append(name)
        return True


async def test_an_unreleased_fingerprint_is_handled_per_policy(
    versions: LampVersions, caplog: pytest.LogCaptureFixture
) -> None:
    mod = versions.module
    with pytest.raises(SpecMismatch):
        mod.DeskLamp(_Unreleased(), policy="strict")
    with caplog.at_level(logging.WARNING, "mcpgen.runtime.bindings"):
        lamp = mod.DeskLamp(_Unreleased())  # compatible: like warn, the newest bindings
    assert "0123456789abcdef" in caplog.text
    # its own version, not the newest release's (it reports none: "unknown")
    assert lamp.version == "unknown" and lamp.supports("self.light.set_brightness")
    assert await lamp.light.set_brightness(percent=5) is True
    assert lamp.device.sent == ["self.light.set_brightness"]
    # A v1 device under "strict" or "warn" gets the newest bindings, as before this feature.
    v1 = _Unreleased()
    v1.fingerprint = versions.fingerprint_v1
    with pytest.raises(SpecMismatch):
        mod.DeskLamp(v1, policy="strict")
    assert mod.DeskLamp(v1, policy="warn").version == "unknown"  # what it reports, not 0.4.0
    assert mod.DeskLamp(v1, policy="compatible").version == "0.3.1"


async def test_an_unreleased_firmware_on_the_gateway(
    versions: LampVersions, built_dir: Path, token: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Under "compatible" the device is served in dynamic mode by the newest bindings; under
    "strict" with every release accepted, it is refused."""
    exe, fingerprint = build_unreleased(built_dir)
    mod = versions.module
    assert fingerprint not in mod.RELEASES
    auth = TokenAuth({"*": token})
    async with Gateway(port=0, auth=auth, fingerprint=mod.RELEASES, policy="compatible") as gw:
        proc = await launch_simulator(exe, f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/", token, "lamp-v3")
        try:
            device = await gw.wait_for_device("lamp-v3", timeout=10)
            assert device.fingerprint == fingerprint and device.dynamic is True
            lamp = mod.DeskLamp(device)
            assert lamp.version == device.server_info["version"] == "0.4.0"  # the version it reports
            assert await lamp.light.set_brightness(percent=7) == 7
        finally:
            proc.kill()
            await proc.wait()
    async with Gateway(port=0, auth=auth, fingerprint=mod.RELEASES, policy="strict") as gw:
        proc = await launch_simulator(exe, f"ws://127.0.0.1:{gw.port}/xiaozhi/v1/", token, "lamp-v3")
        try:
            with caplog.at_level(logging.WARNING):
                for _ in range(100):
                    if "lamp-v3 refused" in caplog.text:
                        break
                    await asyncio.sleep(0.05)
            assert "lamp-v3 refused: spec fingerprint mismatch" in caplog.text
            assert "lamp-v3" not in gw.connected
        finally:
            proc.kill()
            await proc.wait()
