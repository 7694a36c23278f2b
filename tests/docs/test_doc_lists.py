"""Lists in the docs that other files define, compared so they cannot drift: the README's
apt packages (scripts/dev.sh installs them) and the command tables (the CLI's parser)."""

from __future__ import annotations

import re

from doc_blocks import REPO


def _dev_sh_apt_packages() -> set[str]:
    text = (REPO / "scripts" / "dev.sh").read_text(encoding="utf-8")
    found = re.search(r"^APT_PACKAGES=\((.*?)\)", text, re.M | re.S)
    assert found, "scripts/dev.sh: no APT_PACKAGES=(...)"
    words = re.sub(r"#[^\n]*", " ", found.group(1)).split()
    return set(words)


def _readme_apt_packages() -> set[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"\(Debian packages: (.*?)\), then", text, re.S)
    assert found, "README.md: no `(Debian packages: ...), then` sentence"
    return set(re.findall(r"`([^`]+)`", found.group(1)))


def test_readme_apt_list_is_what_dev_sh_installs() -> None:
    # It lacked binutils, cmake and chromium, which scripts/dev.sh installs.
    dev, readme = _dev_sh_apt_packages(), _readme_apt_packages()
    assert dev == readme, (
        f"only in scripts/dev.sh: {sorted(dev - readme)}; only in README.md: {sorted(readme - dev)}"
    )


def _commands() -> list[str]:
    import argparse

    from mcpgen.codegen.cli import build_parser

    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(sub.choices)


def test_command_tables_name_every_command() -> None:
    # They lacked release, diff and ota.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    cli = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [f"README.md: codegen {c}" for c in _commands() if f"| `codegen {c}" not in readme]
    missing += [f"docs/cli.md: {c}" for c in _commands() if f"| `{c}" not in cli]
    assert not missing, "commands missing from the tables:\n" + "\n".join(missing)
