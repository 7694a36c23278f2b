"""Secret command-line options (tokens, shared secrets) read from a file or the environment.

A value on a command line is readable by every local user for as long as the process
runs (``ps``, ``/proc/PID/cmdline``). So each secret option of ``codegen bridge``,
``codegen console``, ``codegen ota`` and ``python -m mcpgen.runtime.auth`` comes in three
forms, described by one :class:`SecretOption`:

* ``--NAME-file FILE``: the secret is the file's content, a trailing line end dropped (for
  an option that takes several values, one per line; blank lines and ``#`` lines skipped).
  A file other local users may read works, with a warning (``chmod 600 FILE``).
* the environment variable (``MCPGEN_...``), read when neither form below is given;
* ``--NAME VALUE``: still accepted, with a one-line warning on stderr naming the safer forms.

Precedence: ``--NAME`` or ``--NAME-file`` (giving both is an error), else the environment
variable, else none. A missing, unreadable or empty file, or a variable set but empty, is an
error (:class:`SecretError`) naming the path or the variable: a typo must not quietly start
a gateway without authentication.

This module is shared by the runtime's commands and the generator's, so it imports only the
standard library (importing :mod:`mcpgen.runtime` would load the whole runtime).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional, Union

#: A secret file larger than this is refused (it is not the file you meant).
MAX_SECRET_FILE = 64 * 1024

#: Where :func:`resolve_secrets` notes the options it has resolved (so a second call is a no-op).
_RESOLVED = "_mcpgen_secrets_resolved"

Warn = Callable[[str], None]


class SecretError(ValueError):
    """A secret option that cannot be used: the message names the option, file or variable."""


@dataclass(frozen=True)
class SecretOption:
    """One secret option: ``flag`` (``--hmac-secret``), its environment variable, what it is
    (for messages) and whether it takes several values (a repeatable flag; one per line in
    the file or the variable)."""

    flag: str
    env: str
    what: str
    multiple: bool = False

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def file_flag(self) -> str:
        return f"{self.flag}-file"

    @property
    def file_dest(self) -> str:
        return f"{self.dest}_file"

    @property
    def safer(self) -> str:
        """The forms to use instead of the command-line value, as the messages name them."""
        return f"{self.file_flag} FILE or the {self.env} environment variable"


#: The options the commands share (one environment variable per kind of secret).
AUTH_TOKEN = SecretOption(
    "--auth-token", "MCPGEN_AUTH_TOKEN", "the bearer token(s) devices must present", multiple=True
)
HMAC_SECRET = SecretOption("--hmac-secret", "MCPGEN_HMAC_SECRET", "the HMAC secret of device tokens")


def add_secret_argument(
    group: Union[argparse.ArgumentParser, Any], option: SecretOption, *, metavar: str, help: str
) -> None:
    """Adds ``option.flag`` and ``option.file_flag`` to ``group`` (a parser or an argument
    group); ``help`` says what the secret is for."""
    group.add_argument(
        option.file_flag,
        metavar="FILE",
        help=f"{help}: read from FILE ({'one per line' if option.multiple else 'one line'}; "
        f"chmod 600); default: the {option.env} environment variable",
    )
    group.add_argument(
        option.flag,
        action="append" if option.multiple else "store",
        default=[] if option.multiple else None,
        metavar=metavar,
        help=f"the same on the command line (discouraged: other local users can read it; "
        f"prefer {option.safer})",
    )


def _stderr_warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def read_secret_file(path: str, option: SecretOption, warn: Warn = _stderr_warning) -> list[str]:
    """The values in ``path`` for ``option`` (one, or one per line when ``multiple``)."""
    where = f"{option.file_flag} {path}"
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            data = f.read(MAX_SECRET_FILE + 1)
    except FileNotFoundError:
        raise SecretError(
            f"{where}: no such file; write {option.what} to it (chmod 600 {path}) or give the "
            f"{option.env} environment variable"
        ) from None
    except IsADirectoryError:
        raise SecretError(f"{where}: is a directory; expected a file holding {option.what}") from None
    except OSError as exc:
        raise SecretError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_SECRET_FILE:
        raise SecretError(
            f"{where}: larger than {MAX_SECRET_FILE // 1024} KiB; expected {option.what} "
            "(is it the right file?)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SecretError(f"{where}: not UTF-8 text (byte {exc.start}); expected {option.what}") from None
    values = _values(text, option)
    if not values:
        raise SecretError(f"{where}: the file is empty; expected {option.what}")
    if stat.S_ISREG(info.st_mode) and info.st_mode & stat.S_IROTH:
        warn(
            f"{where} is readable by every local user (mode {stat.S_IMODE(info.st_mode):o}); "
            f"make it private: chmod 600 {path}"
        )
    return values


def _values(text: str, option: SecretOption) -> list[str]:
    if not option.multiple:
        value = text.rstrip("\r\n")  # the line end an editor or `echo` adds
        return [value] if value else []
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def resolve_secret(
    args: argparse.Namespace,
    option: SecretOption,
    *,
    environ: Optional[dict[str, str]] = None,
    warn: Warn = _stderr_warning,
) -> Any:
    """The value of ``option`` from ``args`` (parsed with :func:`add_secret_argument`), its
    file or its environment variable: a string or None, or a list when ``multiple``.
    Stored back in ``args`` under ``option.dest`` (the file option then reads None), so the
    rest of the program reads ``args.<dest>`` as before; a second call returns it."""
    resolved: set[str] = getattr(args, _RESOLVED, set())
    if option.dest in resolved:
        return getattr(args, option.dest)
    env = os.environ if environ is None else environ
    given: Any = getattr(args, option.dest, None)
    path = getattr(args, option.file_dest, None)
    values: list[str]
    on_line = given is not None and not (option.multiple and not given)  # (a repeatable one: [] is none)
    if on_line and path is not None:
        raise SecretError(
            f"{option.flag} and {option.file_flag} are both given: keep only {option.file_flag}"
        )
    if on_line:
        values = list(given) if option.multiple else [given]
        if any(not v for v in values):
            raise SecretError(f"{option.flag} is empty; expected {option.what}")
        warn(f"{option.flag} on the command line can be read by every local user (ps); use {option.safer}")
    elif path is not None:
        values = read_secret_file(path, option, warn)
    elif option.env in env:
        values = _values(env[option.env], option)
        if not values:
            raise SecretError(
                f"the environment variable {option.env} is set but empty; set it to {option.what} or unset it"
            )
    else:
        values = []
    value: Any = values if option.multiple else (values[0] if values else None)
    setattr(args, option.dest, value)
    if hasattr(args, option.file_dest):
        setattr(args, option.file_dest, None)
    setattr(args, _RESOLVED, resolved | {option.dest})
    return value


def resolve_secrets(args: argparse.Namespace, *options: SecretOption, warn: Warn = _stderr_warning) -> None:
    """:func:`resolve_secret` for each of ``options`` (:class:`SecretError` for the first that fails)."""
    for option in options:
        resolve_secret(args, option, warn=warn)


__all__ = [
    "AUTH_TOKEN",
    "HMAC_SECRET",
    "MAX_SECRET_FILE",
    "SecretError",
    "SecretOption",
    "add_secret_argument",
    "read_secret_file",
    "resolve_secret",
    "resolve_secrets",
]
