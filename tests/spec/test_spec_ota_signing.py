"""`device.ota: {public_key: ..., secure_version: N}`: signed OTA images only (docs/ota.md,
"Signed images"): the spec check reads the key (located errors), the generated header
carries it, the ESP32 project turns on ESP-IDF's signed-app check and anti-rollback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import esp32_ota
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.loader import load_spec_text
from mcpgen.codegen.spec.spec_errors import SpecErrors

cryptography = pytest.importorskip("cryptography")
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

BASE = """\
device:
  name: lamp
  version: 1.2.0{ota}
tools:
  - name: self.light.set
    description: Set the light.
    params:
      level: {{type: integer, min: 0, max: 100}}
"""


def spec(ota: str, source: str):  # type: ignore[no-untyped-def]
    return load_spec_text(BASE.format(ota=ota), source)


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    sk = ec.generate_private_key(ec.SECP256R1())
    pub = sk.public_key()
    nums = pub.public_numbers()
    out = {
        "private": tmp_path / "ota_key.pem",
        "pem": tmp_path / "ota_pub.pem",
        "raw": tmp_path / "ota_pub.bin",
        "rsa": tmp_path / "rsa_pub.pem",
    }
    out["private"].write_bytes(
        sk.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    out["pem"].write_bytes(
        pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    out["raw"].write_bytes(nums.x.to_bytes(32, "big") + nums.y.to_bytes(32, "big"))
    p384 = ec.generate_private_key(ec.SECP384R1()).public_key()
    out["rsa"].write_bytes(
        p384.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return out


def test_both_key_forms_give_the_same_point_and_the_fingerprint_of_ota_true(
    keys: dict[str, Path], tmp_path: Path
) -> None:
    source = str(tmp_path / "lamp.yaml")
    plain = spec("\n  ota: true", source)
    from_pem = spec("\n  ota:\n    public_key: ota_pub.pem\n    secure_version: 3", source)
    from_raw = spec("\n  ota: {public_key: ota_pub.bin}", source)
    assert from_pem.ota_signing is not None and from_raw.ota_signing is not None
    assert from_pem.ota_signing.public_key == from_raw.ota_signing.public_key == keys["raw"].read_bytes()
    assert (from_pem.ota_signing.secure_version, from_raw.ota_signing.secure_version) == (3, 0)
    assert plain.ota_signing is None and from_pem.device.ota is True
    # A build setting, not the tool surface: the fingerprint is that of `ota: true`.
    assert from_pem.fingerprint == from_raw.fingerprint == plain.fingerprint
    header = emit_cpp.emit(from_pem)[emit_cpp.HEADER_PATH]
    first = keys["raw"].read_bytes()[0]
    assert "#define MCPGEN_SPEC_OTA_SIGNED 1" in header
    assert "#define MCPGEN_SPEC_OTA_SECURE_VERSION 3" in header
    assert f"#define MCPGEN_SPEC_OTA_PUBLIC_KEY {{0x{first:02x}, " in header
    assert "MCPGEN_SPEC_OTA_SIGNED" not in emit_cpp.emit(plain)[emit_cpp.HEADER_PATH]


@pytest.mark.parametrize(
    ("ota", "path", "words"),
    [
        ("{public_key: missing.pem}", "device.ota.public_key", "cannot read"),
        ("{public_key: ota_key.pem}", "device.ota.public_key", "holds a private key"),
        ("{public_key: rsa_pub.pem}", "device.ota.public_key", "not an uncompressed ECDSA P-256"),
        (
            "{public_key: ota_pub.pem, secure_version: 33}",
            "device.ota.secure_version",
            "expected 0 to 32, got 33",
        ),
        ("{public_key: ota_pub.pem, signed: yes}", "device.ota.signed", ""),
        ("{secure_version: 1}", "device.ota", "public_key"),
        ('"yes"', "device.ota", "expected true or false"),
    ],
)
def test_a_wrong_ota_mapping_is_a_located_error(
    keys: dict[str, Path], tmp_path: Path, ota: str, path: str, words: str
) -> None:
    source = str(tmp_path / "lamp.yaml")
    with pytest.raises(SpecErrors) as exc:
        spec(f"\n  ota: {ota}", source)
    errors = [e for e in exc.value.errors if e.path == path]
    assert errors, exc.value.errors
    assert errors[0].line == 4 and errors[0].file == source
    assert words in errors[0].message, errors[0].message
    if ota == '"yes"':  # the hint names the other form
        assert "{public_key: KEY}" in errors[0].hint
    if "private key" in words:  # the key's content is never echoed
        secret = keys["private"].read_text().splitlines()[1]
        assert secret not in str(exc.value)


def test_the_esp32_project_enables_signed_apps_and_anti_rollback(
    keys: dict[str, Path], tmp_path: Path
) -> None:
    signed = spec("\n  ota: {public_key: ota_pub.pem, secure_version: 2}", str(tmp_path / "lamp.yaml"))
    text = esp32_ota.signed_sdkconfig(signed)
    for line in (
        "CONFIG_SECURE_SIGNED_APPS_NO_SECURE_BOOT=y",
        "CONFIG_SECURE_SIGNED_APPS_ECDSA_SCHEME=y",
        "CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT=y",
        "# CONFIG_SECURE_BOOT_BUILD_SIGNED_BINARIES is not set",
        f'CONFIG_SECURE_BOOT_VERIFICATION_KEY="{esp32_ota.VERIFICATION_KEY}"',
        "CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK=y",
        "CONFIG_BOOTLOADER_APP_SECURE_VERSION=2",
    ):
        assert line in text.splitlines(), line
    assert esp32_ota.signed_sdkconfig(spec("\n  ota: true", str(tmp_path / "lamp.yaml"))) == ""
    esp32_ota.require_signing_supported(signed, "esp32")
    for board in ("esp32s3", "esp32c3"):
        with pytest.raises(BuildError, match=f"on the esp32 only .the {board} signs apps with RSA"):
            esp32_ota.require_signing_supported(signed, board)


def test_the_generated_project_carries_the_raw_key(keys: dict[str, Path], tmp_path: Path) -> None:
    from mcpgen.codegen.targets.esp32 import generate_project

    spec_file = tmp_path / "lamp.yaml"
    spec_file.write_text(BASE.format(ota="\n  ota: {public_key: ota_pub.pem}"), encoding="utf-8")
    project = generate_project(spec_file, tmp_path / "out", log=lambda _m: None)
    assert (project / esp32_ota.VERIFICATION_KEY).read_bytes() == keys["raw"].read_bytes()
    assert "CONFIG_SECURE_SIGNED_APPS_ECDSA_SCHEME=y" in (project / "sdkconfig.defaults.esp32").read_text()
    assert "SECURE_SIGNED" not in (project / "sdkconfig.defaults").read_text()
