"""The C++ emitter and the host build driver: determinism, escaping, starter handlers,
incremental builds, and a spec change breaking a handler's compile."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from device_sim_driver import StdioSim
from device_testlib import DEFAULT_SPEC, LAMP_SPEC, copy_spec

from mcpgen.codegen.emit import cpp as emit_cpp
from mcpgen.codegen.emit import literals
from mcpgen.codegen.emit.header import generated_header
from mcpgen.codegen.errors import BuildError
from mcpgen.codegen.spec.loader import load_spec
from mcpgen.codegen.spec.mcp_json import list_entry_json
from mcpgen.codegen.targets.host import build_host


def test_emit_is_deterministic_and_has_banner_and_version_check() -> None:
    spec = load_spec(DEFAULT_SPEC)
    first = emit_cpp.emit(spec)
    second = emit_cpp.emit(load_spec(DEFAULT_SPEC))
    assert first == second
    assert sorted(first) == ["firmware/generated/mcp_tools.cpp", "firmware/generated/mcp_tools.h"]
    banner = generated_header(spec, "//")
    for text in first.values():
        assert text.startswith(banner)
        assert spec.fingerprint in text.splitlines()[0]
    header = first["firmware/generated/mcp_tools.h"]
    assert f"#if MCPGEN_CORE_VERSION != {emit_cpp.CORE_VERSION}\n" in header
    assert (
        f'#error "mcp_tools.h was generated for mcpgen core version {emit_cpp.CORE_VERSION}; '
        'rebuild with codegen build SPEC --target TARGET"' in header
    )
    assert "struct AudioSpeakerSetVolumeArgs {\n  int64_t volume;" in header
    assert (
        "mcpgen::Result audio_speaker_set_volume(const AudioSpeakerSetVolumeArgs& args, "
        "mcpgen::Context& ctx);" in header
    )
    assert "  bool scroll;" in header and "  double seconds;" in header and "  const char* text;" in header
    assert "extern const mcpgen::SpecDesc kMcpSpec;" in header
    assert f'#define MCPGEN_SPEC_FINGERPRINT "{spec.fingerprint}"' in header
    source = first["firmware/generated/mcp_tools.cpp"]
    assert "const mcpgen::ToolDesc kTools[] = {" in source
    assert "offsetof(AudioSpeakerSetVolumeArgs, volume)" in source
    assert "const mcpgen::SpecDesc kMcpSpec = {" in source
    assert all(len(line) <= 200 for line in source.splitlines()), "long literals are split"


def test_starter_handlers_cover_every_tool() -> None:
    spec = load_spec(DEFAULT_SPEC)
    text = emit_cpp.starter_handlers(spec, "default_device.yaml")
    assert text == emit_cpp.starter_handlers(spec, "default_device.yaml")
    for tool in spec.tools:
        assert f"mcpgen::Result {tool.handler}(" in text
    assert text.count("// TODO") == len(spec.tools)
    assert "default_device.yaml" in text


STRINGS = [
    "",
    "plain",
    'quote " backslash \\ question ??= ??/ trigraphs',
    "tab\tnewline\ncr\rnul-free \x01\x1f\x7f",
    "é ü 漢字 😀 \u2028",
    "8 after octal: \x018 and \x7f9",
    "x" * 500,
]


def test_cpp_string_literals_round_trip_through_the_compiler(tmp_path: Path) -> None:
    body = "\n".join(
        f"  {{ const char s[] = {literals.cpp_string(s)};\n"
        "    fwrite(s, 1, sizeof s - 1, stdout); putchar(0); }"
        for s in STRINGS
    )
    src = tmp_path / "lit.cpp"
    src.write_text(f"#include <stdio.h>\nint main() {{\n{body}\n  return 0;\n}}\n", encoding="utf-8")
    exe = tmp_path / "lit"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, check=True).stdout
    assert out.split(b"\0")[:-1] == [s.encode("utf-8") for s in STRINGS]


def test_cpp_field_names() -> None:
    assert literals.cpp_field_name("volume") == "volume"
    assert literals.cpp_field_name("class") == "class_"
    assert literals.cpp_field_name("max-speed") == "max_speed"
    assert literals.cpp_field_name("2x") == "p_2x"


WEIRD_SPEC = r"""
device:
  name: weird-gadget
  version: "2.0.0-rc.1"
  description: Quotes " and backslash \ and unicode é.
  protocol_version: "2025-06-18"
tools:
  - name: self.echo.text
    title: Echo "text"
    description: "Says \"hi\" with a back\\slash, trigraph ??= ??/ , a tab\t,
      a newline\nand unicode: café 😀 — LONGTAIL."
    params:
      text: {type: string, max_length: 20, default: "say \"hi\" \\ é"}
      mode: {type: string, enum: ["café", "naïve"], default: "café"}
    returns: string
  - name: self.flag
    description: Returns a boolean.
    params:
      on: {type: boolean}
    returns: boolean
  - name: self.count
    description: Counts.
    params:
      n: {type: integer, min: -9223372036854775808, max: 9223372036854775807}
    returns: integer
  - name: self.measure
    description: Measures.
    params:
      x: {type: number, min: -1.5e-7, max: 1.0e+300, default: 0.1}
    returns: number
  - name: self.status
    description: Status object.
    returns:
      type: object
      properties:
        ok: {type: boolean}
        name: {type: string}
        ratio: {type: number}
        inner:
          type: object
          properties:
            level: {type: integer}
        list:
          type: array
          items: {type: integer}
  - name: self.photo
    description: A photo.
    user_only: true
    returns: image
  - name: self.noop
    description: Nothing.
""".replace("LONGTAIL", "LONG " * 40)


@pytest.fixture(scope="module")
def weird_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    spec_dir = tmp_path_factory.mktemp("weird_spec")
    spec_path = spec_dir / "weird.yaml"
    spec_path.write_text(WEIRD_SPEC, encoding="utf-8")
    logs: list[str] = []
    exe = build_host(spec_path, tmp_path_factory.mktemp("build_weird"), log=logs.append)
    return spec_path, exe, logs


def test_starter_handlers_are_written_once_and_compile(weird_build, tmp_path: Path) -> None:
    spec_path, exe, logs = weird_build
    handlers = spec_path.parent / "weird_handlers.cpp"
    assert handlers.exists()
    assert any("starter handlers" in line for line in logs)
    assert exe.name == "weird_gadget-sim"

    spec = load_spec(spec_path)
    sim = StdioSim(exe, tmp_path)
    try:
        init = sim.request("initialize", {"protocolVersion": "2099-01-01"})["result"]
        assert init["protocolVersion"] == "2025-06-18"
        assert init["serverInfo"] == {"name": "weird-gadget", "version": "2.0.0-rc.1"}
        sim.send_line(
            json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"withUserTools": True}})
        )
        line = sim.read_line()
        for tool in spec.tools:  # the C++ literals hold exactly the bytes codegen computed
            assert list_entry_json(tool) in line
        assert [t["name"] for t in json.loads(line)["result"]["tools"]] == [t.name for t in spec.tools]

        # Placeholders of every return kind.
        assert sim.call_text("self.echo.text") == ""
        assert sim.call_text("self.echo.text", {"mode": "naïve", "text": "ünïcödé 10"}) == ""
        assert sim.call_text("self.flag", {"on": True}) == "true"
        assert sim.call_text("self.count", {"n": -9223372036854775808}) == "0"
        assert sim.call_text("self.measure", {"x": 1e300}) == "0.0"
        status = sim.call("self.status")
        assert status["structuredContent"] == {
            "inner": {"level": 0},
            "list": [],
            "name": "",
            "ok": False,
            "ratio": 0.0,
        }
        photo = sim.call("self.photo")["content"][0]
        assert base64.b64decode(photo["data"]).startswith(b"\x89PNG")
        assert sim.call("self.noop") == {"content": [], "isError": False}

        # Rules from the weird spec.
        def err(tool: str, args: dict) -> str:
            result = sim.call(tool, args)
            assert result["isError"] is True, result
            return result["content"][0]["text"]

        assert err("self.echo.text", {"mode": "naive"}) == (
            'invalid argument `mode`: must be one of café, naïve; got "naive"'
        )
        assert err("self.echo.text", {"text": "ü" * 21}) == (
            "invalid argument `text`: must be at most 20 characters, got 21"
        )
        assert err("self.count", {"n": 9223372036854775808}) == (
            "invalid argument `n`: must be <= 9223372036854775807, got 9223372036854775808"
        )
        assert err("self.count", {"n": -9223372036854775809}) == (
            "invalid argument `n`: must be >= -9223372036854775808, got -9223372036854775809"
        )
        assert err("self.measure", {"x": 1e301}) == "invalid argument `x`: must be <= 1e+300, got 1e+301"
        assert err("self.measure", {"x": -1e-6}) == "invalid argument `x`: must be >= -1.5e-07, got -1e-06"
        assert err("self.flag", {}) == "missing required argument `on`"
    finally:
        sim.close()

    # write_once: the user's edits survive the next build.
    edited = handlers.read_text(encoding="utf-8").replace(
        'return mcpgen::Result::Text("");', "return mcpgen::Result::Text(args.mode);", 1
    )
    handlers.write_text(edited, encoding="utf-8")
    logs: list[str] = []
    exe2 = build_host(spec_path, exe.parents[2], log=logs.append)
    assert handlers.read_text(encoding="utf-8") == edited
    assert not any("starter handlers" in line for line in logs)
    assert any("compiling 1 of" in line for line in logs), logs
    sim = StdioSim(exe2, tmp_path / "2")
    try:
        assert sim.call_text("self.echo.text") == "café"  # the enum default, filled in by the core
    finally:
        sim.close()


def test_incremental_rebuilds(tmp_path: Path) -> None:
    spec_path = copy_spec(DEFAULT_SPEC, tmp_path / "spec")
    out = tmp_path / "out"
    logs: list[str] = []
    exe = build_host(spec_path, out, log=logs.append)
    first = [line for line in logs if line.startswith("compiling ") and " units" in line]
    assert len(first) == 1, logs
    done, total = (int(w) for w in first[0].split()[1:4:2])  # "compiling N of M units"
    assert done == total and total >= 9, "a fresh build compiles every unit"
    numbered = [line for line in logs if " compiled " in line]
    assert [line.split()[0] for line in numbered] == [f"[{i}/{done}]" for i in range(1, done + 1)], logs

    logs.clear()
    assert build_host(spec_path, out, log=logs.append) == exe
    assert not any("compil" in line for line in logs), logs
    assert any("up to date" in line for line in logs)

    # A description change regenerates mcp_tools.{h,cpp}: only the units including
    # mcp_tools.h are rebuilt, never the core.
    spec_path.write_text(
        spec_path.read_text(encoding="utf-8").replace("Set the brightness of the screen.", "Set brightness."),
        encoding="utf-8",
    )
    logs.clear()
    build_host(spec_path, out, log=logs.append)
    compiled = sorted(line.split()[-1] for line in logs if " compiled " in line)
    assert compiled == ["default_device_handlers.cpp", "main.cpp", "mcp_tools.cpp", "ota.cpp"], logs
    sim = StdioSim(exe, tmp_path)
    try:
        tools = sim.request("tools/list")["result"]["tools"]
        assert tools[2]["description"] == "Set brightness."
    finally:
        sim.close()


def test_spec_change_breaks_the_handler_compile_with_file_and_line(tmp_path: Path) -> None:
    # Rename the lamp's `r` parameter: the handler still reads args.r.
    spec_path = copy_spec(
        LAMP_SPEC, tmp_path / "spec", lambda t: t.replace("      r: {type", "      red: {type")
    )
    handlers = spec_path.parent / "desk_lamp_handlers.cpp"
    line_no = next(
        i for i, line in enumerate(handlers.read_text(encoding="utf-8").splitlines(), 1) if "args.r;" in line
    )
    with pytest.raises(BuildError) as exc_info:
        build_host(spec_path, tmp_path / "out", log=lambda _: None)
    message = str(exc_info.value)
    assert f"{handlers}:{line_no}:" in message, message
    # located before g++ runs: the handler's line, the old and the new parameter, the fix
    assert "read `args.red` instead of `args.r`" in message, message


def test_removed_tool_leaves_an_undefined_reference_in_the_link(tmp_path: Path) -> None:
    # A new tool without a handler: the link fails naming the missing handler.
    def add_tool(text: str) -> str:
        return text + (
            "\n  - name: self.light.blink\n    description: Blink.\n    params:\n"
            "      times: {type: integer, min: 1, max: 5}\n    returns: boolean\n"
        )

    spec_path = copy_spec(LAMP_SPEC, tmp_path / "spec", add_tool)
    with pytest.raises(BuildError) as exc_info:
        build_host(spec_path, tmp_path / "out", log=lambda _: None)
    assert "light_blink" in str(exc_info.value)
