"""Signing OTA images for devices whose spec says ``device.ota: {public_key: ...}`` (docs/ota.md,
"Signed images").

The signature is ESP-IDF's own signed-app block of the ECDSA scheme (the scheme of
``CONFIG_SECURE_SIGNED_APPS_NO_SECURE_BOOT`` with ``CONFIG_SECURE_SIGNED_APPS_ECDSA_SCHEME``
on the ESP32): 68 bytes appended to the image, a 32-bit version word (0) and the raw r and
s of an ECDSA P-256 / SHA-256 signature of everything before it. ``espsecure sign_data
--version 1`` from the ``esptool`` package writes it, so the same tool signs simulator
images and ``firmware.bin``; the host simulator verifies it with mbedTLS, ESP-IDF in
``esp_ota_end``. Signing is the generator's job: the runtime never holds a private key,
and its dependency list does not grow (the devices verify; the backend only serves bytes).

The key is read from a file path, never printed; a missing file, or one that is not an
ECDSA P-256 private key, is a one-line error that says how to make one.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from mcpgen.codegen.errors import BuildError

SIGNATURE_BLOCK = 68  # version word + r + s
INSTALL_HINT = "pip install 'mcpgen[esp32]' (or: pip install esptool)"
KEYGEN_HINT = (
    'generate one with `espsecure generate_signing_key --version 1 KEY.pem` (docs/ota.md, "Signed images")'
)


def check_signing_key(key: Path) -> None:
    """Raises :class:`BuildError` unless ``key`` is a readable ECDSA P-256 private key (PEM)."""
    try:
        data = key.read_bytes()
    except FileNotFoundError:
        raise BuildError(f"--sign-key {key}: no such file; {KEYGEN_HINT}") from None
    except OSError as exc:
        raise BuildError(f"--sign-key {key}: cannot read it ({exc.strerror or exc})") from None
    try:
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:
        raise BuildError(
            f"signing needs esptool (and the cryptography package it brings): {INSTALL_HINT}"
        ) from None
    try:
        sk = load_pem_private_key(data, password=None)
    except (ValueError, TypeError):  # never the key's bytes in the message
        raise BuildError(f"--sign-key {key}: not an unencrypted PEM private key; {KEYGEN_HINT}") from None
    if not isinstance(sk, ec.EllipticCurvePrivateKey) or not isinstance(sk.curve, ec.SECP256R1):
        raise BuildError(
            f"--sign-key {key}: not an ECDSA P-256 (prime256v1) key, the only curve of "
            f"ESP-IDF's signed apps; {KEYGEN_HINT}"
        )


def _espsecure_command() -> str:
    """``sign-data`` on esptool 5 (which deprecates ``sign_data``), ``sign_data`` before."""
    try:
        major = int(metadata.version("esptool").split(".", 1)[0])
    except (metadata.PackageNotFoundError, ValueError):
        raise BuildError(f"esptool is not installed: signing uses its espsecure; {INSTALL_HINT}") from None
    return "sign-data" if major >= 5 else "sign_data"


def sign_image(image: Path, key: Path, out: Path) -> Path:
    """Writes ``image`` with ESP-IDF's ECDSA signature block appended to ``out``; returns ``out``."""
    check_signing_key(key)
    cmd = [
        sys.executable,
        "-m",
        "espsecure",
        _espsecure_command(),
        "--version",
        "1",
        "--keyfile",
        str(key),
        "--output",
        str(out),
        str(image),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        lines = [
            ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip() and "Deprecated" not in ln
        ]
        why = lines[-1] if lines else f"exit {proc.returncode}"
        raise BuildError(f"espsecure could not sign {image}: {why}")
    return out


def signed_copy(image: Path, key: Path) -> Path:
    """A signed copy of ``image`` in a fresh temporary directory, named like ``image`` (the
    URL the devices fetch ends with that name); the caller removes it."""
    out = Path(tempfile.mkdtemp(prefix="mcpgen-ota-")) / image.name
    return sign_image(image, key, out)
