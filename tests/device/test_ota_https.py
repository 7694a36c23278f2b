"""Images served over HTTPS (docs/ota.md, "HTTPS"): the image server with a certificate, the
simulator verifying it against --ota-ca; a certificate the device does not trust is a tool
error (ToolError), the download never starts, and the device stays on its image in the same
session."""

from __future__ import annotations

from pathlib import Path

import pytest
from ota_fleet import OtaLamps, build_ota_lamps, fleet, ota_state
from ota_tls import HOSTNAME, available, make_pki

from mcpgen.runtime import Gateway, ToolError
from mcpgen.runtime.ota import OTA_TOOL, ImageServer, read_image, rollout, server_tls

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not available(), reason="needs the cryptography package or openssl"),
]


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> OtaLamps:
    return build_ota_lamps(tmp_path_factory.mktemp("ota_https_lamps"))


def on_v1(lamps: OtaLamps, gw: Gateway, tmp: Path, device_id: str) -> None:
    dev = gw.connected[device_id]
    assert not dev.closed and dev.fingerprint == lamps.fingerprint_v1
    assert ota_state(tmp, device_id) == "active=a\npending=0\nattempts=0\n"


async def test_rollout_over_https(lamps: OtaLamps, tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    ids = ["tls-1", "tls-2"]
    image = read_image(lamps.exe_v2)
    tls = server_tls(pki.cert, pki.key)
    async with (
        Gateway(host="127.0.0.1", port=0) as gw,
        ImageServer(image, "127.0.0.1", tls=tls, url_host=HOSTNAME) as server,
    ):
        assert server.url == f"https://{HOSTNAME}:{server.port}/{lamps.exe_v2.name}"
        with fleet(lamps.exe_v1, gw.url, ids, tmp_path, "--ota-ca", str(pki.ca)):
            for i in ids:
                await gw.wait_for_device(i, timeout=60)
            report = await rollout(gw, ids, image, server.url, batch=2, deadline=60)
            assert [r.outcome for r in report.results] == ["updated"] * 2, [r.line() for r in report.results]
            for i in ids:
                assert gw.connected[i].fingerprint == lamps.fingerprint_v2
                assert ota_state(tmp_path, i) == "active=b\npending=0\nattempts=0\n"
    assert server.requests == 2 and server.bytes_served == 2 * image.size


async def test_a_certificate_the_device_does_not_trust_fails_cleanly(lamps: OtaLamps, tmp_path: Path) -> None:
    trusted = make_pki(tmp_path / "trusted", "the CA devices trust")
    other = make_pki(tmp_path / "other", "another CA")  # same host name, another issuer
    image = read_image(lamps.exe_v2)
    untrusted = server_tls(other.cert, other.key)
    async with (
        Gateway(host="127.0.0.1", port=0) as gw,
        ImageServer(image, "127.0.0.1", tls=untrusted, url_host=HOSTNAME) as server,
    ):
        with fleet(lamps.exe_v1, gw.url, ["tls-x"], tmp_path, "--ota-ca", str(trusted.ca)):
            device = await gw.wait_for_device("tls-x", timeout=60)
            args = {"url": server.url, "sha256": image.sha256, "size": image.size, "version": image.version}
            with pytest.raises(ToolError, match=r"TLS: the certificate of localhost:\d+ is not trusted"):
                await device.call(OTA_TOOL, args, timeout=30)
            report = await rollout(gw, ["tls-x"], image, server.url, deadline=30)
            assert [r.outcome for r in report.results] == ["failed"]
            assert "is not trusted" in report.results[0].detail
            assert gw.connected["tls-x"] is device  # same session: the device never rebooted
            on_v1(lamps, gw, tmp_path, "tls-x")
            assert await device.call("self.light.set_rgb", {"r": 1, "g": 2, "b": 3}) is True
    assert server.requests == 0  # no GET: the devices hung up in the handshake
    assert not (tmp_path / "tls-x.ota" / "slot-b").exists()  # nothing was kept of the download


async def test_https_without_a_ca_is_refused_with_the_fix(lamps: OtaLamps, tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    image = read_image(lamps.exe_v2)
    async with (
        Gateway(host="127.0.0.1", port=0) as gw,
        ImageServer(image, "127.0.0.1", tls=server_tls(pki.cert, pki.key), url_host=HOSTNAME) as server,
    ):
        with fleet(lamps.exe_v1, gw.url, ["tls-n"], tmp_path):
            device = await gw.wait_for_device("tls-n", timeout=60)
            args = {"url": server.url, "sha256": image.sha256, "size": image.size, "version": image.version}
            with pytest.raises(ToolError, match="start the simulator with --ota-ca CA.pem"):
                await device.call(OTA_TOOL, args, timeout=30)
            on_v1(lamps, gw, tmp_path, "tls-n")
    assert server.requests == 0
