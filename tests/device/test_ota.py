"""Over-the-air updates end to end: supervised host simulators (--ota-dir), the image
server and the rollout of mcpgen.runtime.ota, through the WebSocket gateway."""

from __future__ import annotations

import asyncio
import collections
import hashlib
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from ota_fleet import OtaLamps, build_ota_lamps, fake_image, fleet, ota_state

from mcpgen.runtime import DeviceDisconnected, DeviceTimeout, Gateway, ToolError, ValidationError
from mcpgen.runtime.ota import OTA_TOOL, FirmwareImage, ImageServer, read_image, rollout

pytestmark = pytest.mark.slow
FLEET = 50  # devices of the rolling upgrade; batches of 10 %


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> OtaLamps:
    return build_ota_lamps(tmp_path_factory.mktemp("ota_lamps"))


def raw_image(path: Path) -> FirmwareImage:
    """Any file as an image to serve (no marker needed: the device is the one to check)."""
    data = path.read_bytes()
    return FirmwareImage(path, data, hashlib.sha256(data).hexdigest(), "", "", "")


def on_v1(lamps: OtaLamps, gw: Gateway, tmp: Path, device_id: str) -> None:
    dev = gw.connected[device_id]
    assert not dev.closed and dev.fingerprint == lamps.fingerprint_v1
    assert ota_state(tmp, device_id) == "active=a\npending=0\nattempts=0\n"


def test_image_marker(lamps: OtaLamps) -> None:
    img = read_image(lamps.exe_v2)
    assert (img.device_name, img.version, img.fingerprint) == ("desk-lamp", "0.4.0", lamps.fingerprint_v2)
    assert img.sha256 == hashlib.sha256(lamps.exe_v2.read_bytes()).hexdigest()


async def test_rolling_upgrade_under_load(lamps: OtaLamps, tmp_path: Path) -> None:
    ids = [f"lamp-{i:02d}" for i in range(FLEET)]
    image = read_image(lamps.exe_v2)
    failed_calls: collections.Counter[str] = collections.Counter()
    ok_calls = collections.Counter[str]()
    async with Gateway(host="127.0.0.1", port=0) as gw, ImageServer(image) as server:
        with fleet(lamps.exe_v1, gw.url, ids, tmp_path):
            for i in ids:
                await gw.wait_for_device(i, timeout=60)
            stop = asyncio.Event()

            async def load(device_id: str) -> None:  # every device is called all the time
                while not stop.is_set():
                    dev = gw.connected.get(device_id)
                    if dev is None or dev.closed:
                        await asyncio.sleep(0.05)
                        continue
                    try:
                        await dev.call("self.light.get_state", timeout=5)
                        ok_calls[device_id] += 1
                    except (DeviceDisconnected, DeviceTimeout) as exc:  # inside its reboot window
                        failed_calls[f"{device_id} {type(exc).__name__}"] += 1
                    await asyncio.sleep(0.02)

            loaders = [asyncio.create_task(load(i)) for i in ids]
            lines: list[str] = []
            report = await rollout(
                gw,
                ids,
                image,
                server.url,
                batch=FLEET // 10,
                max_failures=0,
                deadline=60,
                on_result=lambda r: lines.append(r.line()),
            )
            stop.set()
            await asyncio.gather(*loaders)  # any other exception fails the test here
            assert not report.halted
            assert [r.outcome for r in report.results] == ["updated"] * FLEET, lines
            for r in report.results:
                assert (r.old_version, r.new_version) == ("0.3.1", "0.4.0")
                assert (r.old_fingerprint, r.new_fingerprint) == (lamps.fingerprint_v1, lamps.fingerprint_v2)
            assert len(lines) == FLEET and all(" updated " in line for line in lines)
            for i in ids:
                dev = gw.connected[i]
                assert dev.fingerprint == lamps.fingerprint_v2
                assert await dev.call("self.light.set_brightness", {"percent": 40}) == 40  # a v2-only tool
                assert ota_state(tmp_path, i) == "active=b\npending=0\nattempts=0\n"
                assert ok_calls[i] > 0
            # Each device's calls fail only around its own reboot: the call the reboot cut
            # off, and ones sent before the gateway saw the connection drop.
            per_device = collections.Counter(k.split()[0] for k in failed_calls.elements())
            assert all(n <= 3 for n in per_device.values()), failed_calls
            assert server.requests == FLEET and server.bytes_served == FLEET * image.size


async def test_image_that_dies_at_boot_rolls_back_and_halts(lamps: OtaLamps, tmp_path: Path) -> None:
    ids = ["lamp-a", "lamp-b", "lamp-c"]
    broken = read_image(
        fake_image(
            tmp_path / "broken-v2",
            name="desk-lamp",
            version="0.4.0",
            fingerprint=lamps.fingerprint_v2,
            body="exit 3",
        )
    )
    async with Gateway(host="127.0.0.1", port=0) as gw, ImageServer(broken) as server:
        with fleet(lamps.exe_v1, gw.url, ids, tmp_path):
            for i in ids:
                await gw.wait_for_device(i, timeout=60)
            report = await rollout(gw, ids, broken, server.url, batch=1, max_failures=1, deadline=60)
            assert [r.outcome for r in report.results] == ["rolled_back", "rolled_back", "skipped"]
            assert report.halted and report.failures == 2
            assert server.requests == 2  # the third device was never asked
            for i in ids:
                on_v1(lamps, gw, tmp_path, i)
                assert await gw.connected[i].call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3}) is True
            log = (tmp_path / "lamp-a.log").read_text(encoding="utf-8")
            assert "exited (code 3) before reaching the backend" in log and "rolling back to slot a" in log


async def test_image_that_never_connects_rolls_back_after_the_deadline(
    lamps: OtaLamps, tmp_path: Path
) -> None:
    silent = read_image(
        fake_image(
            tmp_path / "silent-v2",
            name="desk-lamp",
            version="0.4.0",
            fingerprint=lamps.fingerprint_v2,
            body="exec sleep 600",
        )
    )
    async with Gateway(host="127.0.0.1", port=0) as gw, ImageServer(silent) as server:
        with fleet(lamps.exe_v1, gw.url, ["lamp-s"], tmp_path, "--ota-deadline-ms", "1500"):
            await gw.wait_for_device("lamp-s", timeout=60)
            report = await rollout(gw, ["lamp-s"], silent, server.url, deadline=60)
            assert [r.outcome for r in report.results] == ["rolled_back"]
            on_v1(lamps, gw, tmp_path, "lamp-s")
            assert "no session with the backend within 1500 ms" in (tmp_path / "lamp-s.log").read_text()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_bad_updates_are_typed_errors_and_the_device_stays(lamps: OtaLamps, tmp_path: Path) -> None:
    good = read_image(lamps.exe_v2)
    other = read_image(
        fake_image(
            tmp_path / "other",
            name="other-device",
            version="0.4.0",
            fingerprint="0123456789abcdef",
            body="exit 0",
        )
    )
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 64)
    async with (
        Gateway(host="127.0.0.1", port=0) as gw,
        ImageServer(good) as s_good,
        ImageServer(other) as s_other,
        ImageServer(raw_image(junk)) as s_junk,
    ):
        with fleet(lamps.exe_v1, gw.url, ["lamp-x"], tmp_path):
            dev = await gw.wait_for_device("lamp-x", timeout=60)
            ok = {"url": s_good.url, "sha256": good.sha256, "size": good.size, "version": "0.4.0"}
            cases = [
                ({"sha256": "0" * 64}, "SHA-256 mismatch"),
                (
                    {"size": good.size + 100},
                    f"truncated download: got {good.size} of {good.size + 100} bytes",
                ),
                ({"size": good.size - 100}, "larger than the declared size"),
                ({"url": f"http://127.0.0.1:{free_port()}/x"}, "cannot connect to 127.0.0.1"),
                ({"url": s_good.url + ".missing"}, "HTTP status 404"),
                (
                    {"url": "ftp://example.invalid/fw.bin"},
                    "expected http://host[:port]/path or https://host[:port]/path",
                ),
                (
                    {"url": s_other.url, "sha256": other.sha256, "size": other.size},
                    "the image is for device 'other-device' (spec 0123456789abcdef), "
                    "this device is 'desk-lamp'",
                ),
                ({"version": "9.9.9"}, "the image carries version 0.4.0, the request announced 9.9.9"),
                (
                    {
                        "url": s_junk.url,
                        "sha256": hashlib.sha256(junk.read_bytes()).hexdigest(),
                        "size": junk.stat().st_size,
                    },
                    "not an mcpgen image",
                ),
            ]
            for change, message in cases:
                with pytest.raises(ToolError) as exc:
                    await dev.call(OTA_TOOL, {**ok, **change}, timeout=30)
                assert message in exc.value.message, (change, exc.value.message)
                on_v1(lamps, gw, tmp_path, "lamp-x")
                assert gw.connected["lamp-x"] is dev  # same session: nothing rebooted
                assert not (tmp_path / "lamp-x.ota" / "slot-b").exists()
            # A malformed digest: refused locally by the schema's pattern; sent anyway, it
            # matches no image's digest on the device.
            with pytest.raises(ValidationError, match="sha256"):
                await dev.call(OTA_TOOL, {**ok, "sha256": "xyz"})
            with pytest.raises(ToolError, match="SHA-256 mismatch: .* expected xyz"):
                await dev.call(OTA_TOOL, {**ok, "sha256": "xyz"}, validate=False)
            on_v1(lamps, gw, tmp_path, "lamp-x")
            # A second update while one runs: refused; the first one goes through.
            first, second = await asyncio.gather(
                dev.call(OTA_TOOL, ok, timeout=30), dev.call(OTA_TOOL, ok, timeout=30), return_exceptions=True
            )
            assert isinstance(first, str) and "installed desk-lamp 0.4.0" in first, first
            assert isinstance(second, ToolError) and "already in progress" in second.message, second
            await dev.wait_closed()
            new = await gw.wait_for_device("lamp-x", timeout=60)
            assert new.fingerprint == lamps.fingerprint_v2


async def test_without_ota_dir_the_tool_says_how_to_enable_it(lamps: OtaLamps, tmp_path: Path) -> None:
    async with Gateway(host="127.0.0.1", port=0) as gw:
        with open(tmp_path / "sim.log", "wb") as log:
            proc = subprocess.Popen(
                [str(lamps.exe_v1), "--ws", gw.url, "--device-id", "plain"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            dev = await gw.wait_for_device("plain", timeout=60)
            with pytest.raises(ToolError, match="start the simulator with --ota-dir DIR"):
                await dev.call(
                    OTA_TOOL, {"url": "http://127.0.0.1:1/x", "sha256": "0" * 64, "size": 1, "version": "1"}
                )
        finally:
            proc.kill()
            proc.wait()


def test_codegen_ota_command_rolls_devices_and_prints_each(lamps: OtaLamps, tmp_path: Path) -> None:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "mcpgen.codegen.cli",
        "ota",
        str(lamps.exe_v2),
        "--port",
        str(port),
        "--devices",
        "3",
        "--batch",
        "2",
        "--wait",
        "60",
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as cli:
        assert cli.stdout is not None
        first = cli.stdout.readline()  # the gateway listens once this line is out
        assert f"gateway ws://127.0.0.1:{port}/" in first, first
        with fleet(lamps.exe_v1, f"ws://127.0.0.1:{port}/", ["c1", "c2", "c3"], tmp_path):
            out, _ = cli.communicate(timeout=120)
    assert cli.returncode == 0, out
    lines = out.splitlines()
    progress = [line for line in lines if line.startswith("[")]
    assert len(progress) == 3 and [p[:5] for p in progress] == ["[1/3]", "[2/3]", "[3/3]"], out
    for line in progress:
        assert f" updated 0.3.1 ({lamps.fingerprint_v1}) -> 0.4.0 ({lamps.fingerprint_v2})" in line.replace(
            "  ", " "
        ), line
    assert lines[-1].startswith("3 devices in ") and lines[-1].endswith(": 3 updated"), lines[-1]
