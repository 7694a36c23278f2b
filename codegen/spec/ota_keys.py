"""The verification key of signed OTA images (``device.ota.public_key``, docs/ota.md).

Read by the spec check, so a missing or wrong key is a located spec error. Two forms are
accepted, both public: what ``espsecure extract_public_key --version 1`` writes (64 raw
bytes, the P-256 point's X then Y, big-endian: what ESP-IDF compiles into the app) and a PEM
``PUBLIC KEY`` of a P-256 key (``openssl ec -pubout``). The PEM is decoded by hand: a P-256
SubjectPublicKeyInfo is a fixed 26-byte prefix and the uncompressed point, so the generator
needs no crypto library to read it (signing does: codegen.ota_sign, through espsecure).
A private key is refused without a word of its content.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

#: DER of SubjectPublicKeyInfo{ecPublicKey, prime256v1} up to the BIT STRING's content.
_P256_SPKI_PREFIX = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")
_PEM_BEGIN = b"-----BEGIN PUBLIC KEY-----"
_PEM_END = b"-----END PUBLIC KEY-----"
RAW_KEY_SIZE = 64


class KeyProblem(ValueError):
    """Why the file is not a usable P-256 public key (the message never quotes the file)."""


def read_public_key(path: Path) -> bytes:
    """The 64-byte point (X then Y) of the P-256 public key in ``path``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeyProblem(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) == RAW_KEY_SIZE:
        return data
    if b"PRIVATE KEY" in data:
        raise KeyProblem(
            f"{path} holds a private key; the spec names the public key only (extract it with "
            f"`espsecure extract_public_key --version 1 --keyfile KEY.pem PUBLIC.bin`) and the "
            "private key stays with the signer"
        )
    start, end = data.find(_PEM_BEGIN), data.find(_PEM_END)
    if start < 0 or end < start:
        raise KeyProblem(
            f"{path} is neither a 64-byte raw P-256 public key nor a PEM `PUBLIC KEY` ({len(data)} bytes)"
        )
    try:
        der = base64.b64decode(b"".join(data[start + len(_PEM_BEGIN) : end].split()), validate=True)
    except (binascii.Error, ValueError):
        raise KeyProblem(f"{path}: the PEM block is not valid base64") from None
    if (
        len(der) != len(_P256_SPKI_PREFIX) + 1 + RAW_KEY_SIZE
        or not der.startswith(_P256_SPKI_PREFIX)
        or der[len(_P256_SPKI_PREFIX)] != 0x04
    ):
        raise KeyProblem(
            f"{path} is not an uncompressed ECDSA P-256 (prime256v1) public key; ESP-IDF's "
            "signed apps use that curve only"
        )
    return der[len(_P256_SPKI_PREFIX) + 1 :]
