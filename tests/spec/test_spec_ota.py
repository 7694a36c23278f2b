"""`device.ota: true`: the built-in user-only tool self.upgrade_firmware (docs/ota.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.spec.canonical import spec_from_canonical
from mcpgen.codegen.spec.loader import load_spec_text
from mcpgen.codegen.spec.mcp_json import list_entry
from mcpgen.codegen.spec.ota import OTA_HANDLER, OTA_TOOL_NAME
from mcpgen.codegen.spec.spec_errors import SpecErrors
from mcpgen.codegen.targets.user_handlers import missing_handlers

BASE = """\
device:
  name: lamp
  version: 1.2.0{ota}
tools:
  - name: self.light.set
    description: Set the light.
    params:
      level: {{type: integer, min: 0, max: 100}}
"""
# The fingerprint of BASE without `ota`, as it was before the key existed (commit 3eb0580):
# specs that do not use OTA keep their fingerprints, so their released histories hold.
BASE_FINGERPRINT = "ddead2744d0ed51b"


def spec(ota: str = "", extra_tool: str = ""):  # type: ignore[no-untyped-def]
    return load_spec_text(BASE.format(ota=ota) + extra_tool, "lamp.yaml")


def test_ota_adds_the_builtin_user_only_tool() -> None:
    s = spec("\n  ota: true")
    assert s.device.ota is True
    assert [t.name for t in s.tools] == ["self.light.set", OTA_TOOL_NAME]
    tool = s.tool(OTA_TOOL_NAME)
    assert tool.user_only and tool.handler == OTA_HANDLER
    params = {p.name: p for p in tool.params}
    assert sorted(params) == ["allow_downgrade", "sha256", "size", "url", "version"]
    assert all(p.required for n, p in params.items() if n != "allow_downgrade")
    # Optional, and sent only when a rollout allows a downgrade (devices refuse one otherwise).
    assert not params["allow_downgrade"].required and params["allow_downgrade"].type == "boolean"
    types = (params["url"].type, params["size"].type, params["version"].type)
    assert types == ("string", "integer", "string")
    pattern = params["sha256"].pattern
    assert pattern is not None and re.search(pattern, "ab" * 32) and not re.search(pattern, "ab" * 31)
    assert not re.search(pattern, "zz" * 32)
    entry = list_entry(tool)
    assert entry["inputSchema"]["required"] == ["sha256", "size", "url", "version"]
    assert entry["annotations"]["audience"] == ["user"]


def test_fingerprint_without_ota_is_unchanged() -> None:
    without, off, on = spec(), spec("\n  ota: false"), spec("\n  ota: true")
    assert without.fingerprint == off.fingerprint
    assert "ota" not in without.canonical()["device"]
    assert on.fingerprint != without.fingerprint
    assert on.canonical()["device"]["ota"] is True


def test_fingerprint_matches_the_one_before_ota_existed() -> None:
    assert spec().fingerprint == BASE_FINGERPRINT


def test_canonical_round_trip_keeps_ota() -> None:
    on = spec("\n  ota: true")
    back = spec_from_canonical(on.canonical())
    assert back.device.ota and back.fingerprint == on.fingerprint


def test_ota_must_be_a_boolean() -> None:
    with pytest.raises(SpecErrors) as exc:
        spec('\n  ota: "yes"')
    text = str(exc.value)
    assert "lamp.yaml:4" in text and "device.ota" in text


def test_a_declared_tool_of_the_builtin_name_clashes() -> None:
    extra = "  - name: self.upgrade_firmware\n    description: Mine.\n"
    with pytest.raises(SpecErrors) as exc:
        spec("\n  ota: true", extra)
    text = str(exc.value)
    assert "lamp.yaml:10" in text and "built-in OTA tool" in text and "rename this tool" in text
    assert spec("", extra).tool(OTA_TOOL_NAME).handler != OTA_HANDLER  # without OTA: an ordinary tool


def test_handlers_file_owes_no_builtin_handler(tmp_path: Path) -> None:
    s = spec("\n  ota: true")
    starter = emit_cpp.starter_handlers(s, "lamp.yaml")
    assert OTA_HANDLER not in starter and "light_set" in starter
    handlers = tmp_path / "lamp_handlers.cpp"
    handlers.write_text(starter, encoding="utf-8")
    assert missing_handlers(s, handlers) == []
    header = emit_cpp.emit(s)[emit_cpp.HEADER_PATH]
    assert "#define MCPGEN_SPEC_OTA 1" in header and OTA_HANDLER in header
    assert "MCPGEN_SPEC_OTA" not in emit_cpp.emit(spec())[emit_cpp.HEADER_PATH]


@pytest.mark.parametrize("target", ["qemu", "xiaozhi"])
def test_targets_without_an_ota_port_refuse_it(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpgen.codegen.cli import main

    path = tmp_path / "lamp.yaml"
    path.write_text(BASE.format(ota="\n  ota: true"), encoding="utf-8")
    assert main(["build", str(path), "--target", target, "-o", str(tmp_path / "out"), "--no-pio"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: device.ota: true" in err and f"the {target} port has none" in err, err
