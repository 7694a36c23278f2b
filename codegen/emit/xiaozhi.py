"""Emits the "xiaozhi" target: glue that registers a spec's tools with the stock
xiaozhi-esp32 firmware's own ``McpServer`` (``main/mcp_server.h``).

``emit(spec)`` returns the generated files under ``xiaozhi/``:

* ``mcpgen_xiaozhi_tools.{h,cc}``: ``void mcpgen_register_tools(McpServer& server)``,
  one ``AddTool`` / ``AddUserOnlyTool`` per spec tool (declared order) with the spec's
  name, description and stock ``Property`` list, plus the user-only tool
  ``self.mcpgen.spec`` reporting the spec fingerprint. Each callback reads the stock
  ``PropertyList`` into typed locals and calls ``mcpgen::xiaozhi::call_tool`` (the port in
  ``firmware_template/ports/xiaozhi``), which runs the typed handler through the mcpgen
  core and converts its ``mcpgen::Result`` into the stock ``ReturnValue``. Only this unit
  includes the stock header (which needs C++ exceptions); the rest of the glue builds
  with ``-fno-exceptions -fno-rtti``.
* ``mcp_tools.{h,cpp}``: the same generated tables as every other target (emit_cpp).
* ``mcpgen.cmake`` (appends the sources and include dir to ``main/CMakeLists.txt``'s
  ``SOURCES`` / ``INCLUDE_DIRS``; refuses with ``FATAL_ERROR`` to be included before that
  file assigns them, and checks afterwards that the component got the sources: see
  docs/xiaozhi.md, "Where the include goes") and ``README.md`` (how to wire it in).

The stock ``Property`` knows boolean, integer (32-bit, optional ``[min, max]``) and string
only. Mapping: boolean -> boolean; integer -> integer (with the stock range when the spec
gives both bounds and they fit 32 bits; other bounds are checked by the core); number ->
string property, parsed with ``strtod`` in the glue and range-checked by the core; string
-> string (enum and max_length checked by the core). Constraints the stock schema cannot
show are appended to the tool description ("Arguments: ..."). Specs the target cannot
serve raise ``XiaozhiSpecError`` naming the tool and parameter.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from mcpgen.codegen import resources
from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit.cpp import RETURN_KIND_ENUM
from mcpgen.codegen.emit.header import generated_header, spec_file_name
from mcpgen.codegen.emit.literals import cpp_comment, cpp_field_name, cpp_string
from mcpgen.codegen.emit.param_text import constraint_phrases
from mcpgen.codegen.emit.templating import TEMPLATES_ROOT, environment
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.model import Param, Spec, Tool

OUT_DIR = "xiaozhi"
TOOLS_HEADER = f"{OUT_DIR}/mcpgen_xiaozhi_tools.h"
TOOLS_SOURCE = f"{OUT_DIR}/mcpgen_xiaozhi_tools.cc"
TABLES_HEADER = f"{OUT_DIR}/mcp_tools.h"
TABLES_SOURCE = f"{OUT_DIR}/mcp_tools.cpp"
CMAKE_FILE = f"{OUT_DIR}/mcpgen.cmake"
README_FILE = f"{OUT_DIR}/README.md"
TEMPLATE_DIR = TEMPLATES_ROOT / "xiaozhi"

# The generated user-only tool whose description and result carry the spec fingerprint
# (the stock server's initialize reply has no `_meta`).
SPEC_TOOL_NAME = "self.mcpgen.spec"
# Its description contains "fingerprint <16 hex>": the runtime can match this.
SPEC_TOOL_FINGERPRINT_RE = re.compile(r"\bfingerprint ([0-9a-f]{16})\b")

# The mcpgen core files (firmware_template/core/mcpgen) copied next to the glue: all of
# them but the mcpgen ports' transport loop, which the stock firmware replaces.
CORE_DIR = resources.firmware_template() / "core" / "mcpgen"
CORE_EXCLUDE: frozenset[str] = frozenset({"session.h", "session.cpp"})


def core_files() -> tuple[str, ...]:
    """Names of the core files the xiaozhi target ships (sorted)."""
    return tuple(
        sorted(
            p.name
            for p in CORE_DIR.iterdir()
            if p.is_file() and p.suffix in (".h", ".cpp") and p.name not in CORE_EXCLUDE
        )
    )


# The port: mcpgen_xiaozhi_port.{h,cc} build with -fno-exceptions -fno-rtti; the stock
# adapter header (included by the generated tools file with main/mcp_server.h) is where
# an error becomes the exception the stock McpServer turns into a JSON-RPC error.
PORT_FILES: tuple[str, ...] = ("mcpgen_xiaozhi_port.h", "mcpgen_xiaozhi_port.cc", "mcpgen_xiaozhi_stock.h")
PORT_DIR = resources.firmware_template() / "ports" / "xiaozhi"


def shipped_sources() -> dict[str, str]:
    """The core files and the port the drop-in directory ships, unchanged from the package's
    firmware tree: path (under ``xiaozhi/``) -> text. The spec's handlers file beside them
    is the user's: ``targets/xiaozhi.py`` copies it."""
    files = {f"{OUT_DIR}/mcpgen/{name}": _package_text(CORE_DIR / name) for name in core_files()}
    files.update({f"{OUT_DIR}/{name}": _package_text(PORT_DIR / name) for name in PORT_FILES})
    return files


def _package_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:  # a damaged install
        raise BuildError(f"cannot read {path}: {exc.strerror or exc}") from exc


# Tools the stock firmware registers itself (main/mcp_server.cc: AddCommonTools and
# AddUserOnlyTools, some only on boards with that hardware). Registered from the board's
# InitializeTools, a spec tool of such a name would be listed twice for the common tools
# (AddCommonTools puts its own in front without checking) and would replace the stock
# user-only one (AddTool drops the later duplicate): so the glue leaves these out unless
# built with MCPGEN_XIAOZHI_REGISTER_STOCK_NAMES=1, and the stock tool serves the name.
STOCK_TOOL_NAMES: frozenset[str] = frozenset(
    {
        "self.get_device_status",
        "self.audio_speaker.set_volume",
        "self.screen.set_brightness",
        "self.screen.set_theme",
        "self.camera.take_photo",
        "self.get_system_info",
        "self.reboot",
        "self.upgrade_firmware",
        "self.screen.get_info",
        "self.screen.snapshot",
        "self.screen.preview_image",
        "self.assets.set_download_url",
    }
)

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


class XiaozhiSpecError(ValueError):
    """The spec uses something the stock xiaozhi McpServer cannot express."""


@dataclass(frozen=True)
class _ParamView:
    name_literal: str
    property: str  # the stock Property(...) expression
    local: str  # statement reading the PropertyList into a typed local
    write: tuple[str, ...]  # statements writing the argument with the JsonWriter `w`


@dataclass(frozen=True)
class _ToolView:
    name_comment: str
    name_literal: str
    description_literal: str
    add: str  # AddTool or AddUserOnlyTool
    returns: str
    returns_enum: str
    params: tuple[_ParamView, ...]
    stock_name: bool  # the stock firmware registers this name: left out by default


def resources_note(spec: Spec) -> str | None:
    """The build-time line saying the spec's resources are not served on this target."""
    if not spec.resources:
        return None
    names = ", ".join(r.name for r in spec.resources)
    return (
        f"note: the stock xiaozhi McpServer has no resources: {names} are not served on the xiaozhi "
        "target (the mcpgen ports and the bridge serve them)"
    )


def handlers_file_name(spec: Spec) -> str:
    """``<spec stem>_handlers.cpp`` (``handlers.cpp`` for a spec not loaded from a file)."""
    if not spec.source or spec.source.startswith("<"):
        return "handlers.cpp"
    return f"{Path(spec.source).stem}_handlers.cpp"


def stock_collisions(spec: Spec) -> list[str]:
    """Spec tool names the stock firmware registers too (left out by the glue: the stock tool serves them)."""
    return [t.name for t in spec.tools if t.name in STOCK_TOOL_NAMES]


def _int32(v: int) -> str:
    return "(-2147483647 - 1)" if v == INT32_MIN else str(v)


def _fits_int32(v: float) -> bool:
    return INT32_MIN <= v <= INT32_MAX


def _stock_int_range(p: Param) -> bool:
    """True when the stock Property can carry the spec's integer range itself."""
    return (
        p.minimum is not None and p.maximum is not None and _fits_int32(p.minimum) and _fits_int32(p.maximum)
    )


def _hint(p: Param) -> str | None:
    """What the stock inputSchema cannot show about a parameter, for the description."""
    bits: list[str] = []
    if p.type == "number":
        bits.append("a number sent as a string")
    # An integer range the stock Property carries itself is not repeated in words.
    bits += constraint_phrases(p, with_range=not (p.type == "integer" and _stock_int_range(p)))
    if not bits:
        return None
    return f"`{p.name}`: " + ", ".join(bits)


def stock_description(tool: Tool) -> str:
    """The tool description registered with the stock server (spec text + argument hints)."""
    hints = [h for h in (_hint(p) for p in tool.params) if h is not None]
    if not hints:
        return tool.description
    return f"{tool.description}\nArguments: " + "; ".join(hints) + "."


def _param_view(tool: Tool, p: Param) -> _ParamView:
    name = cpp_string(p.name, " " * 10)
    local = f"a_{cpp_field_name(p.name)}"
    where = f"tool {tool.name}, parameter {p.name}"
    if p.ref is not None:
        raise XiaozhiSpecError(
            f"{where}: type {p.ref} is an object, which the stock firmware's McpServer properties "
            "(boolean, integer, string) cannot take; give the xiaozhi target scalar parameters"
        )
    if p.type == "boolean":
        if p.default is None:
            prop = f"Property({name}, kPropertyTypeBoolean)"
        else:
            prop = f"Property({name}, kPropertyTypeBoolean, {'true' if p.default else 'false'})"
        read = f"const bool {local} = props[{name}].value<bool>();"
        write = (f"w.key({name});", f"w.boolean({local});")
    elif p.type == "integer":
        if p.default is not None and not _fits_int32(int(p.default)):
            raise XiaozhiSpecError(
                f"{where}: default {p.default} does not fit the stock firmware's 32-bit integer "
                f"property; use a default in [{INT32_MIN}, {INT32_MAX}] for the xiaozhi target"
            )
        if _stock_int_range(p):
            assert p.minimum is not None and p.maximum is not None
            rng = f"{_int32(int(p.minimum))}, {_int32(int(p.maximum))}"
            if p.default is None:
                prop = f"Property({name}, kPropertyTypeInteger, {rng})"
            else:
                prop = f"Property({name}, kPropertyTypeInteger, {_int32(int(p.default))}, {rng})"
        elif p.default is None:
            prop = f"Property({name}, kPropertyTypeInteger)"
        else:
            prop = f"Property({name}, kPropertyTypeInteger, static_cast<int>({_int32(int(p.default))}))"
        read = f"const int {local} = props[{name}].value<int>();"
        write = (f"w.key({name});", f"w.integer({local});")
    elif p.type == "number":
        if p.default is None:
            prop = f"Property({name}, kPropertyTypeString)"
        else:
            d = float(p.default)
            if not math.isfinite(d):
                raise XiaozhiSpecError(f"{where}: non-finite default {p.default!r}")
            prop = f"Property({name}, kPropertyTypeString, std::string({cpp_string(repr(d))}))"
        read = (
            f"const double {local} =\n"
            f"            mcpgen::xiaozhi::parse_number({name}, props[{name}].value<std::string>());"
        )
        write = (f"w.key({name});", f"w.number({local});")
    else:
        if p.default is None:
            prop = f"Property({name}, kPropertyTypeString)"
        else:
            prop = (
                f"Property({name}, kPropertyTypeString, std::string({cpp_string(str(p.default), ' ' * 10)}))"
            )
        read = f"const std::string {local} = props[{name}].value<std::string>();"
        write = (f"w.key({name});", f"w.string({local}.data(), {local}.size());")
    return _ParamView(name_literal=name, property=prop, local=read, write=write)


def _tool_view(tool: Tool) -> _ToolView:
    if tool.name == SPEC_TOOL_NAME:
        raise XiaozhiSpecError(
            f"tool {tool.name}: the xiaozhi target generates a tool of this name (the spec "
            "fingerprint); rename the spec's tool"
        )
    return _ToolView(
        name_comment=cpp_comment(tool.name),
        name_literal=cpp_string(tool.name),
        description_literal=cpp_string(stock_description(tool), " " * 6),
        add="AddUserOnlyTool" if tool.user_only else "AddTool",
        returns=tool.returns.kind,
        returns_enum=RETURN_KIND_ENUM[tool.returns.kind],
        params=tuple(_param_view(tool, p) for p in tool.params),
        stock_name=tool.name in STOCK_TOOL_NAMES,
    )


def spec_tool_description(spec: Spec) -> str:
    return (
        f"mcpgen spec of this firmware: fingerprint {spec.fingerprint}, device {spec.device.name} "
        f'{spec.device.version}. Returns {{"fingerprint", "device", "version"}}.'
    )


def _context(spec: Spec) -> dict[str, object]:
    tools = [_tool_view(t) for t in spec.tools]
    handlers = handlers_file_name(spec)
    sources = [
        *(f"mcpgen/{f}" for f in core_files() if f.endswith(".cpp")),
        "mcp_tools.cpp",
        "mcpgen_xiaozhi_port.cc",
        "mcpgen_xiaozhi_tools.cc",
        handlers,
    ]
    return {
        "spec": spec,
        "tools": tools,
        "device_comment": cpp_comment(spec.device.name),
        "fingerprint": spec.fingerprint,
        "fingerprint_literal": cpp_string(spec.fingerprint),
        "spec_tool_literal": cpp_string(SPEC_TOOL_NAME),
        "spec_tool_description": cpp_string(spec_tool_description(spec), " " * 6),
        "spec_tool_name": SPEC_TOOL_NAME,
        "spec_name": spec_file_name(spec),
        "handlers": handlers,
        "sources": sources,
        "collisions": stock_collisions(spec),
        "events": [e.name for e in spec.events],
        "number_params": [(t.name, p.name) for t in spec.tools for p in t.params if p.type == "number"],
    }


def emit(spec: Spec) -> dict[str, str]:
    """Relative path (under ``xiaozhi/``) -> content of the generated files (deterministic).

    Raises XiaozhiSpecError when the spec cannot be served by the stock McpServer.
    """
    env = environment(TEMPLATE_DIR)
    ctx = _context(spec)
    cpp_banner = generated_header(spec, "//")
    files = {
        TOOLS_HEADER: cpp_banner + env.get_template("mcpgen_xiaozhi_tools.h.j2").render(**ctx),
        TOOLS_SOURCE: cpp_banner + env.get_template("mcpgen_xiaozhi_tools.cc.j2").render(**ctx),
        CMAKE_FILE: generated_header(spec, "#") + env.get_template("mcpgen.cmake.j2").render(**ctx),
        README_FILE: "".join(f"<!-- {line.strip()} -->\n" for line in generated_header(spec, "").splitlines())
        + env.get_template("README.md.j2").render(**ctx),
    }
    tables = emit_cpp.emit(spec)
    files[TABLES_HEADER] = tables[emit_cpp.HEADER_PATH]
    files[TABLES_SOURCE] = tables[emit_cpp.SOURCE_PATH]
    return files
