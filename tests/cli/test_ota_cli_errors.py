"""`codegen ota` refuses unusable --mqtt and --cert values with the fix, before touching devices."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mcpgen.codegen.cli import main


def _image(tmp: Path) -> Path:
    path = tmp / "image"
    path.write_text("#!/bin/sh\n# MCPGEN-OTA-IMAGE|desk-lamp|0.4.0|0123456789abcdef|\n", encoding="utf-8")
    return path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--mqtt", "broker:port"],
            "--mqtt broker:port: expected HOST or HOST:PORT, e.g. --mqtt 127.0.0.1:1883",
        ),
        (["--mqtt", "127.0.0.1:{closed}"], "--mqtt 127.0.0.1:{closed}: cannot use the broker:"),
        (
            ["--cert", "{tmp}/missing.pem", "--port", "0"],
            "--cert {tmp}/missing.pem: cannot load the certificate and key:",
        ),
        (["--cert", "{tmp}/image", "--port", "0"], "expected PEM files (pass the key with --key"),
    ],
)
def test_unusable_options_are_named(
    args: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {"tmp": str(tmp_path), "closed": str(_closed_port())}
    argv = ["ota", str(_image(tmp_path)), *(a.format(**values) for a in args)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert expected.format(**values) in err, err
