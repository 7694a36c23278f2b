"""``!secret NAME``: a value of the spec kept out of the spec (ESPHome's convention).

A ``firmware:`` setting may be written ``wifi_password: !secret wifi_password``. The value is
looked up, in this order:

1. the environment variable ``MCPGEN_SECRET_<NAME>`` (NAME upper-cased, every character
   that is not a letter or digit made ``_``: ``wifi-password`` -> ``MCPGEN_SECRET_WIFI_PASSWORD``),
   so CI can inject it without a file;
2. ``secrets.yaml`` beside the spec: a flat mapping ``name: value``, kept out of version
   control (``codegen new`` prints the ``.gitignore`` line).

The value never reaches a generated source: it is not in the fingerprint, the tables or the
docs; the ESP32 targets write it to ``sdkconfig.defaults`` only, and say so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

import yaml

from mcpgen.codegen.spec.yaml_source import YamlSyntaxError, compose

SECRETS_FILE = "secrets.yaml"
ENV_PREFIX = "MCPGEN_SECRET_"


def env_name(name: str) -> str:
    """The environment variable that supplies secret ``name``."""
    return ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


class SecretsFileError(ValueError):
    """``secrets.yaml`` exists but is not a mapping of names to scalar values."""


class Secrets:
    """The secrets of one spec: the environment, then ``secrets.yaml`` in ``directory``
    (read once, on the first look-up; None: no file is consulted)."""

    def __init__(self, directory: Optional[Path], environ: Optional[Mapping[str, str]] = None) -> None:
        self.path = Path(directory) / SECRETS_FILE if directory is not None else None
        self.environ = os.environ if environ is None else environ
        self._file: Optional[dict[str, str]] = None

    def where(self, name: str) -> str:
        """Where ``name`` was looked for, for a message."""
        places = [f"the environment variable {env_name(name)}"]
        if self.path is not None:
            places.append(str(self.path))
        return " and ".join(places)

    def _load_file(self) -> dict[str, str]:
        if self._file is None:
            self._file = self._read_file()  # a bad file raises on every look-up, not just the first
        return self._file

    def _read_file(self) -> dict[str, str]:
        found: dict[str, str] = {}
        if self.path is None or not self.path.is_file():
            return found
        try:
            root = compose(self.path.read_text(encoding="utf-8-sig"))
        except YamlSyntaxError as exc:
            raise SecretsFileError(f"{self.path}:{exc.line}:{exc.column}: {exc.message}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SecretsFileError(f"{self.path}: cannot read it: {exc}") from None
        if root is None:
            return found
        if not isinstance(root, yaml.MappingNode):
            raise SecretsFileError(f"{self.path}: expected a mapping of `name: value` lines")
        for key, value in root.value:
            if not isinstance(key, yaml.ScalarNode) or not isinstance(value, yaml.ScalarNode):
                raise SecretsFileError(
                    f"{self.path}:{key.start_mark.line + 1}: expected `name: value` "
                    "with a plain value (no list or mapping)"
                )
            found[str(key.value)] = str(value.value)  # as written: 0123 stays "0123"
        return found

    def get(self, name: str) -> Optional[str]:
        """The value of secret ``name``, or None when neither place has it."""
        from_env = self.environ.get(env_name(name))
        if from_env is not None:
            return from_env
        return self._load_file().get(name)
