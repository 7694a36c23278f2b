"""Constants written in two languages agree: ``mcpgen.protocol`` (Python) is the source;
the device core's copies are read from its C++ sources and compared."""

from __future__ import annotations

import re
import typing

from mcpgen import protocol
from mcpgen.codegen import resources
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import python as emit_python
from mcpgen.codegen.spec import model
from mcpgen.codegen.spec.rules import tables
from mcpgen.runtime import codec
from mcpgen.runtime.bridge import protocol as bridge_protocol

CORE = resources.firmware_template() / "core" / "mcpgen"


def _core_text(name: str) -> str:
    return (CORE / name).read_text(encoding="utf-8")


def test_the_device_core_speaks_the_session_protocol_versions() -> None:
    m = re.search(r"kSupportedProtocols\[\]\s*=\s*\{([^}]*)\}", _core_text("mcp_server.cpp"))
    assert m, "kSupportedProtocols not found in mcp_server.cpp"
    assert tuple(re.findall(r'"([^"]+)"', m.group(1))) == protocol.SESSION_PROTOCOL_VERSIONS


def test_every_python_side_reads_the_protocol_versions_from_one_place() -> None:
    assert tables.PROTOCOL_VERSIONS == protocol.SESSION_PROTOCOL_VERSIONS
    assert bridge_protocol.SUPPORTED_VERSIONS == protocol.PROTOCOL_VERSIONS
    assert codec.PROTOCOL_VERSION == model.DEFAULT_PROTOCOL_VERSION == protocol.DEFAULT_PROTOCOL_VERSION
    assert protocol.DEFAULT_PROTOCOL_VERSION in protocol.SESSION_PROTOCOL_VERSIONS


def test_the_core_version_of_the_generator_is_the_cores() -> None:
    m = re.search(r"^#define MCPGEN_CORE_VERSION (\d+)$", _core_text("mcp_core.h"), re.M)
    assert m and int(m.group(1)) == emit_cpp.CORE_VERSION


def test_every_end_names_the_same_return_kinds() -> None:
    kinds = set(protocol.RETURN_KINDS)
    m = re.search(r"enum class ReturnKind : uint8_t \{([^}]*)\}", _core_text("mcp_core.h"))
    assert m, "ReturnKind not found in mcp_core.h"
    assert {name.strip() for name in m.group(1).split(",")} == {f"k{k.capitalize()}" for k in kinds}
    assert set(codec.KINDS) - {"raw", "auto"} == kinds  # the runtime's decoders
    assert set(typing.get_args(model.ReturnKind)) == kinds
    assert set(emit_cpp.RETURN_KIND_ENUM) == set(emit_python._KIND_CONST) == kinds
    assert set(tables.SIMPLE_RETURN_KINDS) == kinds - {"object"}
