"""A tool added to the spec without a handler: reported before compiling, with the spec
line and the C++ signature; ``--add-missing-handlers`` appends stubs and keeps the rest."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from cli_testlib import NEW_TOOL, codegen, copy_spec, line_of

SIGNATURE = "mcpgen::Result fan_set_speed(const FanSetSpeedArgs& args, mcpgen::Context& ctx)"


def _needs(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")


@pytest.mark.parametrize(
    ("target", "tool"),
    [("host", "g++"), ("qemu", "arm-none-eabi-g++"), ("esp32", None), ("xiaozhi", None)],
)
def test_missing_handler_is_reported_before_compiling(tmp_path: Path, target: str, tool: str | None) -> None:
    if tool:
        _needs(tool)
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    before = handlers.read_bytes()
    out = tmp_path / "out"
    extra = ["--no-pio"] if target == "esp32" else []
    proc = codegen("build", str(spec), "--target", target, "-o", str(out), *extra, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = line_of(spec, "self.fan.set_speed")
    assert f"desk_lamp.yaml:{line}:" in proc.stderr
    assert "tool `self.fan.set_speed` has no handler" in proc.stderr
    assert SIGNATURE in proc.stderr
    assert f"--target {target} --add-missing-handlers" in proc.stderr
    assert "Traceback" not in proc.stderr and "undefined reference" not in proc.stderr
    assert "compiling" not in proc.stdout.lower(), "nothing may be compiled"
    assert not list(out.rglob("*.o")) and not list(out.rglob("*.elf"))
    assert handlers.read_bytes() == before, "the check never edits the handlers file"


def test_generate_warns_about_a_missing_handler_but_succeeds(tmp_path: Path) -> None:
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    proc = codegen("generate", str(spec), "-o", str(tmp_path / "gen"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and SIGNATURE in proc.stderr


def test_add_missing_handlers_appends_a_stub_and_the_build_links(tmp_path: Path) -> None:
    _needs("g++")
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    before = handlers.read_bytes()
    proc = codegen(
        "build",
        str(spec),
        "--target",
        "host",
        "-o",
        str(tmp_path / "out"),
        "--no-compile-bindings",
        "--add-missing-handlers",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "added a stub for self.fan.set_speed" in proc.stdout
    counts = re.findall(r"\[(\d+)/(\d+)\] compiled ", proc.stdout)  # the compile counts its units
    assert counts and counts[-1][0] == counts[-1][1] and int(counts[-1][1]) >= 8, proc.stdout
    after = handlers.read_bytes()
    assert after.startswith(before), "the user's code is kept byte for byte"
    added = after[len(before) :].decode()
    assert "fan_set_speed([[maybe_unused]] const FanSetSpeedArgs& args" in added
    assert 'Result::Error("self.fan.set_speed is not implemented yet")' in added
    assert "light_set_rgb" not in added, "only the new tool gets a stub"
    assert (tmp_path / "out/firmware/build/desk_lamp-sim").is_file()

    # Nothing missing any more: a second run adds nothing.
    again = codegen(
        "build",
        str(spec),
        "--target",
        "host",
        "-o",
        str(tmp_path / "out"),
        "--no-compile-bindings",
        "--add-missing-handlers",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert "every tool has a handler" in again.stdout
    assert handlers.read_bytes() == after


def test_a_handler_only_named_in_a_comment_does_not_count(tmp_path: Path) -> None:
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    handlers.write_text(handlers.read_text() + "\n// TODO fan_set_speed(const FanSetSpeedArgs& a)\n")
    proc = codegen("build", str(spec), "--target", "xiaozhi", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 1 and SIGNATURE in proc.stderr


def test_a_handler_in_an_included_file_counts(tmp_path: Path) -> None:
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    (tmp_path / "fan.inc").write_text(
        "namespace tools {\nmcpgen::Result fan_set_speed(const FanSetSpeedArgs& args, mcpgen::Context&) {\n"
        "  return mcpgen::Result::Bool(args.rpm >= 0);\n}\n}  // namespace tools\n"
    )
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    handlers.write_text(handlers.read_text() + '\n#include "fan.inc"\n')
    proc = codegen("build", str(spec), "--target", "xiaozhi", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_the_check_can_be_left_to_the_linker(tmp_path: Path) -> None:
    # A handler the pattern cannot see (defined through a macro): the env var skips the check.
    spec = copy_spec(tmp_path, extra_yaml=NEW_TOOL)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    handlers.write_text(
        handlers.read_text()
        + (
            "\n#define MCPGEN_HANDLER(fn, Args) mcpgen::Result fn(const Args& args, mcpgen::Context&)\n"
            "namespace tools {\nMCPGEN_HANDLER(fan_set_speed, FanSetSpeedArgs) {\n"
            "  return mcpgen::Result::Bool(args.rpm > 0);\n}\n}  // namespace tools\n"
        )
    )
    out = str(tmp_path / "out")
    assert codegen("build", str(spec), "--target", "xiaozhi", "-o", out, cwd=tmp_path).returncode == 1
    env = dict(os.environ, MCPGEN_NO_HANDLER_CHECK="1")
    proc = codegen("build", str(spec), "--target", "xiaozhi", "-o", out, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr


TIMER_TOOL = """  - name: self.timer.set
    description: Switch the lamp off after a number of minutes (0 cancels the timer).
    params:
      minutes: {type: integer, min: 0, max: 720}
    returns: integer

"""


def _without_timer_tool(tmp_path: Path) -> Path:
    spec = copy_spec(tmp_path)
    text = spec.read_text(encoding="utf-8")
    assert TIMER_TOOL in text
    # the lamp's prompt names the timer tool (a located spec error of its own): it goes too
    prompts = re.search(r"^prompts:\n.*?(?=^tools:)", text, re.S | re.M)
    assert prompts is not None
    text = text.replace(prompts.group(0), "")
    spec.write_text(text.replace(TIMER_TOOL, ""), encoding="utf-8")
    return spec


@pytest.mark.parametrize(("target", "tool"), [("host", "g++"), ("xiaozhi", None)])
def test_removed_tool_leaves_an_orphaned_handler_reported_before_compiling(
    tmp_path: Path, target: str, tool: str | None
) -> None:
    # Issue 31, item 18: the handler of a removed tool failed as a raw g++ error
    # ('TimerSetArgs' does not name a type).
    if tool:
        _needs(tool)
    spec = _without_timer_tool(tmp_path)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    handler_line = line_of(handlers, "mcpgen::Result timer_set(")
    out = tmp_path / "out"
    proc = codegen(
        "build", str(spec), "--target", target, "-o", str(out), "--no-compile-bindings", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    where = f"desk_lamp_handlers.cpp:{handler_line}"
    assert f"{where}: handler `timer_set` has no tool in the spec" in proc.stderr
    assert "TimerSetArgs" in proc.stderr
    assert "does not name a type" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    assert not list(out.rglob("*.o"))


def test_orphaned_handler_names_its_tool_from_the_stub_comment(tmp_path: Path) -> None:
    from mcpgen.codegen.spec.loader import load_spec
    from mcpgen.codegen.targets import user_handlers as handlers_mod

    spec_path = copy_spec(tmp_path)
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    with handlers.open("a", encoding="utf-8") as f:
        f.write(
            "\nnamespace tools {\n\n/* a block comment\n   over two lines */\n// self.get_status\n"
            "mcpgen::Result get_status([[maybe_unused]] const GetStatusArgs& args, mcpgen::Context&) {\n"
            "  return mcpgen::Result::None();\n}\n\n"
            "struct HelperArgs { int x; };\nint helper(const HelperArgs& a) { return a.x; }\n"
            "}  // namespace tools\n"
        )
    spec = load_spec(spec_path)
    (orphan,) = handlers_mod.orphaned_handlers(spec, handlers)
    assert (orphan.handler, orphan.struct, orphan.tool) == ("get_status", "GetStatusArgs", "self.get_status")
    assert orphan.line == line_of(handlers, "mcpgen::Result get_status(")
    removed = r"tool `self.get_status` was removed or renamed"
    with pytest.raises(handlers_mod.OrphanedHandlersError, match=removed):
        handlers_mod.check_handlers(spec, spec_path)
    # A renamed tool is a missing handler and an orphan: one error names both.
    (tmp_path / "renamed").mkdir()
    renamed = _without_timer_tool(tmp_path / "renamed")
    renamed.write_text(renamed.read_text(encoding="utf-8") + NEW_TOOL, encoding="utf-8")
    with pytest.raises(handlers_mod.MissingHandlersError) as info:
        handlers_mod.check_handlers(load_spec(renamed), renamed)
    assert [m.tool for m in info.value.missing] == ["self.fan.set_speed"]
    assert [o.handler for o in info.value.orphans] == ["timer_set"]
    assert "handler `timer_set` has no tool in the spec" in str(info.value)


@pytest.mark.parametrize(("target", "tool"), [("host", "g++"), ("xiaozhi", None)])
def test_renamed_parameter_is_reported_at_the_handler_line_before_compiling(
    tmp_path: Path, target: str, tool: str | None
) -> None:
    # Issue 43: `minutes` renamed to `duration` surfaced as g++'s
    # "'const struct TimerSetArgs' has no member named 'minutes'".
    if tool:
        _needs(tool)
    spec = copy_spec(tmp_path)
    text = spec.read_text(encoding="utf-8")
    old = "      minutes: {type: integer, min: 0, max: 720}"
    assert old in text
    spec.write_text(text.replace(old, "      duration: {type: integer, min: 0, max: 720}"), encoding="utf-8")
    handlers = tmp_path / "desk_lamp_handlers.cpp"
    read_line = line_of(handlers, "g_lamp.timer_minutes = args.minutes;")
    out = tmp_path / "out"
    proc = codegen(
        "build", str(spec), "--target", target, "-o", str(out), "--no-compile-bindings", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        f"desk_lamp_handlers.cpp:{read_line}: handler `timer_set` reads `args.minutes`, "
        "which `TimerSetArgs` no longer has" in proc.stderr
    ), proc.stderr
    assert "parameter `minutes` of tool `self.timer.set` is now `duration`" in proc.stderr
    assert "read `args.duration` instead of `args.minutes`" in proc.stderr
    assert "has no member named" not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr
    assert not list(out.rglob("*.o"))


def test_a_removed_parameter_names_the_ones_left(tmp_path: Path) -> None:
    from mcpgen.codegen.spec.loader import load_spec
    from mcpgen.codegen.targets import user_handlers as handlers_mod

    spec_path = copy_spec(tmp_path)
    text = spec_path.read_text(encoding="utf-8")
    spec_path.write_text(
        text.replace("      speed: {type: number, min: 0.1, max: 10, default: 1.0}\n", ""), encoding="utf-8"
    )
    (stale,) = handlers_mod.stale_members(load_spec(spec_path), tmp_path / "desk_lamp_handlers.cpp")
    assert (stale.handler, stale.member, stale.renamed_to) == ("light_set_effect", "speed", "")
    assert "its parameters: `effect`" in stale.format() and "put `speed` back in the spec" in stale.format()
