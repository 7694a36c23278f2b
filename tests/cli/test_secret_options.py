"""Secrets never need the command line (issue 40, item 3): every token and secret option
also reads from a file (``--...-file``) or an environment variable, and a value given on
the command line is warned about. :mod:`mcpgen.secret_options` is the one reader; each
front door (bridge, console, ota, the HMAC minting tool) is tried through its own parser.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.runtime import HmacAuth, TokenAuth
from mcpgen.runtime.auth import Handshake
from mcpgen.runtime.bridge import cli as bridge_cli
from mcpgen.runtime.bridge.attach import device_authenticator, usage_error
from mcpgen.runtime.console import cli as console_cli
from mcpgen.secret_options import (
    AUTH_TOKEN,
    HMAC_SECRET,
    MAX_SECRET_FILE,
    SecretError,
    SecretOption,
    add_secret_argument,
    resolve_secret,
)

TOKEN = SecretOption("--token", "MCPGEN_TEST_TOKEN", "the test token")


def private(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def parse(option: SecretOption, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_secret_argument(parser, option, metavar="VALUE", help="for the test")
    return parser.parse_args(argv)


def resolved(option: SecretOption, *argv: str, env: dict[str, str] | None = None) -> tuple[object, list[str]]:
    warnings: list[str] = []
    value = resolve_secret(parse(option, *argv), option, environ=env or {}, warn=warnings.append)
    return value, warnings


# -- the shared reader ---------------------------------------------------------------------------


def test_a_file_gives_the_secret_without_its_line_end(tmp_path: Path) -> None:
    path = private(tmp_path / "token", "s3cret\n")
    assert resolved(TOKEN, "--token-file", str(path)) == ("s3cret", [])
    private(path, "s3cret\r\n")
    assert resolved(TOKEN, "--token-file", str(path)) == ("s3cret", [])
    private(path, "  spaces are part of it  \n")  # only the line end goes
    assert resolved(TOKEN, "--token-file", str(path))[0] == "  spaces are part of it  "


def test_a_file_of_several_values_has_one_per_line(tmp_path: Path) -> None:
    path = private(tmp_path / "tokens", "# devices\nkitchen=abc\n\n  hall=def  \n*\n")
    assert resolved(AUTH_TOKEN, "--auth-token-file", str(path)) == (["kitchen=abc", "hall=def", "*"], [])


def test_the_environment_is_read_when_no_option_is_given(tmp_path: Path) -> None:
    assert resolved(TOKEN, env={"MCPGEN_TEST_TOKEN": "from-env"}) == ("from-env", [])
    assert resolved(TOKEN) == (None, [])
    assert resolved(AUTH_TOKEN) == ([], [])
    env = {"MCPGEN_AUTH_TOKEN": "kitchen=abc\nhall=def"}
    assert resolved(AUTH_TOKEN, env=env) == (["kitchen=abc", "hall=def"], [])


def test_precedence_option_or_file_then_environment(tmp_path: Path) -> None:
    path = private(tmp_path / "token", "from-file\n")
    env = {"MCPGEN_TEST_TOKEN": "from-env"}
    assert resolved(TOKEN, "--token-file", str(path), env=env)[0] == "from-file"
    value, warnings = resolved(TOKEN, "--token", "from-argv", env=env)
    assert value == "from-argv" and len(warnings) == 1
    with pytest.raises(SecretError, match=r"--token and --token-file are both given: keep only --token-file"):
        resolved(TOKEN, "--token", "x", "--token-file", str(path))


def test_a_secret_on_the_command_line_is_warned_about_in_one_line() -> None:
    value, warnings = resolved(TOKEN, "--token", "s3cret")
    assert value == "s3cret"
    assert warnings == [
        "--token on the command line can be read by every local user (ps); "
        "use --token-file FILE or the MCPGEN_TEST_TOKEN environment variable"
    ]
    assert "s3cret" not in warnings[0]


def test_the_warning_goes_to_stderr_once(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(TOKEN, "--token", "s3cret")
    assert resolve_secret(args, TOKEN, environ={}) == "s3cret"
    assert resolve_secret(args, TOKEN, environ={}) == "s3cret"  # resolved once, warned once
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: --token on the command line")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            None,
            r"--token-file {path}: no such file; write the test token to it \(chmod 600 {path}\) "
            r"or give the MCPGEN_TEST_TOKEN environment variable",
        ),
        ("", r"--token-file {path}: the file is empty; expected the test token"),
        ("\n", r"--token-file {path}: the file is empty"),
        (b"\xff\xfe", r"--token-file {path}: not UTF-8 text \(byte 0\)"),
        ("x" * (MAX_SECRET_FILE + 1), r"--token-file {path}: larger than 64 KiB"),
    ],
)
def test_an_unusable_file_is_an_error_naming_it(
    tmp_path: Path, content: str | bytes | None, expected: str
) -> None:
    path = tmp_path / "token"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        private(path, content)
    with pytest.raises(SecretError, match=expected.format(path=re.escape(str(path)))):
        resolved(TOKEN, "--token-file", str(path))


def test_a_directory_or_unreadable_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SecretError, match=r"is a directory; expected a file holding the test token"):
        resolved(TOKEN, "--token-file", str(tmp_path))
    path = private(tmp_path / "token", "x")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything
        return
    with pytest.raises(SecretError, match=r"cannot read it: Permission denied"):
        resolved(TOKEN, "--token-file", str(path))


def test_a_world_readable_file_works_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("s3cret\n")
    path.chmod(0o644)
    value, warnings = resolved(TOKEN, "--token-file", str(path))
    assert value == "s3cret"
    assert warnings == [
        f"--token-file {path} is readable by every local user (mode 644); make it private: chmod 600 {path}"
    ]


def test_a_pipe_works_as_a_file(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.write(write, b"from-a-pipe\n")
    os.close(write)
    try:  # e.g. --token-file <(pass show mcpgen/token)
        assert resolved(TOKEN, "--token-file", f"/dev/fd/{read}") == ("from-a-pipe", [])
    finally:
        os.close(read)


@pytest.mark.parametrize("argv", [("--token", ""), ("--auth-token", "")])
def test_an_empty_value_or_variable_is_an_error(argv: tuple[str, str]) -> None:
    option = TOKEN if argv[0] == "--token" else AUTH_TOKEN
    with pytest.raises(SecretError, match=f"{argv[0]} is empty"):
        resolved(option, *argv)
    with pytest.raises(SecretError, match="the environment variable MCPGEN_TEST_TOKEN is set but empty"):
        resolved(TOKEN, env={"MCPGEN_TEST_TOKEN": ""})


# -- the front doors: bridge and console (device authentication), their own tokens ----------------


def bridge_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bridge_cli.add_arguments(parser)
    return parser.parse_args(["--gateway-port", "0", *argv])


def console_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    console_cli.add_arguments(parser)
    return parser.parse_args(["--gateway-port", "0", *argv])


def accepts(auth: object, device_id: str, token: str) -> bool:
    handshake = Handshake(device_id=device_id, client_id=None, token=token, protocol_version=1)
    return bool(auth.authenticate(handshake))  # type: ignore[attr-defined]


@pytest.mark.parametrize("front", [bridge_args, console_args])
def test_device_tokens_from_a_file_or_the_environment(
    front: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parse_front = front  # bridge_args or console_args
    monkeypatch.delenv("MCPGEN_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("MCPGEN_HMAC_SECRET", raising=False)
    path = private(tmp_path / "tokens", "kitchen=abc\n")
    args = parse_front("--auth-token-file", str(path))  # type: ignore[operator]
    assert usage_error(args) is None
    auth = device_authenticator(args)
    assert isinstance(auth, TokenAuth)
    assert accepts(auth, "kitchen", "abc") and not accepts(auth, "hall", "abc")
    monkeypatch.setenv("MCPGEN_AUTH_TOKEN", "fromenv")
    auth = device_authenticator(parse_front())  # type: ignore[operator]
    assert accepts(auth, "any-device", "fromenv")
    private(path, "hmac-shared-secret\n")
    args = parse_front("--hmac-secret-file", str(path))  # type: ignore[operator]
    auth = device_authenticator(args)
    assert isinstance(auth, HmacAuth)
    assert accepts(auth, "kitchen", HmacAuth("hmac-shared-secret").token_for("kitchen"))
    monkeypatch.delenv("MCPGEN_AUTH_TOKEN")
    monkeypatch.setenv("MCPGEN_HMAC_SECRET", "env-secret")
    auth = device_authenticator(parse_front())  # type: ignore[operator]
    assert accepts(auth, "kitchen", HmacAuth("env-secret").token_for("kitchen"))
    assert capsys.readouterr().err == "", "no warning for the file and environment forms"


@pytest.mark.parametrize("front", [bridge_args, console_args])
def test_a_missing_device_token_file_is_a_usage_error(front: object, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    problem = usage_error(front("--hmac-secret-file", str(missing)))  # type: ignore[operator]
    assert problem is not None and problem.startswith(f"--hmac-secret-file {missing}: no such file")


def run_module(
    module: str, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MCPGEN_") or k in ("MCPGEN_PURE_PYTHON", "MCPGEN_EXPECT_COMPILED")
    }
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("module", ["mcpgen.runtime.bridge", "mcpgen.runtime.console"])
def test_the_commands_stop_with_exit_2_on_a_missing_secret_file(module: str, tmp_path: Path) -> None:
    missing = tmp_path / "device-token"
    proc = run_module(module, "--gateway-port", "0", "--auth-token-file", str(missing))
    assert proc.returncode == 2, proc.stderr
    assert f"--auth-token-file {missing}: no such file" in proc.stderr


@pytest.mark.parametrize("module", ["mcpgen.runtime.bridge", "mcpgen.runtime.console"])
def test_the_commands_refuse_conflicting_or_empty_secrets(module: str, tmp_path: Path) -> None:
    # both given: the warning is not reached, the error says which to keep
    path = private(tmp_path / "s", "x\n")
    proc = run_module(
        module, "--gateway-port", "0", "--hmac-secret", "s3cret", "--hmac-secret-file", str(path)
    )
    assert proc.returncode == 2 and "keep only --hmac-secret-file" in proc.stderr
    # an empty variable is refused (a typo must not start a gateway without authentication)
    proc = run_module(module, "--gateway-port", "0", env={"MCPGEN_HMAC_SECRET": ""})
    assert proc.returncode == 2 and "MCPGEN_HMAC_SECRET is set but empty" in proc.stderr


def test_the_console_page_token_from_a_file_or_the_environment(tmp_path: Path) -> None:
    path = private(tmp_path / "page", "page-token\n")
    args = console_args("--token-file", str(path))
    assert console_cli.resolve_secret(args, console_cli.PAGE_TOKEN) == "page-token"
    args = console_args()
    env = {"MCPGEN_CONSOLE_TOKEN": "e"}
    assert console_cli.resolve_secret(args, console_cli.PAGE_TOKEN, environ=env) == "e"


def test_the_bridge_client_token_from_a_file_or_the_environment(tmp_path: Path) -> None:
    path = private(tmp_path / "client", "client-token\n")
    args = bridge_args("--client-token-file", str(path))
    assert bridge_cli.resolve_secret(args, bridge_cli.CLIENT_TOKEN) == "client-token"
    args = bridge_args()
    env = {"MCPGEN_CLIENT_TOKEN": "e"}
    assert bridge_cli.resolve_secret(args, bridge_cli.CLIENT_TOKEN, environ=env) == "e"


# -- codegen ota and the HMAC minting tool --------------------------------------------------------


def ota_args(*argv: str) -> argparse.Namespace:
    from mcpgen.codegen.run.ota import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["image.bin", *argv])


def test_codegen_ota_device_token_from_a_file_or_the_environment(tmp_path: Path) -> None:
    from mcpgen.codegen.run.ota import DEVICE_TOKEN

    path = private(tmp_path / "token", "ota-token\n")
    assert resolve_secret(ota_args("--token-file", str(path)), DEVICE_TOKEN) == "ota-token"
    env = {"MCPGEN_AUTH_TOKEN": "env-token"}
    assert resolve_secret(ota_args(), DEVICE_TOKEN, environ=env) == "env-token"
    warnings: list[str] = []
    assert resolve_secret(ota_args("--token", "t"), DEVICE_TOKEN, environ={}, warn=warnings.append) == "t"
    assert warnings and "use --token-file FILE or the MCPGEN_AUTH_TOKEN environment variable" in warnings[0]


def test_codegen_ota_names_a_missing_token_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    proc = run_module("mcpgen", "ota", str(tmp_path / "image"), "--token-file", str(missing))
    assert proc.returncode != 0
    assert f"--token-file {missing}: no such file" in proc.stderr, proc.stderr


def test_the_minting_tool_reads_the_secret_from_a_file_or_the_environment(tmp_path: Path) -> None:
    path = private(tmp_path / "secret", "mint-secret\n")
    want = HmacAuth("mint-secret").token_for("kitchen")
    proc = run_module("mcpgen.runtime.auth", "kitchen", "--secret-file", str(path))
    assert proc.returncode == 0 and proc.stdout.strip() == want, proc.stderr
    proc = run_module("mcpgen.runtime.auth", "kitchen", env={"MCPGEN_HMAC_SECRET": "mint-secret"})
    assert proc.returncode == 0 and proc.stdout.strip() == want, proc.stderr
    proc = run_module("mcpgen.runtime.auth", "kitchen", "--secret-file", str(tmp_path / "nope"))
    assert proc.returncode == 2 and f"--secret-file {tmp_path / 'nope'}: no such file" in proc.stderr
    proc = run_module("mcpgen.runtime.auth", "kitchen")
    assert proc.returncode == 2 and "give --secret-file FILE or set" in proc.stderr


def test_help_shows_the_file_form_first() -> None:
    args_help = argparse.ArgumentParser()
    add_secret_argument(args_help, HMAC_SECRET, metavar="SECRET", help="authenticate devices")
    text = args_help.format_help()
    assert text.index("--hmac-secret-file FILE") < text.index("--hmac-secret SECRET")
    assert "MCPGEN_HMAC_SECRET" in text
