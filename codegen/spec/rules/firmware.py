"""The ``firmware:`` section: settings of the ESP32 build, each a string or ``!secret NAME``.

    firmware:
      wifi_ssid: my-network
      wifi_password: !secret wifi_password
      backend_url: wss://backend.example/mcp

The keys and the ``MCPGEN_*`` variables they stand for are ``tables.FIRMWARE_KEYS``. A
``!secret`` is resolved here (``codegen.spec.secrets``), so a missing one is an error at its
own line and column like any other, naming where it was looked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import yaml

from mcpgen.codegen.spec.model import FirmwareSetting
from mcpgen.codegen.spec.rules.base import BAD, join_path
from mcpgen.codegen.spec.rules.tables import FIRMWARE_KEYS
from mcpgen.codegen.spec.secrets import Secrets, SecretsFileError, env_name
from mcpgen.codegen.spec.yaml_source import TAG_SECRET

if TYPE_CHECKING:  # the checker imports this module
    from mcpgen.codegen.spec.rules.top import SpecChecker


def spec_directory(source: str) -> Optional[Path]:
    """The folder of ``secrets.yaml``: the spec's own, when the spec is a file."""
    path = Path(source)
    return path.parent if path.is_file() else None


def check_firmware(checker: SpecChecker, node: yaml.Node) -> tuple[FirmwareSetting, ...]:
    """The settings of a ``firmware:`` mapping (an empty one is allowed); errors go to ``checker``."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return ()
    entries = checker.mapping(node, "firmware", allowed=tuple(FIRMWARE_KEYS))
    if entries is None:
        return ()
    secrets = Secrets(spec_directory(checker.file))
    settings = []
    for key, (_key_node, value_node) in entries.items():
        path = join_path("firmware", key)
        if isinstance(value_node, yaml.ScalarNode) and value_node.tag == TAG_SECRET:
            name = str(value_node.value).strip()
            if not name:
                checker.error(value_node, path, "`!secret` needs a name", f"write `{key}: !secret {key}`")
                continue
            try:
                value = secrets.get(name)
            except SecretsFileError as exc:
                checker.error(
                    value_node,
                    path,
                    f"cannot read secret `{name}`: {exc}",
                    "fix the file: one `name: value` per line",
                )
                continue
            if value is None:
                checker.error(
                    value_node,
                    path,
                    f"secret `{name}` not found (looked in {secrets.where(name)})",
                    f"add `{name}: ...` to {secrets.path or 'secrets.yaml beside the spec'} (keep it out of "
                    f"version control), or export {env_name(name)}=...",
                )
                continue
            settings.append(FirmwareSetting(key, FIRMWARE_KEYS[key], value, name, checker.pos(value_node)))
            continue
        text = checker.string(value_node, path, nonempty=False)
        if text is not BAD:
            settings.append(FirmwareSetting(key, FIRMWARE_KEYS[key], text, None, checker.pos(value_node)))
    return tuple(settings)
