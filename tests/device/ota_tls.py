"""Test certificates for HTTPS image servers: a CA and a server certificate it signs for
``localhost``. Made with the `cryptography` package when it is importable, else with the
`openssl` command; the tests that need them skip when neither is there."""

from __future__ import annotations

import datetime
import importlib.util
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HOSTNAME = "localhost"  # mbedtls 2 matches DNS names only, so the URL names the host, not 127.0.0.1


@dataclass(frozen=True)
class Pki:
    ca: Path  # the CA certificate (PEM) devices trust
    cert: Path  # the server certificate for HOSTNAME, signed by the CA
    key: Path  # its private key


def available() -> bool:
    return importlib.util.find_spec("cryptography") is not None or shutil.which("openssl") is not None


def make_pki(out: Path, name: str = "mcpgen test CA") -> Pki:
    out.mkdir(parents=True, exist_ok=True)
    if importlib.util.find_spec("cryptography") is not None:
        return _with_cryptography(out, name)
    return _with_openssl(out, name)


def _with_cryptography(out: Path, name: str) -> Pki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    until = now + datetime.timedelta(days=1)
    since = now - datetime.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(since)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOSTNAME)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(since)
        .not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOSTNAME)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pki = Pki(out / "ca.pem", out / "server.pem", out / "server.key")
    pki.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    pki.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pki.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return pki


def _with_openssl(out: Path, name: str) -> Pki:
    pki = Pki(out / "ca.pem", out / "server.pem", out / "server.key")
    ca_key, csr, ext = out / "ca.key", out / "server.csr", out / "server.ext"
    ext.write_text(f"subjectAltName=DNS:{HOSTNAME}\n", encoding="ascii")

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "1",
        "-subj",
        f"/CN={name}",
        "-keyout",
        str(ca_key),
        "-out",
        str(pki.ca),
    )
    run(
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-subj",
        f"/CN={HOSTNAME}",
        "-keyout",
        str(pki.key),
        "-out",
        str(csr),
    )
    run(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(pki.ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        str(ext),
        "-out",
        str(pki.cert),
    )
    return pki
