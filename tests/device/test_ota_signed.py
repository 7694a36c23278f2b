"""Signed OTA images and no downgrade, end to end on supervised host simulators (docs/ota.md,
"Signed images"): the desk lamp v1 and v2 built with `device.ota: {public_key: ...}`, images
signed by `espsecure` (through mcpgen.codegen.run.ota_sign), verified by the simulator with
mbedTLS before it installs anything."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from lamp_versions import V1_HANDLERS, V1_SPEC, V2_EXTRA_HANDLERS, V2_SPEC
from ota_fleet import fake_image, fleet, ota_state

from mcpgen.codegen.run.ota_sign import SIGNATURE_BLOCK, sign_image
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.targets.host import build_host
from mcpgen.runtime import Gateway, ToolError
from mcpgen.runtime.ota import OTA_TOOL, ImageServer, UnsafeUrl, read_image, rollout

pytest.importorskip("espsecure")
pytestmark = pytest.mark.slow
FLEET = 20
ON_A = "active=a\npending=0\nattempts=0\n"


@dataclass
class SignedLamps:
    exe_v1: Path  # 0.3.1
    exe_v2: Path  # 0.4.0
    fingerprint_v1: str
    fingerprint_v2: str
    key: Path  # the private key whose public half both builds carry
    other_key: Path  # a key the devices do not know
    out: Path


def espsecure(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "espsecure", *args], check=True, capture_output=True)


def signed_spec(text: str, version: str, key: str) -> str:
    line = f"  version: {version}\n"
    assert line in text
    return text.replace(line, f"{line}  ota:\n    public_key: {key}\n", 1)


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> SignedLamps:
    out = tmp_path_factory.mktemp("signed_lamps")
    key, other = out / "ota_key.pem", out / "other_key.pem"
    espsecure("generate_signing_key", "--version", "1", str(key))  # the commands docs/ota.md shows
    espsecure("generate_signing_key", "--version", "1", str(other))
    espsecure("extract_public_key", "--version", "1", "--keyfile", str(key), str(out / "ota_pub.bin"))
    specs = []
    for name, src, version, handlers in (
        ("v1", V1_SPEC, "0.3.1", V1_HANDLERS.read_text(encoding="utf-8")),
        (
            "v2",
            V2_SPEC,
            "0.4.0",
            V1_HANDLERS.read_text(encoding="utf-8") + "\n" + V2_EXTRA_HANDLERS.read_text(encoding="utf-8"),
        ),
    ):
        spec = out / name / "desk_lamp.yaml"
        spec.parent.mkdir()
        text = signed_spec(src.read_text(encoding="utf-8"), version, "../ota_pub.bin")
        spec.write_text(text, encoding="utf-8")
        spec.with_name("desk_lamp_handlers.cpp").write_text(handlers, encoding="utf-8")
        specs.append(spec)
    exes = [build_host(s, s.parent / "build", log=lambda _m: None) for s in specs]
    fps = [load_spec(s).fingerprint for s in specs]
    return SignedLamps(exes[0], exes[1], fps[0], fps[1], key, other, out)


def signed(lamps: SignedLamps, exe: Path, name: str, key: Path | None = None) -> Path:
    target = lamps.out / name / exe.name
    target.parent.mkdir(exist_ok=True)
    return sign_image(exe, key or lamps.key, target)


async def test_a_signed_rollout_of_20_simulators(lamps: SignedLamps, tmp_path: Path) -> None:
    ids = [f"lamp-{i:02d}" for i in range(FLEET)]
    image = read_image(signed(lamps, lamps.exe_v2, "v2-signed"))
    assert image.size == lamps.exe_v2.stat().st_size + SIGNATURE_BLOCK
    async with Gateway(host="127.0.0.1", port=0) as gw, ImageServer(image) as server:
        with fleet(lamps.exe_v1, gw.url, ids, tmp_path):
            for i in ids:
                await gw.wait_for_device(i, timeout=120)
            lines: list[str] = []
            report = await rollout(
                gw,
                ids,
                image,
                server.url,
                batch=5,
                deadline=120,
                server=server,
                on_result=lambda r: lines.append(r.line()),
            )
            assert [r.outcome for r in report.results] == ["updated"] * FLEET, lines
            assert len(server.completed) == FLEET  # each device fetched the whole image at its own URL
            for i in ids:
                assert gw.connected[i].fingerprint == lamps.fingerprint_v2
                assert ota_state(tmp_path, i) == "active=b\npending=0\nattempts=0\n"


def assert_nothing_installed(lamps: SignedLamps, gw: Gateway, tmp: Path, ids: list[str]) -> None:
    for i in ids:
        assert gw.connected[i].fingerprint == lamps.fingerprint_v1 and not gw.connected[i].closed
        assert ota_state(tmp, i) == ON_A
        assert not (tmp / f"{i}.ota" / "slot-b").exists()


async def test_unsigned_wrongly_signed_and_cut_images_are_refused_everywhere(
    lamps: SignedLamps, tmp_path: Path
) -> None:
    ids = ["bad-1", "bad-2", "bad-3"]
    good = signed(lamps, lamps.exe_v2, "v2-good").read_bytes()
    truncated = tmp_path / "img" / "truncated"
    truncated.parent.mkdir()
    truncated.write_bytes(good[:-10])
    junk_sig = tmp_path / "img" / "junk-sig"
    junk_sig.write_bytes(lamps.exe_v2.read_bytes() + b"\0\0\0\0" + b"\x55" * 64)
    cases = [
        (lamps.exe_v2, "unsigned", "unsigned image: no signature block"),
        (
            signed(lamps, lamps.exe_v2, "v2-other", lamps.other_key),
            "bad_signature",
            "bad signature: the image is not signed with this device's key",
        ),
        (junk_sig, "bad_signature", "bad signature"),
        (truncated, "truncated_signature", "truncated signature: 58 of the 68 bytes"),
        # The reproduction: a shell script that carries the marker text.
        (
            fake_image(
                tmp_path / "img" / "script",
                name="desk-lamp",
                version="0.4.0",
                fingerprint=lamps.fingerprint_v2,
                body="echo owned > /tmp/owned",
            ),
            "unsigned",
            "unsigned image",
        ),
    ]
    async with Gateway(host="127.0.0.1", port=0) as gw:
        with fleet(lamps.exe_v1, gw.url, ids, tmp_path):
            for i in ids:
                await gw.wait_for_device(i, timeout=120)
            sessions = {i: gw.connected[i] for i in ids}
            for path, reason, words in cases:
                image = read_image(path)
                async with ImageServer(image) as server:
                    report = await rollout(
                        gw, ids, image, server.url, batch=3, max_failures=len(ids), deadline=60, server=server
                    )
                for r in report.results:
                    assert (r.outcome, r.reason) == ("failed", reason), (path.name, r.line())
                    assert words in r.detail, (path.name, r.detail)
                assert_nothing_installed(lamps, gw, tmp_path, ids)
                assert all(gw.connected[i] is sessions[i] for i in ids)  # nothing rebooted


async def test_a_url_with_cr_lf_is_refused_by_the_backend_and_by_the_device(
    lamps: SignedLamps, tmp_path: Path
) -> None:
    ids = ["url-1", "url-2"]
    image = read_image(signed(lamps, lamps.exe_v2, "v2-url"))
    async with Gateway(host="127.0.0.1", port=0) as gw, ImageServer(image) as server:
        with fleet(lamps.exe_v1, gw.url, ids, tmp_path):
            for i in ids:
                await gw.wait_for_device(i, timeout=120)
            injected = server.url + "\r\nX-Injected: 1"
            with pytest.raises(UnsafeUrl):
                await rollout(gw, ids, image, injected)
            for i in ids:  # a backend that skips the check: the device refuses before connecting
                # (NUL never reaches the handler: the core refuses it in any string argument.)
                for bad, words in (
                    (injected, "^unsafe url: it holds a control character"),
                    (server.url + "\n", "^unsafe url"),
                    (server.url + "\x7f", "^unsafe url"),
                    (server.url + "\t", "^unsafe url"),
                    (server.url + "\x00x", "NUL"),
                ):
                    with pytest.raises(ToolError, match=words):
                        await gw.connected[i].call(
                            OTA_TOOL,
                            {
                                "url": bad,
                                "sha256": image.sha256,
                                "size": image.size,
                                "version": image.version,
                            },
                            timeout=30,
                        )
            assert server.requests == 0
            assert_nothing_installed(lamps, gw, tmp_path, ids)


async def test_a_downgrade_is_refused_unless_the_rollout_allows_it(
    lamps: SignedLamps, tmp_path: Path
) -> None:
    ids = ["down-1", "down-2"]
    older = read_image(signed(lamps, lamps.exe_v1, "v1-signed"))
    async with Gateway(host="127.0.0.1", port=0) as gw, ImageServer(older) as server:
        with fleet(lamps.exe_v2, gw.url, ids, tmp_path):
            for i in ids:
                await gw.wait_for_device(i, timeout=120)
            report = await rollout(gw, ids, older, server.url, batch=2, max_failures=2, deadline=60)
            for r in report.results:
                assert (r.outcome, r.reason) == ("failed", "downgrade"), r.line()
                assert "the image carries version 0.3.1, this device runs 0.4.0" in r.detail
            for i in ids:
                assert gw.connected[i].fingerprint == lamps.fingerprint_v2
                assert ota_state(tmp_path, i) == ON_A and not (tmp_path / f"{i}.ota" / "slot-b").exists()
            report = await rollout(gw, ids, older, server.url, batch=2, deadline=120, allow_downgrade=True)
            assert [r.outcome for r in report.results] == ["updated", "updated"]
            assert all(gw.connected[i].fingerprint == lamps.fingerprint_v1 for i in ids)


async def test_missing_ota_dir_parents_are_created(lamps: SignedLamps, tmp_path: Path) -> None:
    deep = tmp_path / "not" / "yet" / "there"
    async with Gateway(host="127.0.0.1", port=0) as gw:
        with open(tmp_path / "sim.log", "wb") as log:
            proc = subprocess.Popen(
                [str(lamps.exe_v1), "--ws", gw.url, "--device-id", "deep", "--ota-dir", str(deep)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            dev = await gw.wait_for_device("deep", timeout=120)
            assert dev.fingerprint == lamps.fingerprint_v1
            assert (deep / "state").read_text() == ON_A and (deep / "slot-a").exists()
        finally:
            proc.terminate()
            proc.wait()


def test_codegen_ota_signs_the_image_and_rolls_it(lamps: SignedLamps, tmp_path: Path) -> None:
    from test_ota import free_port

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
        "2",
        "--batch",
        "2",
        "--wait",
        "120",
        "--deadline",
        "120",
        "--sign-key",
        str(lamps.key),
    ]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as cli:
        assert cli.stdout is not None
        first = cli.stdout.readline()
        assert f"gateway ws://127.0.0.1:{port}/" in first, first
        with fleet(lamps.exe_v1, f"ws://127.0.0.1:{port}/", ["s1", "s2"], tmp_path):
            out, _ = cli.communicate(timeout=300)
    assert cli.returncode == 0, out
    assert "bytes, signed) at http://" in out, out
    assert out.splitlines()[-1].endswith(": 2 updated"), out
    assert "BEGIN" not in out and "PRIVATE" not in out  # the key is never printed
