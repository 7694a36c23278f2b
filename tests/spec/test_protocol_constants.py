"""Constants written in two languages agree: ``mcpgen.protocol``, ``mcpgen.jsonrpc`` and
``mcpgen.mqtt_topics`` (Python) are the source; the device core's copies are read from its
C++ sources and compared."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from mcpgen import jsonrpc, mqtt_topics, protocol
from mcpgen.codegen import resources
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import python as emit_python
from mcpgen.codegen.spec import model
from mcpgen.codegen.spec.rules import tables
from mcpgen.runtime import _purepy
from mcpgen.runtime.bridge import protocol as bridge_protocol
from mcpgen.runtime.core import codec

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


def test_the_spec_check_knows_the_cores_reply_buffer() -> None:
    m = re.search(r"^#define MCPGEN_RESPONSE_BUFFER_SIZE (\d+)$", _core_text("mcp_core.h"), re.M)
    assert m and int(m.group(1)) == model.DEFAULT_RESPONSE_BUFFER


def test_every_end_names_the_same_return_kinds() -> None:
    kinds = set(protocol.RETURN_KINDS)
    m = re.search(r"enum class ReturnKind : uint8_t \{([^}]*)\}", _core_text("mcp_core.h"))
    assert m, "ReturnKind not found in mcp_core.h"
    assert {name.strip() for name in m.group(1).split(",")} == {f"k{k.capitalize()}" for k in kinds}
    assert set(codec.KINDS) - {"raw", "auto"} == kinds  # the runtime's decoders
    assert set(typing.get_args(model.ReturnKind)) == kinds
    assert set(emit_cpp.RETURN_KIND_ENUM) == set(emit_python._KIND_CONST) == kinds
    assert set(tables.SIMPLE_RETURN_KINDS) == kinds - {"object", "content"}


def _cpp_strings(text: str) -> dict[str, str]:
    """``constexpr const char* kName = "value";`` of a header, by name."""
    return dict(re.findall(r'constexpr const char\* (k\w+) = "([^"]*)";', text))


def test_both_mqtt_ports_and_the_runtime_name_the_same_topics() -> None:
    header = _core_text("mqtt_conventions.h")
    names = _cpp_strings(header)
    assert names["kDefaultPrefix"] == mqtt_topics.DEFAULT_PREFIX
    leaves = (mqtt_topics.UP, mqtt_topics.DOWN, mqtt_topics.STATE)
    assert (names["kUp"], names["kDown"], names["kState"]) == leaves
    presence = (mqtt_topics.ONLINE, mqtt_topics.OFFLINE)
    assert (names["kOnline"].encode(), names["kOffline"].encode()) == presence
    # One copy: no port keeps its own (the host port used to, and it had drifted).
    ports = resources.firmware_template() / "ports"
    assert not list(ports.rglob("mqtt_conventions.h"))
    for port in ("host/mqtt_device.cpp", "esp_idf/transport_mqtt.cpp"):
        text = (ports / port).read_text(encoding="utf-8")
        assert '#include "mcpgen/mqtt_conventions.h"' in text, port
        code = re.sub(r"//[^\n]*", "", text)  # comments may name them
        for literal in ('"%s/%s/up"', '"up"', '"online"', '"offline"', "memmem"):
            assert literal not in code, f"{port} keeps its own copy of a rule: {literal}"


def test_the_device_core_and_the_python_side_use_the_same_jsonrpc_codes() -> None:
    m = re.search(r"enum ErrorCode : int \{([^}]*)\}", _core_text("server_impl.h"))
    assert m, "ErrorCode not found in server_impl.h"
    core = {name: int(value) for name, value in re.findall(r"(k\w+) = (-?\d+)", m.group(1))}
    assert core == {
        "kParseError": jsonrpc.PARSE_ERROR,
        "kInvalidRequest": jsonrpc.INVALID_REQUEST,
        "kMethodNotFound": jsonrpc.METHOD_NOT_FOUND,
        "kInvalidParams": jsonrpc.INVALID_PARAMS,
        "kInternalError": jsonrpc.INTERNAL_ERROR,
    }
    for name in ("PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR"):
        assert getattr(bridge_protocol, name) == getattr(jsonrpc, name), name


def test_every_compiled_module_has_its_source_and_declarations() -> None:
    runtime_dir = Path(_purepy.__file__).parent
    for name in _purepy.COMPILED_MODULES:
        source = runtime_dir.joinpath(*name.split(".")[2:])  # mcpgen.runtime.core.wire -> core/wire
        assert source.with_suffix(".py").is_file(), name
        assert source.with_suffix(".pxd").is_file(), name
