"""`codegen ota`'s refusals that need no device: an open gateway without a token, a URL with
control characters, a missing or wrong signing key, and devices that never come (docs/ota.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FP = "0123456789abcdef"


def image(tmp: Path) -> Path:
    path = tmp / "lamp-sim"
    path.write_text(f"#!/bin/sh\n# MCPGEN-OTA-IMAGE|desk-lamp|0.4.0|{FP}|\n", encoding="utf-8")
    return path


def codegen_ota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpgen.codegen.cli", "ota", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and "please report it" not in proc.stderr, proc.stderr
    return proc.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "lamp-gw.example"])
def test_a_gateway_beyond_loopback_needs_a_token(tmp_path: Path, host: str) -> None:
    err = one_line_error(codegen_ota(str(image(tmp_path)), "--host", host, "--port", "0", "--wait", "1"))
    assert f"--host {host}" in err and "--token" in err and "127.0.0.1" in err


def test_a_url_with_cr_lf_is_refused_before_anything_listens(tmp_path: Path) -> None:
    url = "http://h/fw\r\nX-Injected: 1"
    err = one_line_error(codegen_ota(str(image(tmp_path)), "--url", url, "--port", "0"))
    assert "--url" in err and "control character 0x0d" in err


def test_a_missing_or_wrong_signing_key_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    missing = str(tmp_path / "nope.pem")
    err = one_line_error(codegen_ota(str(image(tmp_path)), "--sign-key", missing, "--port", "0"))
    assert "--sign-key" in err and "no such file" in err and "generate_signing_key" in err
    wrong = tmp_path / "wrong.pem"
    secret_line = "MHcCAQEEIBrokenButSecretLookingMaterialAAAAAAAAAAAAAAAAAAAoAoGCCqGSM49"
    wrong.write_text(f"-----BEGIN EC PRIVATE KEY-----\n{secret_line}\n-----END EC PRIVATE KEY-----\n")
    err = one_line_error(codegen_ota(str(image(tmp_path)), "--sign-key", str(wrong), "--port", "0"))
    assert "not an unencrypted PEM private key" in err and secret_line not in err


def test_devices_that_never_come_end_in_one_line(tmp_path: Path) -> None:
    err = one_line_error(codegen_ota(str(image(tmp_path)), "--port", "0", "--devices", "2", "--wait", "0.5"))
    assert "0 of 2 device(s) connected" in err and "check that the simulators run" in err
