"""The backend half of OTA without devices: the image server's write timeout and shared
buffer, a rollout's device list, URL checks, the "updated" rule, the progress lines
(docs/ota.md). The devices' half runs in tests/device/test_ota_signed.py."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import tracemalloc
import urllib.request
from pathlib import Path
from typing import Any, Optional

import pytest

from mcpgen.runtime.errors import ToolError
from mcpgen.runtime.ota import (
    OTA_TOOL,
    DeviceResult,
    FirmwareImage,
    ImageServer,
    UnsafeUrl,
    check_url,
    refusal_reason,
    rollout,
)

NEW_FP, OLD_FP = "77c2aaaaaaaaaaaa", "b06abbbbbbbbbbbb"


def image_of(size: int, tmp: Path) -> FirmwareImage:
    data = bytes(range(256)) * (size // 256)
    path = tmp / "fw.bin"
    path.write_bytes(data)
    return FirmwareImage(path, data, hashlib.sha256(data).hexdigest(), "lamp", "0.5.0", NEW_FP)


class FakeDevice:
    """A device handle: ``call`` of the update tool "reboots" it onto the new image, after
    fetching the URL over HTTP when ``fetch`` (as a real device does)."""

    def __init__(self, fleet: FakeFleet, device_id: str, version: str, fingerprint: str) -> None:
        self.fleet, self.device_id = fleet, device_id
        self.server_info = {"name": "lamp", "version": version}
        self.fingerprint = fingerprint
        self.closed = False

    async def call(self, tool: str, args: dict[str, Any], *, timeout: Optional[float] = None) -> str:
        assert tool == OTA_TOOL
        self.fleet.calls.append((self.device_id, args))
        if self.fleet.refuse:
            raise ToolError(self.fleet.refuse)
        if self.fleet.fetch:
            await asyncio.to_thread(lambda: urllib.request.urlopen(args["url"], timeout=10).read())
        self.closed = True
        self.fleet.devices[self.device_id] = FakeDevice(self.fleet, self.device_id, "0.5.0", NEW_FP)
        return "installed"

    async def wait_closed(self) -> None:
        return None


class FakeFleet:
    """What a rollout needs of a fleet worker (mcpgen.runtime.ota.SharedFleet)."""

    def __init__(self, ids: list[str], *, fetch: bool = True, refuse: str = "") -> None:
        self.devices = {i: FakeDevice(self, i, "0.4.0", OLD_FP) for i in ids}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fetch, self.refuse = fetch, refuse

    def is_online(self, device_id: str) -> Optional[bool]:
        return device_id in self.devices

    async def device(self, device_id: str, *, timeout: Optional[float] = None) -> Any:
        return self.devices[device_id]


async def test_a_device_named_twice_is_updated_once(tmp_path: Path) -> None:
    image = image_of(4096, tmp_path)
    fleet = FakeFleet(["a", "b"])
    async with ImageServer(image) as server:
        report = await rollout(fleet, ["a", "b", "a", "b", "a"], image, server.url, batch=5, server=server)
    assert [r.device_id for r in report.results] == ["a", "b"]
    assert [d for d, _ in fleet.calls] == ["a", "b"]
    assert [r.outcome for r in report.results] == ["updated", "updated"]


async def test_updated_only_when_the_server_saw_the_whole_image_fetched(tmp_path: Path) -> None:
    image = image_of(4096, tmp_path)
    fleet = FakeFleet(["a"], fetch=False)  # reports the new image without downloading it
    async with ImageServer(image) as server:
        report = await rollout(fleet, ["a"], image, server.url, server=server)
        [r] = report.results
        assert r.outcome == "failed" and "never handed it the whole image" in r.detail
        assert server.requests == 0
        fleet = FakeFleet(["b"])
        [ok] = (await rollout(fleet, ["b"], image, server.url, server=server)).results
        assert ok.outcome == "updated" and server.completed and server.fetched(fleet.calls[0][1]["url"])
        # Each device gets its own URL: one device's fetch does not count for another.
        assert not server.fetched(server.url_for("c"))


async def test_a_url_with_control_characters_is_refused_before_any_call(tmp_path: Path) -> None:
    image = image_of(4096, tmp_path)
    for bad in (
        "http://h/fw\r\nX-Injected: 1",
        "http://h/fw\n",
        "http://h/\x00fw",
        "http://h/\x7ffw",
        "http://h/\tfw",
    ):
        with pytest.raises(UnsafeUrl, match="control character"):
            check_url(bad)
        fleet = FakeFleet(["a"])
        with pytest.raises(UnsafeUrl):
            await rollout(fleet, ["a"], image, bad)
        assert fleet.calls == []  # nothing was asked of any device
    assert check_url("https://h:8/fw.bin?x=1%0d") == "https://h:8/fw.bin?x=1%0d"


async def test_allow_downgrade_is_sent_only_when_asked_and_refusals_are_typed(tmp_path: Path) -> None:
    image = image_of(4096, tmp_path)
    fleet = FakeFleet(["a"], fetch=False)
    await rollout(fleet, ["a"], image, "http://127.0.0.1:1/fw.bin")
    assert "allow_downgrade" not in fleet.calls[0][1]
    fleet = FakeFleet(["a"], fetch=False)
    await rollout(fleet, ["a"], image, "http://127.0.0.1:1/fw.bin", allow_downgrade=True)
    assert fleet.calls[0][1]["allow_downgrade"] is True
    refusal = "downgrade refused: the image carries version 0.2.0, this device runs 0.4.0"
    fleet = FakeFleet(["a"], refuse=refusal)
    [r] = (await rollout(fleet, ["a"], image, "http://127.0.0.1:1/fw.bin")).results
    assert (r.outcome, r.reason) == ("failed", "downgrade")
    for text, reason in [
        ("unsigned image: no signature block", "unsigned"),
        ("bad signature: the image is not signed with this device's key", "bad_signature"),
        ("truncated signature: 10 of the 68 bytes", "truncated_signature"),
        ("unsafe url: it holds a control character", "unsafe_url"),
        ("the image is for device 'x'", "other"),
    ]:
        assert refusal_reason(text) == reason


def test_skipped_and_offline_lines_say_what_they_know() -> None:
    skipped = DeviceResult("lamp-3", "skipped", detail="rollout halted: more than 0 failures")
    assert skipped.line() == "lamp-3  skipped  rollout halted: more than 0 failures"
    assert "()" not in DeviceResult("lamp-4", "offline", duration=0.2, detail="not connected").line()
    gone = DeviceResult("lamp-7", "offline", old_version="0.4.0", old_fingerprint=OLD_FP, duration=60.0)
    assert gone.line() == f"lamp-7  offline  0.4.0 ({OLD_FP}) -> (not back)  60.0s"
    failed = DeviceResult(
        "lamp-5", "failed", old_version="0.4.0", old_fingerprint=OLD_FP, detail="bad signature"
    )
    assert failed.line() == f"lamp-5  failed  0.4.0 ({OLD_FP}) -> (unchanged)  0.0s  bad signature"
    updated = DeviceResult("lamp-6", "updated", "0.4.0", "0.5.0", OLD_FP, NEW_FP, 1.25)
    assert updated.line() == f"lamp-6  updated  0.4.0 ({OLD_FP}) -> 0.5.0 ({NEW_FP})  1.2s"


def _readless_clients(port: int, n: int, path: str) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        socks.append(s)
    return socks


def test_slow_clients_share_the_image_buffer(tmp_path: Path) -> None:
    """Ten clients that read nothing of an 8 MiB image: the server's memory is about a chunk
    and a transport buffer each, not a copy of the image each (80 MiB before)."""
    size, clients = 8 * 1024 * 1024, 10

    async def main() -> int:
        image = image_of(size, tmp_path)
        async with ImageServer(image, write_timeout=60) as server:
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            socks = await asyncio.to_thread(_readless_clients, server.port, clients, server.path)
            try:
                while server.requests < clients:  # every request parsed and its body being written
                    await asyncio.sleep(0.05)
                for _ in range(20):  # let each writer fill what the kernel takes
                    await asyncio.sleep(0.05)
                grown = tracemalloc.get_traced_memory()[1] - base
            finally:
                tracemalloc.stop()
                for s in socks:
                    s.close()
        return grown

    loop = asyncio.SelectorEventLoop()  # the stdlib transport, whose buffer tracemalloc sees
    try:
        grown = loop.run_until_complete(main())
    finally:
        loop.close()
    print(
        f"\n{clients} readless clients of a {size >> 20} MiB image: {grown / 2**20:.2f} MiB allocated at peak"
    )
    assert grown < clients * 512 * 1024, f"{grown} bytes for {clients} clients"


async def test_a_stalled_reader_is_dropped_after_the_write_timeout(tmp_path: Path) -> None:
    image = image_of(8 * 1024 * 1024, tmp_path)
    async with ImageServer(image, write_timeout=0.5) as server:
        [sock] = await asyncio.to_thread(_readless_clients, server.port, 1, server.path)
        try:
            while server.dropped < 1:  # the state asserted, however long the machine takes
                await asyncio.sleep(0.05)
            assert server.bytes_served == 0 and not server.completed
            # (Reading on here would drain the megabytes the kernel already holds through
            # this socket's 4 KiB window: about 100 s on loopback, and it proves no more.)
        finally:
            sock.close()
